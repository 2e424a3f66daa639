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

constexpr CollectiveRunner kGloo = CollectiveRunner::kHostLibrary;
constexpr CollectiveRunner kNccl = CollectiveRunner::kNcclLibrary;

// Three gradients of 1e6, 1e6 and 2e6 bytes ready 1.0, 1.5 and 2.0 ms into a 2.5 ms
// backward pass; the recorded step finished its gradients at 9 ms and ended at 10 ms (a
// 1 ms tail). Two ranks: an allreduce of B bytes costs 2 * latency + B / 200 us (latency 5 us
// unless given); copies run at 4000 B/us (a gradient's copy into its bucket: 250 us per 1e6
// bytes) on the host; on GPUs (NCCL) the copies are the device's and take no host time.
// runner: autotune's executor and NCCL run one bucket at a time, gloo (a real job on host
// memory) two.
// bytes_per_us, launch_cpu_us and launch_cpu_share (ReplayOptions) as given where a test
// needs them.
Simulation ThreeGradients(CollectiveRunner runner = CollectiveRunner::kExecutor,
                          double latency_us = 5.0, double launch_us = 0.0,
                          double bytes_per_us = 200.0, double launch_cpu_us = 0.0,
                          double launch_cpu_share = 0.0) {
  Trace trace = MakeTrace(MakeWorkload({1000000, 1000000, 2000000}, {1.0, 1.5, 2.0}, 0.0, 2.5,
                                       1.0),
                          Topo(1, 2), Knobs(), 9000.0, 10.0);
  trace.run.framework = Framework::kDdp;
  if (runner != CollectiveRunner::kExecutor) trace.run.kind = RunKind::kImported;
  trace.run.backend =
      runner == CollectiveRunner::kNcclLibrary ? BackendKind::kNccl : BackendKind::kMpi;
  NetworkParams p = NetworkParams::Uniform(latency_us, bytes_per_us);
  p.copy = {0.0, 4000.0};
  ReplayOptions options = testing::ExactOptions();
  options.launch_us = launch_us;
  options.launch_cpu_us = launch_cpu_us;
  options.launch_cpu_share = launch_cpu_share;
  return MakeSimulation(trace, NetworkModel::FromParams(p, Topo(1, 2)), NegotiationModel(),
                        options);
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
  // First bucket 1 MiB, cap 1 MiB: {0, 1} (2e6 >= 1 MiB) and {2}. The hook copies t0 at
  // 1000-1250 and t1 at 1500-1750: {0, 1} starts at 1750 and ends at 1750 + 10 + 1e4 = 11760;
  // {2} (copied 2000-2500) waits for the stream: 11760 + 10 + 1e4 = 21770. The finalize
  // copies 4e6 B back: +1000. Tail: +1000.
  EXPECT_NEAR(PredictUs(sim, Ddp(1, 1, false), &t), 23770.0, 1e-6);
  ASSERT_EQ(t.collectives.size(), 2u);
  EXPECT_EQ(t.collectives[0].tensors, (std::vector<int>{0, 1}));
  EXPECT_DOUBLE_EQ(t.collectives[0].start_us, 1750.0);
  EXPECT_DOUBLE_EQ(t.collectives[1].start_us, 11760.0);
  EXPECT_TRUE(t.cycles.empty());
  // Caps of 0.25 MiB: one bucket per gradient. {0} 1250 -> 6260; {1} (copied by 1750)
  // 6260 -> 11270; {2} (copied by 2500) 11270 -> 21280; copy back 1000; tail 1000.
  EXPECT_NEAR(PredictUs(sim, Ddp(0.25, 0.25, false)), 23280.0, 1e-6);
  // One bucket of everything (first bucket 64 MiB): t2 copied by 2500, 2500 + 10 + 2e4 =
  // 22510; copy back 1000; tail 1000.
  EXPECT_NEAR(PredictUs(sim, Ddp(64, 1024, false)), 24510.0, 1e-6);
}

TEST(DdpReplayTest, GradientAsBucketViewRemovesTheCopies) {
  const Simulation sim = ThreeGradients();
  // Views: no copy into the buckets, none back. {0, 1} at 1500 -> 11510, {2} 11510 -> 21520,
  // tail 1000: 22520, against 23770 with the copies (the copy back, 1000, and the first
  // bucket's 250 us later start, which the second one inherits).
  EXPECT_NEAR(PredictUs(sim, Ddp(1, 1, true)), 22520.0, 1e-6);
  EXPECT_NEAR(PredictUs(sim, Ddp(1, 1, false)) - PredictUs(sim, Ddp(1, 1, true)), 1250.0, 1e-6);
}

