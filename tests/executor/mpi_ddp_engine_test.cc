// The executor's DDP engine on 4 ranks, real buffers: the buckets it runs, their order and
// timing against the gradients' readiness, and the reduced values (VerifyOutputs checks
// every element of every step's results against the pattern's sum).
#include <gtest/gtest.h>

#include <vector>

#include "tests/executor/engine_harness.h"
#include "traces/ddp_buckets.h"

namespace autotune::executor {
namespace {

using test_support::AllRanksOk;
using test_support::EngineHarness;

constexpr int64_t kMiB = 1024 * 1024;

// Float32 tensors of 0.5, 0.75, 1.5, 0.25, 3 MiB ready 0.4 ms apart (index = ready order).
// With first bucket 1 MiB and cap 2 MiB, worked out by hand from DDP's rule:
//   up front (registration order 4 3 2 1 0: {4} reaches 1 MiB, {3, 2, 1} 2.5 >= 2, {0} left;
//   reversed): {0}, {3, 2, 1}, {4};
//   rebuilt from the ready order 0..4 ({0, 1} 1.25 >= 1; {2, 3, 4} 4.75 >= 2): {0, 1},
//   {2, 3, 4}.
Workload FiveTensors() {
  const double mib[] = {0.5, 0.75, 1.5, 0.25, 3};
  Workload w;
  w.name = "five";
  w.forward_ms = 0.2;
  w.backward_ms = 2.5;
  for (int i = 0; i < 5; ++i) {
    TensorSpec t;
    t.name = "t" + std::to_string(i);
    t.shape = {static_cast<int64_t>(mib[i] * kMiB) / 4};
    t.ready_ms = 0.4 * i;
    w.tensors.push_back(t);
  }
  return w;
}

std::vector<std::vector<int>> Buckets(const EngineStepRecord& r) {
  std::vector<std::vector<int>> out;
  for (const CollectiveRecord& c : r.collectives) out.push_back(c.tensors);
  return out;
}

Knobs Caps(bool view) {
  Knobs k;
  k.ddp_first_bucket_mb = 1;
  k.ddp_bucket_cap_mb = 2;
  k.ddp_gradient_as_bucket_view = view;
  return k;
}

class DdpEngineTest : public ::testing::TestWithParam<bool> {};

TEST_P(DdpEngineTest, BucketsAreDdpsAndRunInOrderOnceComplete) {
  const bool view = GetParam();
  EngineHarness h;
  ASSERT_TRUE(AllRanksOk(h.Init(FiveTensors(), Caps(view), Framework::kDdp)));
  using B = std::vector<std::vector<int>>;
  for (int step = 0; step < 3; ++step) {
    PlayedStep played;
    ASSERT_TRUE(AllRanksOk(h.Step(&played))) << "step " << step;
    const EngineStepRecord& r = played.record;
    EXPECT_TRUE(r.cycles.empty()) << "DDP has no background cycle";
    const B expected = step == 0 ? B{{0}, {3, 2, 1}, {4}} : B{{0, 1}, {2, 3, 4}};
    EXPECT_EQ(Buckets(r), expected) << "step " << step;
    for (size_t b = 0; b < r.collectives.size(); ++b) {
      const CollectiveRecord& c = r.collectives[b];
      EXPECT_EQ(c.cycle, static_cast<int>(b));
      int64_t bytes = 0;
      for (int t : c.tensors) {
        bytes += h.workload.tensors[t].bytes();
        EXPECT_GE(c.start_us, r.tensors[t].ready_us) << "bucket " << b << " before tensor " << t;
      }
      EXPECT_EQ(c.bytes, bytes);
      if (b > 0) EXPECT_GE(c.start_us, r.collectives[b - 1].comm_end_us);
      EXPECT_EQ(c.copy_in_end_us, c.start_us) << "DDP copies in when a gradient is ready";
      if (view || b + 1 < r.collectives.size()) {
        EXPECT_EQ(c.end_us, c.comm_end_us);
      } else {
        EXPECT_GT(c.end_us, c.comm_end_us) << "the finalize copy-out ends the last bucket";
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(BucketView, DdpEngineTest, ::testing::Bool());

TEST(DdpEngineRefusals, AllgatherTensorsAreNotDdps) {
  EngineHarness h;
  Workload w = FiveTensors();
  w.tensors[2].op = Op::kAllgather;
  const Status st = h.Init(w, Caps(false), Framework::kDdp);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("DDP allreduces gradients only"), std::string::npos);
}

}  // namespace
}  // namespace autotune::executor
