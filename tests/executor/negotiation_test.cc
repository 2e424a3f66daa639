// Negotiation bookkeeping with an in-process channel: one thread per emulated rank, the
// channel's collectives meet at a barrier.
#include "executor/negotiation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <barrier>
#include <memory>
#include <random>
#include <thread>
#include <vector>

namespace autotune::executor {
namespace {

TEST(MessageTableTest, CompletesWhenEveryRankRequested) {
  MessageTable table(3, 5);
  std::vector<int> done;
  ASSERT_TRUE(table.Add(0, std::vector<int>{1, 4}, &done).ok());
  ASSERT_TRUE(table.Add(1, std::vector<int>{4}, &done).ok());
  EXPECT_TRUE(done.empty());
  ASSERT_TRUE(table.Add(2, std::vector<int>{4, 1}, &done).ok());
  EXPECT_EQ(done, std::vector<int>{4});  // 1 still misses rank 1
  ASSERT_TRUE(table.Add(1, std::vector<int>{1}, &done).ok());
  EXPECT_EQ(done, (std::vector<int>{4, 1}));
}

TEST(MessageTableTest, RejectsDuplicatesAndBadIndices) {
  MessageTable table(2, 4);
  std::vector<int> done;
  ASSERT_TRUE(table.Add(0, std::vector<int>{2}, &done).ok());
  EXPECT_FALSE(table.Add(0, std::vector<int>{2}, &done).ok());
  EXPECT_FALSE(table.Add(1, std::vector<int>{4}, &done).ok());
  table.Reset();
  EXPECT_TRUE(table.Add(0, std::vector<int>{2}, &done).ok());
}

struct Hub {
  explicit Hub(int n) : size(n), sync(n), bits(n), lists(n) {}
  int size;
  std::barrier<> sync;
  std::vector<std::vector<uint64_t>> bits;
  std::vector<std::vector<int>> lists;
  std::vector<int> broadcast;
  int and_calls = 0, gather_calls = 0;  // counted by rank 0
};

class FakeChannel : public ControlChannel {
 public:
  FakeChannel(Hub* hub, int rank) : hub_(hub), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return hub_->size; }
  Status AndBits(std::vector<uint64_t>* bits) override {
    hub_->bits[rank_] = *bits;
    hub_->sync.arrive_and_wait();
    for (int r = 0; r < hub_->size; ++r) {
      for (size_t i = 0; i < bits->size(); ++i) (*bits)[i] &= hub_->bits[r][i];
    }
    if (rank_ == 0) ++hub_->and_calls;
    hub_->sync.arrive_and_wait();
    return Status::Ok();
  }
  Status GatherLists(std::span<const int> mine, std::vector<std::vector<int>>* all) override {
    hub_->lists[rank_].assign(mine.begin(), mine.end());
    hub_->sync.arrive_and_wait();
    all->clear();
    if (rank_ == 0) {
      *all = hub_->lists;
      ++hub_->gather_calls;
    }
    hub_->sync.arrive_and_wait();
    return Status::Ok();
  }
  Status BroadcastList(std::vector<int>* list) override {
    if (rank_ == 0) hub_->broadcast = *list;
    hub_->sync.arrive_and_wait();
    *list = hub_->broadcast;
    hub_->sync.arrive_and_wait();
    return Status::Ok();
  }

