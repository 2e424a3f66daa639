// DDP's buckets: the expected buckets below are worked out by hand from torch's rules
// (traces/ddp_buckets.h), on sizes in units of 1/4 MiB so that each step is checkable.
#include "traces/ddp_buckets.h"

#include <gtest/gtest.h>

#include <vector>

namespace autotune {
namespace {

constexpr int64_t kMiB = 1024 * 1024;
using Buckets = std::vector<std::vector<int>>;

// Float32 tensors t0, t1, ... of the given sizes in MiB, listed (ready) in that order.
Workload Sized(const std::vector<double>& mib, DType dtype = DType::kFloat32) {
  Workload w;
  w.name = "sized";
  w.backward_ms = 10;
  for (size_t i = 0; i < mib.size(); ++i) {
    TensorSpec t;
    t.name = "t" + std::to_string(i);
    t.dtype = dtype;
    t.shape = {static_cast<int64_t>(mib[i] * kMiB) / DTypeSize(dtype)};
    t.ready_ms = static_cast<double>(i);
    w.tensors.push_back(t);
  }
  return w;
}

std::vector<Buckets::value_type> Members(const std::vector<FusedCollective>& launched) {
  Buckets out;
  for (const FusedCollective& c : launched) out.push_back(c.tensors);
  return out;
}

// Sizes 0.5, 0.75, 1.5, 0.25, 3 MiB; first bucket 1 MiB, cap 2 MiB.
const std::vector<double> kSizes = {0.5, 0.75, 1.5, 0.25, 3};

TEST(DdpBuckets, ABucketClosesOnceItReachesItsLimitAndNeverSplitsATensor) {
  const Workload w = Sized(kSizes);
  // 0.5 < 1; +0.75 = 1.25 >= 1 closes the first; 1.5, 1.75, then +3 = 4.75 >= 2 closes.
  EXPECT_EQ(AssignDdpBuckets(w, std::vector<int>{0, 1, 2, 3, 4}, 1 * kMiB, 2 * kMiB),
            (Buckets{{0, 1}, {2, 3, 4}}));
  // Exactly reaching the limit closes the bucket (>=, not >).
  EXPECT_EQ(AssignDdpBuckets(Sized({0.5, 0.5, 1, 1, 0.25}), std::vector<int>{0, 1, 2, 3, 4},
                             1 * kMiB, 2 * kMiB),
            (Buckets{{0, 1}, {2, 3}, {4}}));
}

TEST(DdpBuckets, EachDtypeFillsItsOwnBuckets) {
  Workload w = Sized({0.6, 0.6, 0.6});
  w.tensors[1].dtype = DType::kFloat16;
  w.tensors[1].shape = {static_cast<int64_t>(0.6 * kMiB) / 2};
  // float32: 0.6 + 0.6 = 1.2 >= 1 closes {0, 2}; float16's 0.6 is left over, last.
  EXPECT_EQ(AssignDdpBuckets(w, std::vector<int>{0, 1, 2}, 1 * kMiB, 2 * kMiB),
            (Buckets{{0, 2}, {1}}));
}

TEST(DdpBuckets, UpFrontBucketsComeFromTheReverseRegistrationOrderAndLaunchInOrder) {
  // Registration order (no "registration" given): the reverse of the ready order, 4 3 2 1 0.
  // Walk: {4} (3 >= 1, the first limit), {3, 2, 1} (0.25+1.5+0.75 = 2.5 >= 2), {0} left.
  // Reversed, the bucket of the tensors registered first (ready last) goes last.
  DdpBucketPolicy p(Sized(kSizes), 1 * kMiB, 2 * kMiB);
  EXPECT_EQ(p.buckets(), (Buckets{{0}, {3, 2, 1}, {4}}));
  EXPECT_FALSE(p.rebuilt());
  std::vector<FusedCollective> now = p.Ready(std::vector<int>{0});
  ASSERT_EQ(Members(now), (Buckets{{0}}));
  EXPECT_EQ(now[0].bytes, kMiB / 2);
  EXPECT_EQ(now[0].op, Op::kAllreduce);
  EXPECT_TRUE(p.Ready(std::vector<int>{1, 2}).empty());  // tensor 3 is still missing
  EXPECT_EQ(Members(p.Ready(std::vector<int>{3})), (Buckets{{3, 2, 1}}));
  EXPECT_EQ(Members(p.Ready(std::vector<int>{4})), (Buckets{{4}}));
}

TEST(DdpBuckets, RebuiltOnceAfterTheFirstStepFromTheReadyOrder) {
  DdpBucketPolicy p(Sized(kSizes), 1 * kMiB, 2 * kMiB);
  p.Ready(std::vector<int>{0, 1, 2, 3, 4});
  p.EndStep(std::vector<int>{0, 1, 2, 3, 4});
  EXPECT_TRUE(p.rebuilt());
  EXPECT_EQ(p.buckets(), (Buckets{{0, 1}, {2, 3, 4}}));
  // A bucket waits for its predecessors: the second is complete first, both start together.
  EXPECT_TRUE(p.Ready(std::vector<int>{2, 3, 4}).empty());
  EXPECT_TRUE(p.Ready(std::vector<int>{1}).empty());
  std::vector<FusedCollective> both = p.Ready(std::vector<int>{0});
  EXPECT_EQ(Members(both), (Buckets{{0, 1}, {2, 3, 4}}));
  EXPECT_EQ(both[1].bytes, static_cast<int64_t>(4.75 * kMiB));
  // Rebuilt once only: a later step's order changes nothing.
  p.EndStep(std::vector<int>{4, 3, 2, 1, 0});
  EXPECT_EQ(p.buckets(), (Buckets{{0, 1}, {2, 3, 4}}));
}

TEST(DdpBuckets, GivenRegistrationOrderIsUsedUpFront) {
  Workload w = Sized(kSizes);
  const std::vector<int> registration = {2, 0, 4, 1, 3};  // t0 registered 3rd, ...
  for (int i = 0; i < 5; ++i) w.tensors[i].registration = registration[i];
  EXPECT_EQ(RegistrationOrder(w), (std::vector<int>{1, 3, 0, 4, 2}));
  // Walk 1 (0.75, < 1), 3 (1.0 >= 1: closes {1, 3}); 0 (0.5), 4 (3.5 >= 2: {0, 4}); {2} left.
  DdpBucketPolicy p(w, 1 * kMiB, 2 * kMiB);
  EXPECT_EQ(p.buckets(), (Buckets{{2}, {0, 4}, {1, 3}}));
}

TEST(DdpBuckets, DdpReducesGradientsOnly) {
  Workload w = Sized(kSizes);
  EXPECT_TRUE(CheckDdpWorkload(w).ok());
  w.tensors[3].op = Op::kAllgather;
  EXPECT_EQ(CheckDdpWorkload(w).message(),
            "workload sized: tensor t3 is an allgather; DDP allreduces gradients only "
            "(framework ddp)");
}

}  // namespace
}  // namespace autotune
