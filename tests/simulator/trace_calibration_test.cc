// CalibrateOptions: what the replay learns from the recorded trace (when negotiation could
// first complete, wake-up delay, blocking cycles, copy-out of one-tensor collectives, and
// the recorded collectives' and copies' durations against the network model).
#include "simulator/trace_calibration.h"

#include <gtest/gtest.h>

#include "tests/support/sim_fixtures.h"

namespace autotune::sim {
namespace {

using testing::Topo;

// 1 ms cycles, no negotiation cost, copies at 1000 B/us, allreduce 2*5 us + B/200 on 1x2.
NetworkModel Net() {
  NetworkParams p = NetworkParams::Uniform(5.0, 200.0);
  p.copy = {0.0, 1000.0};
  return NetworkModel::FromParams(p, Topo(1, 2));
}

Trace BaseTrace(int steps) {
  Trace t = testing::MakeTrace(testing::MakeWorkload({400000, 400000}, {0.5, 1.0}, 0.0, 2.0, 1.0),
                               Topo(1, 2), testing::PlainKnobs(64, 1), 9000.0, 10.0, steps);
  return t;
}

CollectiveRecord Collective(int cycle, std::vector<int> tensors, int64_t bytes, double start_us,
                            double copy_in_us, double comm_us, double copy_out_us) {
  CollectiveRecord c;
  c.cycle = cycle;
  c.tensors = std::move(tensors);
  c.bytes = bytes;
  c.start_us = start_us;
  c.copy_in_end_us = start_us + copy_in_us;
  c.comm_end_us = c.copy_in_end_us + comm_us;
  c.end_us = c.comm_end_us + copy_out_us;
  return c;
}

CycleRecord Cycle(int index, double start_us, double negotiate_us, int tensors) {
  CycleRecord c;
  c.cycle = index;
  c.start_us = start_us;
  c.negotiate_end_us = start_us + negotiate_us;
  c.submitted = c.responses = tensors;
  return c;
}

TEST(TraceCalibrationTest, LateFirstCyclesSetTheFirstNegotiationFloor) {
  Trace t = BaseTrace(4);
  // Cycle 0 started late itself, or cycle 1 came long after one idle period.
  const std::vector<std::pair<int, double>> first = {
      {0, 21000}, {1, 20500}, {1, 22000}, {0, 19000}};
  for (int s = 0; s < 4; ++s) {
    t.steps[s].cycles = {Cycle(first[s].first, first[s].second, 0.0, 2)};
  }
  const ReplayOptions o = CalibrateOptions(t, Net(), NegotiationModel());
  EXPECT_NEAR(o.first_negotiation_us, 20750.0, 1e-9);  // median of the four
  EXPECT_EQ(o.step_first_negotiation_us, (std::vector<double>{21000, 20500, 22000, 19000}));
}

TEST(TraceCalibrationTest, OnTimeFirstCyclesLeaveNoFloor) {
  Trace t = BaseTrace(4);
  for (int s = 0; s < 4; ++s) t.steps[s].cycles = {Cycle(1, 1050.0, 0.0, 2)};
  const ReplayOptions o = CalibrateOptions(t, Net(), NegotiationModel());
  EXPECT_EQ(o.first_negotiation_us, 0.0);
  EXPECT_EQ(o.step_first_negotiation_us, (std::vector<double>{0, 0, 0, 0}));
}

TEST(TraceCalibrationTest, WakeDelayBlockingCyclesAndScales) {
  Trace t = BaseTrace(3);
  for (StepTrace& st : t.steps) {
    // Cycle 1 (1.05 ms) ends early: cycle 3 starts at 1.05 + 2 * 1.08 ms (80 us late
    // wake-ups). Cycle 3's collective runs past its cycle time; cycle 4 starts right after.
    // Recorded comm 1.5x the model's (15 us for 1000 B, 2010 us for 4e5 B); the large
    // copy at half the model's speed.
    st.collectives = {Collective(1, {0}, 1000, 1060.0, 1.0, 1.5 * 15.0, 0.0),
                      Collective(3, {1}, 400000, 3220.0, 800.0, 1.5 * 2010.0, 0.0)};
    st.cycles = {Cycle(1, 1050.0, 10.0, 1), Cycle(3, 3210.0, 10.0, 1),
                 Cycle(4, st.collectives[1].end_us, 10.0, 0)};
  }
  const ReplayOptions o = CalibrateOptions(t, Net(), NegotiationModel());
  EXPECT_NEAR(o.wake_delay_us, 80.0, 1e-9);
  EXPECT_TRUE(o.cycle_waits_for_collectives);
  EXPECT_NEAR(o.copy_scale, 2.0, 1e-9);
  EXPECT_NEAR(o.comm_scale, 1.5, 1e-9);
  EXPECT_FALSE(o.single_tensor_copy_out);
}

TEST(TraceCalibrationTest, CommScaleWeighsCollectivesByTheirTime) {
  Trace t = BaseTrace(4);
  for (StepTrace& st : t.steps) {
    // Three small collectives at 2x the model (15 us each) and one large one at 1x
    // (2010 us): a plain median of the ratios says 2, the time-weighted one 1.
    st.collectives = {Collective(1, {0}, 1000, 1000.0, 1.0, 2.0 * 15.0, 0.0),
                      Collective(1, {0}, 1000, 1100.0, 1.0, 2.0 * 15.0, 0.0),
                      Collective(1, {0}, 1000, 1200.0, 1.0, 2.0 * 15.0, 0.0),
                      Collective(2, {1}, 400000, 2100.0, 400.0, 2010.0, 0.0)};
  }
  EXPECT_NEAR(MeasuredCommRatios(t, Net()).all, 1.0, 1e-9);
  EXPECT_NEAR(CalibrateOptions(t, Net(), NegotiationModel()).comm_scale, 1.0, 1e-9);
  // With the large one at 1.5x the weighted median follows it.
  for (StepTrace& st : t.steps) {
    CollectiveRecord& big = st.collectives.back();
    big.comm_end_us = big.copy_in_end_us + 1.5 * 2010.0;
  }
  EXPECT_NEAR(MeasuredCommRatios(t, Net()).all, 1.5, 1e-9);
}

TEST(TraceCalibrationTest, CollectivesBesideTheComputeFitTheContention) {
  // The backward pass ends at 2 ms. Per step, three collectives run beside it at 3x the
  // model (45 us for 15 us), three after it at 1.2x; one straddles its end (in neither).
  Trace t = BaseTrace(2);
  for (StepTrace& st : t.steps) {
    st.collectives = {Collective(1, {0}, 1000, 1000.0, 1.0, 3.0 * 15.0, 0.0),
                      Collective(1, {0}, 1000, 1100.0, 1.0, 3.0 * 15.0, 0.0),
                      Collective(1, {0}, 1000, 1200.0, 1.0, 3.0 * 15.0, 0.0),
                      Collective(1, {0}, 1000, 1990.0, 1.0, 50.0, 0.0),
                      Collective(2, {1}, 1000, 2100.0, 1.0, 1.2 * 15.0, 0.0),
                      Collective(2, {1}, 1000, 2200.0, 1.0, 1.2 * 15.0, 0.0),
                      Collective(2, {1}, 1000, 2300.0, 1.0, 1.2 * 15.0, 0.0)};
  }
  const CommRatios r = MeasuredCommRatios(t, Net());
  EXPECT_EQ(r.alone_count, 6);
  EXPECT_EQ(r.beside_count, 6);
  EXPECT_NEAR(r.alone, 1.2, 1e-9);
  EXPECT_NEAR(r.beside, 3.0, 1e-9);
  const ReplayOptions o = CalibrateOptions(t, Net(), NegotiationModel());
  EXPECT_NEAR(o.comm_scale, 1.2, 1e-9);
  EXPECT_NEAR(o.comm_contention, 2.5, 1e-9);
  // Faster beside the compute than alone: no contention (1), never a speed-up.
  for (StepTrace& st : t.steps) {
    for (int i = 0; i < 3; ++i) {
      st.collectives[i].comm_end_us = st.collectives[i].copy_in_end_us + 0.5 * 15.0;
    }
  }
  EXPECT_EQ(CalibrateOptions(t, Net(), NegotiationModel()).comm_contention, 1.0);
  // Only one collective of each kind a step (two steps: 2 < 3): the plain ratio, no contention.
  for (StepTrace& st : t.steps) {
    st.collectives = {st.collectives[0], st.collectives[4]};
  }
  EXPECT_EQ(CalibrateOptions(t, Net(), NegotiationModel()).comm_contention, 1.0);
}

// A real DDP job imported on 1x2 (three gradients of 1e6, 1e6 and 2e6 bytes ready 1.0, 1.5 and
// 2.0 ms into the backward pass, one bucket each), its rank-0 buckets as the import makes them: start =
// copy-in end = the communication hook's call, comm end = end = its completion.
Trace DdpTrace(int steps, BackendKind backend) {
  Trace t = testing::MakeTrace(
      testing::MakeWorkload({1000000, 1000000, 2000000}, {1.0, 1.5, 2.0}, 0.0, 2.5, 1.0),
      Topo(1, 2), Knobs(), 40000.0, 45.0, steps);
  t.run.framework = Framework::kDdp;
  t.run.kind = RunKind::kImported;
  t.run.backend = backend;
  t.run.knobs.ddp_first_bucket_mb = 0.25;
  t.run.knobs.ddp_bucket_cap_mb = 0.25;
  return t;
}

CollectiveRecord Bucket(int index, std::vector<int> tensors, int64_t bytes, double start_us,
                        double end_us) {
  CollectiveRecord c = Collective(index, std::move(tensors), bytes, start_us, 0.0,
                                  end_us - start_us, 0.0);
  c.seq = index;
  return c;
}

TEST(TraceCalibrationTest, DdpLaunchCostIsTheGapAfterTheLastGradientsCopy) {
  // Copies at 10000 B/us: 100 us per 1e6 bytes. Bucket {0}: t0 ready 1000, started 1220 (gap
  // 220 - copy 100 = 120); {1}: t1 ready 1500, started 1730 (230 - 100 = 130); {2}: t2 ready
  // 2000, started 2310 (310 - 200 = 110). Median 120.
  NetworkParams p = NetworkParams::Uniform(5.0, 200.0);
  p.copy = {0.0, 10000.0};
  const NetworkModel net = NetworkModel::FromParams(p, Topo(1, 2));
  Trace t = DdpTrace(1, BackendKind::kMpi);  // gloo on the host: the hook copies
  t.steps[0].collectives = {Bucket(0, {0}, 1000000, 1220.0, 9000.0),
                            Bucket(1, {1}, 1000000, 1730.0, 15000.0),
                            Bucket(2, {2}, 2000000, 2310.0, 30000.0)};
  EXPECT_NEAR(MeasuredLaunchUs(t, net, 1.0), 120.0, 1e-9);
  EXPECT_NEAR(CalibrateOptions(t, net, NegotiationModel()).launch_us, 120.0, 1e-9);
  // With gradient_as_bucket_view nothing is copied: gaps 220, 230, 310, median 230.
  t.run.knobs.ddp_gradient_as_bucket_view = true;
  EXPECT_NEAR(MeasuredLaunchUs(t, net, 1.0), 230.0, 1e-9);
  t.run.knobs.ddp_gradient_as_bucket_view = false;
  // On GPUs (NCCL) the copies are the device's: the whole gap is the launch, median 230.
  t.run.backend = BackendKind::kNccl;
  EXPECT_NEAR(MeasuredLaunchUs(t, net, 1.0), 230.0, 1e-9);
  t.run.backend = BackendKind::kMpi;
  // A second step whose {0} started late, at 1600 (gap 500): {1}, ready at 1500, waited for
  // {0}'s launch, so its gap is left out; {2}'s (110) counts. Gaps 120, 130, 110, 500, 110:
  // median 120 (125 had {1}'s 130 counted).
  t.steps.push_back(t.steps[0]);
  t.steps[1].collectives[0].start_us = t.steps[1].collectives[0].copy_in_end_us = 1600.0;
  EXPECT_NEAR(MeasuredLaunchUs(t, net, 1.0), 120.0, 1e-9);
  // The launch follows the last member's ready time on the slowest rank (the replay launches
  // from it): rank 1 had t0 ready at 1100, so {0}'s gap is 1220 - 1100 - 100 = 20. Gaps 20,
  // 130, 110, then 400 and 110 (the second step's {1}, held back, still left out): median 110.
  for (StepTrace& st : t.steps) {
    for (TensorEvent& e : st.tensors) {
      if (e.rank == 1 && e.tensor == 0) e.ready_us = 1100.0;
    }
  }
  EXPECT_NEAR(MeasuredLaunchUs(t, net, 1.0), 110.0, 1e-9);
  // Horovod's cycles launch nothing on ready: no launch cost.
  EXPECT_EQ(CalibrateOptions(BaseTrace(2), Net(), NegotiationModel()).launch_us, 0.0);
}

TEST(TraceCalibrationTest, DdpCommScaleUndoesGloosTwoBucketsAtOnce) {
  // No latency: allreduce = B / 200 us on 1x2. Two steps, buckets of 2e6 B (10000 us alone)
  // launched at 1750 and 2500 that ran 1.5x slower than the model and shared the link: A
  // alone 1750-2500 (750 of its 15000), then both at half rate: A ends 2500 + 2 x 14250 =
  // 31000, B has got 14250 then and ends 31750. Under gloo's rule each took 15000 alone:
  // ratio 1.5. Read as one stream, A would be 29250 (2.925x) and B 750 (0.075x).
  NetworkParams p = NetworkParams::Uniform(0.0, 200.0);
  p.copy = {0.0, 1000.0};
  const NetworkModel net = NetworkModel::FromParams(p, Topo(1, 2));
  Trace t = DdpTrace(2, BackendKind::kMpi);
  t.run.workload = testing::MakeWorkload({2000000, 2000000}, {1.0, 1.5}, 0.0, 2.5, 1.0);
  for (StepTrace& st : t.steps) {
    st.tensors.clear();
    st.collectives = {Bucket(0, {0}, 2000000, 1750.0, 31000.0),
                      Bucket(1, {1}, 2000000, 2500.0, 31750.0)};
  }
  EXPECT_NEAR(MeasuredCommRatios(t, net).all, 1.5, 1e-9);
}

TEST(TraceCalibrationTest, SilentTraceKeepsTheDefaults) {
  const ReplayOptions o = CalibrateOptions(BaseTrace(2), Net(), NegotiationModel());
  const ReplayOptions defaults;
  EXPECT_EQ(o.first_negotiation_us, defaults.first_negotiation_us);
  EXPECT_EQ(o.wake_delay_us, defaults.wake_delay_us);
  EXPECT_EQ(o.comm_scale, defaults.comm_scale);
  EXPECT_EQ(o.copy_scale, defaults.copy_scale);
  EXPECT_EQ(o.cycle_waits_for_collectives, defaults.cycle_waits_for_collectives);
}

}  // namespace
}  // namespace autotune::sim
