// The fusion engine on 4 ranks: reduced and gathered values equal the expected ones for
// every combination of hierarchical on/off x cache on/off x threshold 0/small/large x
// groups 0/3, and the recorded collectives respect the fusion policy. Run it plain (one
// node) and with AUTOTUNE_RANKS_PER_NODE=2 (2 pseudo-nodes x 2 ranks, hierarchical paths
// really cross nodes) and =2:cyclic (ranks not placed by node).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "engine_harness.h"
#include "executor/dtype_convert.h"
#include "executor/hierarchical.h"
#include "traces/fusion_policy.h"

namespace autotune::executor {
namespace {

using test_support::AllRanksOk;
using test_support::EngineHarness;
using test_support::MixedWorkload;

TEST(LayoutTest, MatchesTheLaunch) {
  NodeLayout layout;
  LayoutComms comms;
  ASSERT_TRUE(AllRanksOk(DetectLayout(MPI_COMM_WORLD, &layout, &comms)));
  const char* env = std::getenv(kRanksPerNodeEnv);
  if (env != nullptr && *env != '\0') {
    const int k = std::atoi(env);
    EXPECT_EQ(layout.local_size, k);
    EXPECT_EQ(layout.nodes, layout.size / k);
    EXPECT_TRUE(layout.pseudo_nodes);
    EXPECT_EQ(layout.block_placement(), std::string(env).find("cyclic") == std::string::npos);
  } else {
    EXPECT_EQ(layout.nodes, 1);  // the tests run on one machine
    EXPECT_EQ(layout.local_size, layout.size);
  }
  EXPECT_EQ(static_cast<int>(layout.hosts.size()), layout.nodes);
  EXPECT_EQ(layout.world_rank_of[layout.node * layout.local_size + layout.local_rank], layout.rank);
  FreeLayoutComms(&comms);
}

class HierarchicalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(AllRanksOk(DetectLayout(MPI_COMM_WORLD, &layout_, &comms_)));
    ASSERT_TRUE(AllRanksOk(CreateMpiBackend(MPI_COMM_WORLD, comms_, &backend_)));
  }
  void TearDown() override {
    backend_.reset();
    FreeLayoutComms(&comms_);
  }
  NodeLayout layout_;
  LayoutComms comms_;
  std::unique_ptr<Backend> backend_;
};

TEST_F(HierarchicalTest, AllreduceSumsEveryCountAndDType) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kInt64}) {
    for (int64_t count : {0, 1, 2, 3, 4, 5, 7, 8, 9, 1000, 1001, 1003, 65539}) {
      std::vector<char> host(std::max<int64_t>(count, 1) * DTypeSize(dtype));
      for (int64_t e = 0; e < count; ++e) {
        StoreElement(dtype, host.data(), e, PatternValue(layout_.rank, 1, e));
      }
      Status st = HierarchicalAllreduce(backend_.get(), host.data(), count, dtype);
      ASSERT_TRUE(AllRanksOk(st));
      int wrong = 0;
      for (int64_t e = 0; e < count; ++e) {
        wrong += LoadElement(dtype, host.data(), e) != PatternSum(layout_.size, 1, e);
      }
      EXPECT_EQ(wrong, 0) << DTypeName(dtype) << " count " << count;
    }
  }
}

TEST_F(HierarchicalTest, AllgatherPlacesEveryBlockByWorldRank) {
  for (int64_t count : {0, 1, 3, 1000, 4097}) {
    const int64_t block = count * 4;
    std::vector<float> buf(std::max<int64_t>(count * layout_.size, 1), -99.0f);
    std::vector<float> scratch(buf.size());
    for (int64_t e = 0; e < count; ++e) {
      buf[layout_.rank * count + e] = static_cast<float>(PatternValue(layout_.rank, 2, e));
    }
    Status st = HierarchicalAllgather(backend_.get(), layout_, buf.data(), block, scratch.data());
    ASSERT_TRUE(AllRanksOk(st));
    int wrong = 0;
    for (int r = 0; r < layout_.size; ++r) {
      for (int64_t e = 0; e < count; ++e) wrong += buf[r * count + e] != PatternValue(r, 2, e);
    }
    EXPECT_EQ(wrong, 0) << "count " << count;
  }
}

// (hierarchical, cache capacity, threshold MB, groups)
using Combo = std::tuple<bool, int, double, int>;

class EngineComboTest : public ::testing::TestWithParam<Combo> {};

