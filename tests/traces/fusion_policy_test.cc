#include "traces/fusion_policy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "traces/step_schedule.h"

namespace autotune {
namespace {

using fusion_internal::AssignGroups;
using fusion_internal::GroupGate;
using fusion_internal::PackResponses;
using fusion_internal::ReadyTensor;

std::vector<ReadyTensor> Responses(std::vector<int64_t> bytes, std::vector<int> groups = {}) {
  std::vector<ReadyTensor> out;
  for (size_t i = 0; i < bytes.size(); ++i) {
    ReadyTensor r;
    r.tensor = static_cast<int>(i);
    r.bytes = bytes[i];
    r.group = groups.empty() ? -1 : groups[i];
    out.push_back(r);
  }
  return out;
}

TEST(FusionPolicy, ThresholdZeroGivesOneCollectivePerTensor) {
  auto packed = PackResponses(Responses({4, 4, 4}), 0);
  ASSERT_EQ(packed.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(packed[i].tensors, std::vector<int>{i});
}

TEST(FusionPolicy, GreedyConsecutivePackingKeepsOrder) {
  // 4+4 fit in 10, 4 more would be 12 > 10, so a new buffer starts; 12 alone (too big).
  auto packed = PackResponses(Responses({4, 4, 4, 12, 1}), 10);
  ASSERT_EQ(packed.size(), 4u);
  EXPECT_EQ(packed[0].tensors, (std::vector<int>{0, 1}));
  EXPECT_EQ(packed[0].bytes, 8);
  EXPECT_EQ(packed[1].tensors, (std::vector<int>{2}));
  EXPECT_EQ(packed[2].tensors, (std::vector<int>{3}));
  EXPECT_EQ(packed[3].tensors, (std::vector<int>{4}));
}

TEST(FusionPolicy, ExactFitIsAllowed) {
  auto packed = PackResponses(Responses({5, 5}), 10);
  ASSERT_EQ(packed.size(), 1u);
  EXPECT_EQ(packed[0].bytes, 10);
}

TEST(FusionPolicy, NeverMixesGroupsOpsOrDtypes) {
  auto r = Responses({1, 1, 1, 1}, {0, 0, 1, 1});
  r[1].dtype = DType::kFloat64;
  r[3].op = Op::kAllgather;
  auto packed = PackResponses(r, 1 << 20);
  ASSERT_EQ(packed.size(), 4u);
  auto same = Responses({1, 1, 1, 1}, {0, 0, 1, 1});
  auto grouped = PackResponses(same, 1 << 20);
  ASSERT_EQ(grouped.size(), 2u);
  EXPECT_EQ(grouped[0].group, 0);
  EXPECT_EQ(grouped[1].tensors, (std::vector<int>{2, 3}));
}

Workload MakeWorkload(int n) {
  Workload w;
  w.name = "t";
  for (int i = 0; i < n; ++i) {
    TensorSpec t;
    t.name = "t" + std::to_string(i);
    t.shape = {10};
    w.tensors.push_back(t);
  }
  return w;
}

TEST(FusionPolicy, AssignGroupsSplitsContiguously) {
  Workload w = MakeWorkload(10);
  EXPECT_EQ(AssignGroups(w, 0), std::vector<int>(10, -1));
  EXPECT_EQ(AssignGroups(w, 3), (std::vector<int>{0, 0, 0, 0, 1, 1, 1, 2, 2, 2}));
  // More groups than tensors: one tensor per group.
  EXPECT_EQ(AssignGroups(MakeWorkload(2), 5), (std::vector<int>{0, 1}));
}

TEST(FusionPolicy, AssignGroupsUsesExplicitGroups) {
  Workload w = MakeWorkload(3);
  w.tensors[0].group = 1;
  w.tensors[1].group = 0;
  w.tensors[2].group = 1;
  EXPECT_EQ(AssignGroups(w, 2), (std::vector<int>{1, 0, 1}));
}

TEST(FusionPolicy, GroupGateHoldsUntilGroupComplete) {
  GroupGate gate({0, 0, 1, -1});
  std::vector<int> released = {99};
  std::vector<int> first = {0, 3};
  gate.Admit(first, &released);
  EXPECT_EQ(released, (std::vector<int>{3}));
  std::vector<int> second = {2};
  gate.Admit(second, &released);
  EXPECT_EQ(released, (std::vector<int>{2}));
  std::vector<int> third = {1};
  gate.Admit(third, &released);
  EXPECT_EQ(released, (std::vector<int>{0, 1}));
  gate.Reset();
  gate.Admit(third, &released);
  EXPECT_TRUE(released.empty());
}

TEST(FusionPolicy, AllgatherOccupiesGatheredBytes) {
  TensorSpec t;
  t.shape = {8};
  t.op = Op::kAllgather;
  EXPECT_EQ(FusionBytes(t, 4), 8 * 4 * 4);
  t.op = Op::kAllreduce;
  EXPECT_EQ(FusionBytes(t, 4), 8 * 4);
}

// Tensors of 100 bytes each (25 float32), all allreduce, ready in index order.
Workload HundredByteTensors(int n) {
  Workload w = MakeWorkload(n);
  for (TensorSpec& t : w.tensors) t.shape = {25};
  return w;
}

std::vector<std::vector<int>> Members(const std::vector<FusedCollective>& fused) {
  std::vector<std::vector<int>> out;
  for (const FusedCollective& f : fused) out.push_back(f.tensors);
  return out;
}

TEST(FusionPolicy, CycleWithoutGroupsFusesWhatIsReadyInIndexOrder) {
  // 100-byte tensors, threshold 250 bytes: two per buffer, whatever order they came in.
  FusionPolicy policy(HundredByteTensors(6), 250, 0, 4);
  const std::vector<int> first = {4, 1, 0};
  EXPECT_EQ(Members(policy.Cycle(first)), (std::vector<std::vector<int>>{{0, 1}, {4}}));
  EXPECT_TRUE(policy.Cycle(std::vector<int>{}).empty());
  const std::vector<int> second = {5, 3, 2};
  const std::vector<FusedCollective> fused = policy.Cycle(second);
  EXPECT_EQ(Members(fused), (std::vector<std::vector<int>>{{2, 3}, {5}}));
  EXPECT_EQ(fused[0].bytes, 200);
  EXPECT_EQ(fused[0].group, -1);
  EXPECT_EQ(policy.group_of(3), -1);
  EXPECT_EQ(policy.threshold_bytes(), 250);
}

// Real Horovod rounds its fusion threshold up to a multiple of local_size * 8 * 64 bytes
// (Controller::TensorFusionThresholdBytes); worked by hand: 0.50266 MB is 527,077 bytes, on 2
// ranks per node a multiple of 1,024: 515 * 1,024 = 527,360.
TEST(FusionPolicy, RealHorovodRoundsItsThresholdUpByTheLocalSize) {
  EXPECT_EQ(HorovodFusionThresholdBytes(527077, 2), 527360);
  EXPECT_EQ(HorovodFusionThresholdBytes(527077, 4), 528384);  // 258 * 2,048
  EXPECT_EQ(HorovodFusionThresholdBytes(int64_t{128} << 20, 4), int64_t{128} << 20);
  EXPECT_EQ(HorovodFusionThresholdBytes(0, 2), 0);
  EXPECT_EQ(HorovodFusionThresholdBytes(527077, 0), 527077);  // not real Horovod

  // The real MLP's buffer: two 256 KiB weights and three 1 KiB biases (527,360 bytes) fit
  // real Horovod's threshold on 2 ranks per node, not the knob's bytes.
  Workload w;
  w.name = "mlp";
  for (int64_t elements : {65536, 65536, 256, 256, 256}) {
    w.tensors.push_back({.name = "t" + std::to_string(w.tensors.size()), .shape = {elements}});
  }
  Knobs knobs;
  knobs.fusion_threshold_mb = 0.50266;
  ASSERT_EQ(knobs.threshold_bytes(), 527077);
  const std::vector<int> all = {0, 1, 2, 3, 4};
  auto launched = [&](CollectiveRunner runner) {
    std::unique_ptr<StepSchedule> s =
        MakeStepSchedule(w, knobs, Framework::kHorovod, 4, runner, /*local_size=*/2);
    std::vector<int64_t> bytes;
    for (const FusedCollective& c : s->Launch(all)) bytes.push_back(c.bytes);
    return bytes;
  };
  EXPECT_EQ(launched(CollectiveRunner::kHostLibrary), (std::vector<int64_t>{527360}));
  EXPECT_EQ(launched(CollectiveRunner::kExecutor), (std::vector<int64_t>{526336, 1024}));
}

TEST(FusionPolicy, CycleWithGroupsReleasesWholeGroupsOnly) {
  // 2 groups of 3: {0, 1, 2} and {3, 4, 5}; a threshold that fuses a whole group.
  FusionPolicy policy(HundredByteTensors(6), 1000, 2, 4);
  EXPECT_EQ(policy.group_of(2), 0);
  EXPECT_EQ(policy.group_of(3), 1);
  const std::vector<int> first = {0, 3, 1};
  EXPECT_TRUE(policy.Cycle(first).empty());
  const std::vector<int> second = {4, 2};
  std::vector<FusedCollective> fused = policy.Cycle(second);
  EXPECT_EQ(Members(fused), (std::vector<std::vector<int>>{{0, 1, 2}}));
  EXPECT_EQ(fused[0].group, 0);
  EXPECT_EQ(fused[0].bytes, 300);
  const std::vector<int> third = {5};
  fused = policy.Cycle(third);
  EXPECT_EQ(Members(fused), (std::vector<std::vector<int>>{{3, 4, 5}}));
  // A new step forgets what was held: group 1 needs all three members again.
  policy.Reset();
  const std::vector<int> two_of_group_1 = {3, 4};
  EXPECT_TRUE(policy.Cycle(two_of_group_1).empty());
  policy.Reset();
  EXPECT_TRUE(policy.Cycle(third).empty());
}

TEST(FusionPolicy, CycleCountsAllgatherAtItsGatheredSize) {
  // Tensor 1 is an allgather of 100 bytes on 4 ranks: 400 bytes in the buffer, its own
  // collective; the allreduces on either side do not fuse across it.
  Workload w = HundredByteTensors(3);
  w.tensors[1].op = Op::kAllgather;
  FusionPolicy policy(w, 1 << 20, 0, 4);
  const std::vector<int> all = {0, 1, 2};
  const std::vector<FusedCollective> fused = policy.Cycle(all);
  ASSERT_EQ(fused.size(), 3u);
  EXPECT_EQ(fused[1].op, Op::kAllgather);
  EXPECT_EQ(fused[1].bytes, 400);
  EXPECT_EQ(fused[2].bytes, 100);
}

// With groups off the group gate is a pass-through: the policy gives exactly the greedy
// packing of each cycle's tensors in index order, for any sequence of cycles.
TEST(FusionPolicy, WithoutGroupsTheGateChangesNothing) {
  Workload w = MakeWorkload(40);
  for (int i = 0; i < 40; ++i) {
    w.tensors[i].shape = {1 + (i * 37) % 300};
    w.tensors[i].op = i % 9 == 4 ? Op::kAllgather : Op::kAllreduce;
    w.tensors[i].dtype = i % 7 == 3 ? DType::kFloat16 : DType::kFloat32;
  }
  for (int64_t threshold : {int64_t{0}, int64_t{900}, int64_t{1} << 20}) {
    FusionPolicy policy(w, threshold, 0, 3);
    uint32_t state = 12345;
    std::vector<int> order(40);
    for (int i = 0; i < 40; ++i) order[i] = i;
    for (int i = 39; i > 0; --i) {  // a fixed shuffle (linear congruential)
      state = state * 1664525u + 1013904223u;
      std::swap(order[i], order[state % (i + 1)]);
    }
    for (size_t begin = 0; begin < order.size();) {
      const size_t end = std::min(order.size(), begin + 1 + (begin * 7) % 6);
      std::vector<int> cycle(order.begin() + begin, order.begin() + end);
      std::vector<int> sorted = cycle;
      std::sort(sorted.begin(), sorted.end());
      std::vector<ReadyTensor> responses;
      for (int t : sorted) {
        ReadyTensor r;
        r.tensor = t;
        r.op = w.tensors[t].op;
        r.dtype = w.tensors[t].dtype;
        r.bytes = FusionBytes(w.tensors[t], 3);
        responses.push_back(r);
      }
      EXPECT_EQ(Members(policy.Cycle(cycle)), Members(PackResponses(responses, threshold)))
          << "threshold " << threshold << " cycle at " << begin;
      begin = end;
    }
  }
}

}  // namespace
}  // namespace autotune