TEST(DdpReplayTest, GlooRunsTwoBucketsAtOnceSharingTheLink) {
  // gloo: two buckets in flight. Latency 500 us: an allreduce is 1000 us of latency (which
  // overlaps) and B / 200 us on the link (which is split between the two in flight).
  // {0, 1} launched at 1750 (as above): latency to 2750, link alone 2750-3500 (750 of its
  // 10000 us). {2} launched at 2500, latency to 3500. From 3500 they share the link: {0, 1}'s
  // 9250 left take 18500, it ends at 22000; {2} has got 9250 by then and runs its last 750
  // alone: 22750. Copy back 1000, tail 1000: 24750.
  StepTrace t;
  EXPECT_NEAR(PredictUs(ThreeGradients(kGloo, 500.0), Ddp(1, 1, false), &t), 24750.0, 1e-6);
  ASSERT_EQ(t.collectives.size(), 2u);
  EXPECT_NEAR(t.collectives[0].start_us, 1750.0, 1e-6);
  EXPECT_NEAR(t.collectives[0].comm_end_us, 22000.0, 1e-6);
  EXPECT_NEAR(t.collectives[1].start_us, 2500.0, 1e-6);
  EXPECT_NEAR(t.collectives[1].comm_end_us, 22750.0, 1e-6);  // its end_us: the copy back's
  // One bucket at a time (the executor): {0, 1} 1750 + 1000 + 10000 = 12750, {2} 12750 ->
  // 23750; copy back and tail: 25750.
  EXPECT_NEAR(PredictUs(ThreeGradients(CollectiveRunner::kExecutor, 500.0), Ddp(1, 1, false)),
              25750.0, 1e-6);
  // NCCL's one stream, its copies on the device: {0, 1} launched when t1 is ready, 1500 +
  // 11000 = 12500, {2} 12500 -> 23500; no copy back; tail 1000: 24500.
  EXPECT_NEAR(PredictUs(ThreeGradients(kNccl, 500.0), Ddp(1, 1, false)), 24500.0, 1e-6);
}

TEST(DdpReplayTest, EachLaunchCostsTheHookItsLaunchTime) {
  // 300 us per launch on the hook's thread, after the copy; one bucket per gradient, one at a
  // time (the executor).
  // {0}: copied by 1250, launched 1550, 1550 + 10 + 5000 = 6560. {1}: ready at 1500 but the
  // hook is busy until 1550: copied 1550-1800, launched 2100; waits for the stream:
  // 6560 -> 11570. {2}: ready 2000, hook free at 2100, copied
  // 2100-2600, launched 2900; 11570 -> 21580. Copy back 1000, tail 1000: 23580.
  const CollectiveRunner one = CollectiveRunner::kExecutor;
  EXPECT_NEAR(PredictUs(ThreeGradients(one, 5.0, 300.0), Ddp(0.25, 0.25, false)), 23580.0, 1e-6);
  // One bucket: the hook copies t0 1000-1250, t1 1500-1750, t2 2000-2500 and launches once:
  // 2800 + 10 + 2e4 = 22810; +2000: 24810 (one launch, 300 us more than without).
  EXPECT_NEAR(PredictUs(ThreeGradients(one, 5.0, 300.0), Ddp(64, 1024, false)), 24810.0, 1e-6);
  // NCCL (no host copies): {0} launched 1300, 1300 + 5010 = 6310; {1} ready 1500, launched
  // 1800, waits: 6310 -> 11320; {2} ready 2000, launched 2300: 11320 -> 21330; tail: 22330.
  // One bucket: launched at 2000 + 300, 2300 + 20010 = 22310; tail: 23310.
  EXPECT_NEAR(PredictUs(ThreeGradients(kNccl, 5.0, 300.0), Ddp(0.25, 0.25, false)), 22330.0,
              1e-6);
  EXPECT_NEAR(PredictUs(ThreeGradients(kNccl, 5.0, 300.0), Ddp(64, 1024, false)), 23310.0, 1e-6);
}