TEST_P(EngineComboTest, ResultsAndFusionFollowTheKnobs) {
  const auto [hierarchical, cache, threshold_mb, groups] = GetParam();
  Knobs knobs;
  knobs.hierarchical_allreduce = hierarchical;
  knobs.hierarchical_allgather = hierarchical;
  knobs.cache_capacity = cache;
  knobs.fusion_threshold_mb = threshold_mb;
  knobs.num_groups = groups;
  knobs.cycle_time_ms = 1.0;
  ASSERT_TRUE(knobs.Validate().ok());
  EngineHarness h;
  ASSERT_TRUE(AllRanksOk(h.Init(MixedWorkload(), knobs)));
  const int n = static_cast<int>(h.workload.tensors.size());
  const int64_t threshold = knobs.threshold_bytes();
  int world = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  FusionPolicy policy(h.workload, threshold, groups, world);

  for (int step = 0; step < 3; ++step) {
    PlayedStep played;
    ASSERT_TRUE(AllRanksOk(h.Step(&played))) << "step " << step;
    const EngineStepRecord& rec = played.record;
    std::vector<int> covered(n, 0);
    for (const CollectiveRecord& c : rec.collectives) {
      ASSERT_FALSE(c.tensors.empty());
      for (int t : c.tensors) {
        ++covered[t];
        EXPECT_EQ(h.workload.tensors[t].op, c.op);
        EXPECT_EQ(h.workload.tensors[t].dtype, h.workload.tensors[c.tensors[0]].dtype);
        EXPECT_EQ(policy.group_of(t), policy.group_of(c.tensors[0]));
      }
      if (threshold == 0) EXPECT_EQ(c.tensors.size(), 1u);
      if (c.tensors.size() > 1) EXPECT_LE(c.bytes, threshold);
      EXPECT_EQ(c.algorithm, hierarchical ? Algorithm::kHierarchical : Algorithm::kFlat);
      EXPECT_LE(c.start_us, c.copy_in_end_us);
      EXPECT_LE(c.copy_in_end_us, c.comm_end_us);
      EXPECT_LE(c.comm_end_us, c.end_us);
    }
    for (int t = 0; t < n; ++t) {
      EXPECT_EQ(covered[t], 1) << "tensor " << t;
      EXPECT_GE(rec.tensors[t].done_us, rec.tensors[t].ready_us) << "tensor " << t;
    }
    // Each cycle fused what it released exactly as the shared fusion policy says. (Which
    // tensors share a cycle is timing; this holds whatever it was.) A cycle releases whole
    // groups only, so feeding the released sets in cycle order to a fresh policy releases
    // each one in its own cycle again.
    std::map<int, std::vector<const CollectiveRecord*>> collectives_by_cycle;
    for (const CollectiveRecord& c : rec.collectives) collectives_by_cycle[c.cycle].push_back(&c);
    policy.Reset();
    for (const auto& [cycle, collectives] : collectives_by_cycle) {
      std::vector<int> released;
      for (const CollectiveRecord* c : collectives) {
        released.insert(released.end(), c->tensors.begin(), c->tensors.end());
      }
      const std::vector<FusedCollective> expected = policy.Cycle(released);
      // EXPECT, not ASSERT: every rank must go on to the next step's collectives.
      EXPECT_EQ(collectives.size(), expected.size()) << "cycle " << cycle;
      for (size_t i = 0; i < std::min(expected.size(), collectives.size()); ++i) {
        EXPECT_EQ(collectives[i]->tensors, expected[i].tensors) << "cycle " << cycle;
        EXPECT_EQ(collectives[i]->bytes, expected[i].bytes) << "cycle " << cycle;
      }
    }
    int hits = 0, responses = 0;
    for (const CycleRecord& c : rec.cycles) {
      hits += c.cache_hits;
      responses += c.responses;
    }
    EXPECT_EQ(responses, n);
    // The first step fills the cache; later steps are agreed through it alone.
    EXPECT_EQ(hits, cache > 0 && step > 0 ? n : 0) << "step " << step;
  }
}

std::string ComboName(const ::testing::TestParamInfo<Combo>& info) {
  const bool hierarchical = std::get<0>(info.param);
  const int cache = std::get<1>(info.param);
  const double mb = std::get<2>(info.param);
  const int groups = std::get<3>(info.param);
  const char* threshold = mb == 0 ? "Threshold0" : mb < 1 ? "Threshold64KiB" : "Threshold64MiB";
  return std::string(hierarchical ? "Hierarchical" : "Flat") + (cache ? "Cache" : "NoCache") +
         threshold + "Groups" + std::to_string(groups);
}

INSTANTIATE_TEST_SUITE_P(AllCombinations, EngineComboTest,
                         ::testing::Combine(::testing::Bool(), ::testing::Values(0, 1024),
                                            ::testing::Values(0.0, 0.0625, 64.0),
                                            ::testing::Values(0, 3)),
                         ComboName);

TEST(EngineTest, SmallCacheWithEvictionStillGivesCorrectResults) {
  Knobs knobs;
  knobs.cache_capacity = 3;  // fewer slots than tensors: evictions every step
  knobs.fusion_threshold_mb = 0.0625;
  EngineHarness h;
  ASSERT_TRUE(AllRanksOk(h.Init(MixedWorkload(), knobs)));
  for (int step = 0; step < 3; ++step) {
    PlayedStep played;
    ASSERT_TRUE(AllRanksOk(h.Step(&played))) << "step " << step;
  }
}

}  // namespace
}  // namespace autotune::executor