 private:
  Hub* hub_;
  int rank_;
};

// offer[step][rank][t] = cycle at which rank offers tensor t in that step.
using Schedule = std::vector<std::vector<std::vector<int>>>;

struct Observed {
  // responded[step][t] = cycle at which tensor t was agreed (same on every rank), -1 never.
  std::vector<std::vector<int>> responded;
  std::vector<int> hits_per_step;
  bool consistent = true;  // every rank saw the same responses
};

Observed RunRanks(const Schedule& schedule, int tensors, int capacity, int cycles_per_step,
                  Hub* hub) {
  const int ranks = static_cast<int>(schedule[0].size());
  const int steps = static_cast<int>(schedule.size());
  std::vector<std::vector<std::vector<int>>> seen(  // [rank][step] -> cycle per tensor
      ranks, std::vector<std::vector<int>>(steps, std::vector<int>(tensors, -1)));
  std::vector<std::vector<int>> hits(ranks, std::vector<int>(steps, 0));
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      FakeChannel channel(hub, r);
      Negotiator negotiator(tensors, capacity, &channel);
      for (int s = 0; s < steps; ++s) {
        negotiator.BeginStep();
        for (int c = 0; c < cycles_per_step; ++c) {
          std::vector<int> ready;
          for (int t = 0; t < tensors; ++t) {
            if (schedule[s][r][t] == c) ready.push_back(t);
          }
          CycleOutcome out;
          EXPECT_TRUE(negotiator.Cycle(ready, &out).ok());
          EXPECT_TRUE(std::is_sorted(out.responses.begin(), out.responses.end()));
          for (int t : out.responses) {
            EXPECT_EQ(seen[r][s][t], -1) << "tensor " << t << " agreed twice";
            seen[r][s][t] = c;
          }
          hits[r][s] += out.cache_hits;
        }
        EXPECT_EQ(negotiator.pending(), 0);
      }
    });
  }
  for (auto& t : threads) t.join();
  Observed o;
  o.responded = seen[0];
  o.hits_per_step = hits[0];
  for (int r = 1; r < ranks; ++r) o.consistent = o.consistent && seen[r] == seen[0];
  return o;
}

Schedule RandomSchedule(int steps, int ranks, int tensors, int spread, unsigned seed) {
  std::mt19937 rng(seed);
  Schedule s(steps, std::vector<std::vector<int>>(ranks, std::vector<int>(tensors)));
  for (auto& step : s) {
    for (auto& rank : step) {
      for (int t = 0; t < tensors; ++t) {
        rank[t] = t / 4 + static_cast<int>(rng() % spread);  // ready order with jitter
      }
    }
  }
  return s;
}

int LastOffer(const Schedule& s, int step, int t) {
  int last = 0;
  for (const auto& rank : s[step]) last = std::max(last, rank[t]);
  return last;
}

TEST(NegotiatorTest, WithoutCacheEveryTensorIsAgreedWhenTheLastRankOffersIt) {
  const int ranks = 4, tensors = 24, steps = 2;
  Schedule s = RandomSchedule(steps, ranks, tensors, 5, 1);
  Hub hub(ranks);
  Observed o = RunRanks(s, tensors, /*capacity=*/0, 20, &hub);
  EXPECT_TRUE(o.consistent);
  for (int step = 0; step < steps; ++step) {
    EXPECT_EQ(o.hits_per_step[step], 0);
    for (int t = 0; t < tensors; ++t) EXPECT_EQ(o.responded[step][t], LastOffer(s, step, t));
  }
  EXPECT_EQ(hub.and_calls, 0);
  EXPECT_EQ(hub.gather_calls, steps * 20);  // a coordinator round every cycle
}

TEST(NegotiatorTest, CachedTensorsAreAgreedByBitsWithoutCoordinator) {
  const int ranks = 4, tensors = 24, steps = 3;
  Schedule s = RandomSchedule(steps, ranks, tensors, 5, 2);
  Hub hub(ranks);
  Observed o = RunRanks(s, tensors, /*capacity=*/64, 20, &hub);
  EXPECT_TRUE(o.consistent);
  EXPECT_EQ(o.hits_per_step[0], 0);
  EXPECT_EQ(o.hits_per_step[1], tensors);
  EXPECT_EQ(o.hits_per_step[2], tensors);
  for (int step = 0; step < steps; ++step) {
    for (int t = 0; t < tensors; ++t) EXPECT_EQ(o.responded[step][t], LastOffer(s, step, t));
  }
  // Coordinator rounds only in the first step (after it, every tensor is cached).
  EXPECT_LE(hub.gather_calls, 20);
  EXPECT_EQ(hub.and_calls, steps * 20);
}

TEST(NegotiatorTest, SmallCacheEvictsWithoutLosingOrDuplicatingTensors) {
  const int ranks = 3, tensors = 30, steps = 4;
  Schedule s = RandomSchedule(steps, ranks, tensors, 7, 3);
  Hub hub(ranks);
  Observed o = RunRanks(s, tensors, /*capacity=*/5, 40, &hub);
  EXPECT_TRUE(o.consistent);
  for (int step = 0; step < steps; ++step) {
    for (int t = 0; t < tensors; ++t) {
      EXPECT_GE(o.responded[step][t], LastOffer(s, step, t)) << "step " << step << " t " << t;
      EXPECT_NE(o.responded[step][t], -1);
    }
  }
}

}  // namespace
}  // namespace autotune::executor