TEST(DdpReplayTest, ALaunchBesideTheComputeCostsItTheLaunchCpuAgainstTheRecorded) {
  // A fast link (1e4 B/us: an allreduce of B bytes is 10 + B / 1e4 us), so the compute's end
  // (2500: the 2.5 ms backward pass) can decide the step; 2000 us of compute a launch before
  // it, one bucket at a time. The recorded setting (DDP's default: first bucket 1 MiB, then 25
  // MB) launches {0, 1} at 1750, beside the compute, and {2} at 2500 (its copy 2000-2500),
  // not: one launch beside. Its own replay: {0, 1} 1750 -> 1960, {2} 2500 -> 2710, copy back
  // of 4e6 B +1000 = 3710; the compute ends at 2500; tail 1000: 4710, as without the cost.
  const CollectiveRunner one = CollectiveRunner::kExecutor;
  const Simulation sim = ThreeGradients(one, 5.0, 0.0, 1e4, 2000.0);
  const Simulation free = ThreeGradients(one, 5.0, 0.0, 1e4, 0.0);
  EXPECT_NEAR(PredictUs(sim, Knobs()), 4710.0, 1e-6);
  EXPECT_NEAR(PredictUs(free, Knobs()), 4710.0, 1e-6);
  // One bucket a gradient: {0} at 1250 and {1} at 1750 beside the compute, {2} at 2500 not:
  // one launch more than recorded, so the backward pass (0-2500) takes 2000 more: 4500, every
  // ready time 1.8x as far from its start (1800, 2700, 3600), and the buckets launch from
  // there: {0} copied 1800-2050, 2050 -> 2160; {1} 2700-2950 -> 3060; {2} (2e6 B) 3600-4100,
  // 4100 -> 4310; copy back 5310, after the compute's end (4500); tail: 6310 (4710 without
  // the cost; 5500 had the launches stayed where they were).
  EXPECT_NEAR(PredictUs(sim, Ddp(0.25, 0.25, false)), 6310.0, 1e-6);
  EXPECT_NEAR(PredictUs(free, Ddp(0.25, 0.25, false)), 4710.0, 1e-6);
  // One bucket of everything, at 2500: one launch fewer, the backward pass ends at 500 and
  // its gradients come 0.2x as far from its start: t0 200, t1 300, t2 400. The hook copies
  // them 200-450, 450-700, 700-1200 and launches at 1200: 1200 + 10 + 400 = 1610, copy back
  // 2610, tail 3610 (4910 without the cost: the collective at 2500 decides).
  EXPECT_NEAR(PredictUs(sim, Ddp(64, 1024, false)), 3610.0, 1e-6);
  EXPECT_NEAR(PredictUs(free, Ddp(64, 1024, false)), 4910.0, 1e-6);
}

TEST(DdpReplayTest, TheLaunchCpuIsBoundedByTheTimeCollectivesRunBesideTheCompute) {
  // The link and costs above (an allreduce of B bytes is 10 + B / 1e4 us, 2000 us a launch
  // beside the compute), on NCCL (no host copies: a bucket launches when its last gradient is
  // ready). The recorded default: {0, 1} at 1500 -> 1710 and {2} at 2000 -> 2210, both before
  // the compute's end (2500): 2 launches, in flight 420 us of the backward pass (0-2500).
  // One bucket a gradient: {0} 1000 -> 1110, {1} 1500 -> 1610, {2} 2000 -> 2210: 3 launches,
  // in flight 110 + 110 + 210 = 430 us.
  const Simulation unbounded = ThreeGradients(kNccl, 5.0, 0.0, 1e4, 2000.0);
  const Simulation bounded = ThreeGradients(kNccl, 5.0, 0.0, 1e4, 2000.0, 0.5);
  const Simulation free = ThreeGradients(kNccl, 5.0, 0.0, 1e4, 0.0);
  // Unbounded: 3 x 2000 against 2 x 2000, the compute ends at 4500; tail 1000: 5500.
  EXPECT_NEAR(PredictUs(unbounded, Ddp(0.25, 0.25, false)), 5500.0, 1e-6);
  // At most half the time in flight: min(6000, 215) against min(4000, 210), +5 us: the
  // compute ends at 2505, after the last collective (2210): 3505.
  EXPECT_NEAR(PredictUs(bounded, Ddp(0.25, 0.25, false)), 3505.0, 1e-6);
  // Without the cost: 2500 + 1000.
  EXPECT_NEAR(PredictUs(free, Ddp(0.25, 0.25, false)), 3500.0, 1e-6);
  // The recorded setting against itself costs nothing either way: 2210 < 2500, tail: 3500.
  EXPECT_NEAR(PredictUs(bounded, Knobs()), 3500.0, 1e-6);
}

}  // namespace
}  // namespace autotune::sim
