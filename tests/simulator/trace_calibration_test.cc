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
  EXPECT_NEAR(MeasuredCommRatio(t, Net()), 1.0, 1e-9);
  EXPECT_NEAR(CalibrateOptions(t, Net(), NegotiationModel()).comm_scale, 1.0, 1e-9);
  // With the large one at 1.5x the weighted median follows it.
  for (StepTrace& st : t.steps) {
    CollectiveRecord& big = st.collectives.back();
    big.comm_end_us = big.copy_in_end_us + 1.5 * 2010.0;
  }
  EXPECT_NEAR(MeasuredCommRatio(t, Net()), 1.5, 1e-9);
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
