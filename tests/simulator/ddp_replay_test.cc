// Replay of a DDP run: exact analytic cases worked out by hand from DDP's rules
// (traces/ddp_buckets.h) and a linear network model.
#include <gtest/gtest.h>

#include <vector>

#include "simulator/replay.h"
#include "simulator/simulation.h"
#include "tests/support/sim_fixtures.h"

namespace autotune::sim {
namespace {

using testing::MakeSimulation;
using testing::MakeTrace;
using testing::MakeWorkload;
using testing::Topo;

// Three gradients of 1e6, 1e6 and 2e6 bytes ready 1.0, 1.5 and 2.0 ms into a 2.5 ms
// backward pass; the recorded step finished its gradients at 9 ms and ended at 10 ms (a
// 1 ms tail). Two ranks: an allreduce of B bytes costs 2 * 5 us + B / 200 us; copies run at
// 4000 B/us.
Simulation ThreeGradients() {
  Trace trace = MakeTrace(MakeWorkload({1000000, 1000000, 2000000}, {1.0, 1.5, 2.0}, 0.0, 2.5,
                                       1.0),
                          Topo(1, 2), Knobs(), 9000.0, 10.0);
  trace.run.framework = Framework::kDdp;
  NetworkParams p = NetworkParams::Uniform(5.0, 200.0);
  p.copy = {0.0, 4000.0};
  return MakeSimulation(trace, NetworkModel::FromParams(p, Topo(1, 2)));
}

Knobs Ddp(double first_mb, double cap_mb, bool view) {
  Knobs k;
  k.ddp_first_bucket_mb = first_mb;
  k.ddp_bucket_cap_mb = cap_mb;
  k.ddp_gradient_as_bucket_view = view;
  return k;
}

double PredictUs(const Simulation& sim, const Knobs& knobs, StepTrace* timeline = nullptr) {
  std::vector<StepTrace> steps;
  const SettingResult r = sim.Evaluate(knobs, &steps);
  if (timeline != nullptr) *timeline = steps[0];
  return r.step_ms_median * 1000.0;
}

TEST(DdpReplayTest, BucketsStartWhenCompleteAndRunOneAfterAnother) {
  const Simulation sim = ThreeGradients();
  StepTrace t;
  // First bucket 1 MiB, cap 1 MiB: {0, 1} (2e6 >= 1 MiB) and {2}. {0, 1} starts when t1 is
  // ready (1500) and ends at 1500 + 10 + 1e4 = 11510; {2} (ready at 2000) waits for the
  // stream: 11510 + 10 + 1e4 = 21520. The finalize copies 4e6 B back: +1000. Tail: +1000.
  EXPECT_NEAR(PredictUs(sim, Ddp(1, 1, false), &t), 23520.0, 1e-6);
  ASSERT_EQ(t.collectives.size(), 2u);
  EXPECT_EQ(t.collectives[0].tensors, (std::vector<int>{0, 1}));
  EXPECT_DOUBLE_EQ(t.collectives[0].start_us, 1500.0);
  EXPECT_DOUBLE_EQ(t.collectives[1].start_us, 11510.0);
  EXPECT_TRUE(t.cycles.empty());
  // Caps of 0.25 MiB: one bucket per gradient. {0} 1000 -> 6010; {1} 6010 -> 11020;
  // {2} 11020 -> 21030; copy back 1000; tail 1000.
  EXPECT_NEAR(PredictUs(sim, Ddp(0.25, 0.25, false)), 23030.0, 1e-6);
  // One bucket of everything (first bucket 64 MiB): starts at 2000, 2000 + 10 + 2e4 =
  // 22010; copy back 1000; tail 1000.
  EXPECT_NEAR(PredictUs(sim, Ddp(64, 1024, false)), 24010.0, 1e-6);
}

TEST(DdpReplayTest, GradientAsBucketViewRemovesExactlyTheCopyBack) {
  const Simulation sim = ThreeGradients();
  EXPECT_NEAR(PredictUs(sim, Ddp(1, 1, false)) - PredictUs(sim, Ddp(1, 1, true)), 1000.0, 1e-6);
}

}  // namespace
}  // namespace autotune::sim
