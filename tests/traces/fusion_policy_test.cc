#include "traces/fusion_policy.h"

#include <gtest/gtest.h>

namespace autotune {
namespace {

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
  std::vector<int> first = {0, 3};
  EXPECT_EQ(gate.Admit(first), (std::vector<int>{3}));
  std::vector<int> second = {2};
  EXPECT_EQ(gate.Admit(second), (std::vector<int>{2}));
  std::vector<int> third = {1};
  EXPECT_EQ(gate.Admit(third), (std::vector<int>{0, 1}));
  gate.Reset();
  EXPECT_TRUE(gate.Admit(third).empty());
}

TEST(FusionPolicy, AllgatherOccupiesGatheredBytes) {
  TensorSpec t;
  t.shape = {8};
  t.op = Op::kAllgather;
  EXPECT_EQ(FusionBytes(t, 4), 8 * 4 * 4);
  t.op = Op::kAllreduce;
  EXPECT_EQ(FusionBytes(t, 4), 8 * 4);
}

}  // namespace
}  // namespace autotune
