// Replay: exact analytic cases (one tensor, ranks, hierarchy, negotiation, fusion, cycles,
// groups), timeline rows, and agreement with the shared fusion policy.
#include "simulator/replay.h"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "simulator/simulation.h"
#include "tests/support/sim_fixtures.h"
#include "traces/fusion_policy.h"

namespace autotune::sim {
namespace {

using testing::ExactOptions;
using testing::MakeSimulation;
using testing::MakeTrace;
using testing::MakeWorkload;
using testing::PlainKnobs;
using testing::Topo;

// alpha 5 us per step, 200 B/us; copies free unless a test says otherwise.
NetworkParams SimpleParams(double copy_bytes_per_us = 1e12) {
  NetworkParams p = NetworkParams::Uniform(5.0, 200.0);
  p.copy = {0.0, copy_bytes_per_us};
  return p;
}

// One tensor of 1e6 bytes ready 2.3 ms into the backward pass (which starts at 0 and
// lasts 2.5 ms); the recorded step finished its gradients at 9 ms and ended at 10 ms, so
// the step's tail (optimizer and barrier) is 1 ms.
Trace OneTensorTrace(const Topology& topo, const Knobs& knobs) {
  return MakeTrace(MakeWorkload({1000000}, {2.3}, 0.0, 2.5, 1.0), topo, knobs, 9000.0, 10.0);
}

double PredictUs(const Simulation& sim, const Knobs& knobs, StepTrace* timeline = nullptr) {
  std::vector<StepTrace> steps;
  SettingResult r = sim.Evaluate(knobs, &steps);
  if (timeline) *timeline = steps[0];
  return r.step_ms_median * 1000.0;
}

TEST(ReplayExactTest, OneTensorIsCycleWaitPlusLatencyPlusBytesOverBandwidth) {
  const Knobs knobs = PlainKnobs(0.0, 1.0);
  const Trace trace = OneTensorTrace(Topo(1, 2), knobs);
  const NetworkModel net = NetworkModel::FromParams(SimpleParams(), Topo(1, 2));
  const Simulation sim = MakeSimulation(trace, net);
  // Cycles at 0, 1, 2, 3 ms: the tensor (ready at 2.3 ms) waits 0.7 ms for the 3 ms cycle;
  // then 2*1 steps * 5 us + 2*(1/2) * 1e6 B / 200 B/us = 5010 us; then the 1 ms tail.
  const double cycle_wait_us = 700.0, latency_us = 10.0, transfer_us = 1e6 / 200.0;
  EXPECT_NEAR(PredictUs(sim, knobs), 2300.0 + cycle_wait_us + latency_us + transfer_us + 1000.0,
              1e-3);
  // A 0.5 ms cycle: the 2.5 ms cycle takes it (0.2 ms wait).
  EXPECT_NEAR(PredictUs(sim, PlainKnobs(0.0, 0.5)), 2500.0 + 5010.0 + 1000.0, 1e-3);
}

TEST(ReplayExactTest, TwoRanksVersusFour) {
  const Knobs knobs = PlainKnobs(0.0, 1.0);
  const Simulation two = MakeSimulation(OneTensorTrace(Topo(1, 2), knobs),
                                        NetworkModel::FromParams(SimpleParams(), Topo(1, 2)));
  const Simulation four = MakeSimulation(OneTensorTrace(Topo(1, 4), knobs),
                                         NetworkModel::FromParams(SimpleParams(), Topo(1, 4)));
  EXPECT_NEAR(PredictUs(two, knobs), 3000.0 + 2 * 5.0 + 1.0 * 1e6 / 200.0 + 1000.0, 1e-3);
  // Four ranks: 2*log2(4) = 4 latency steps and 2*(3/4) of the bytes.
  EXPECT_NEAR(PredictUs(four, knobs), 3000.0 + 4 * 5.0 + 1.5 * 1e6 / 200.0 + 1000.0, 1e-3);
}

TEST(ReplayExactTest, HierarchicalIsTheSumOfItsThreeSteps) {
  NetworkParams p;
  p.at(Op::kAllreduce, Level::kIntra) = p.at(Op::kAllgather, Level::kIntra) = {1.0, 1000.0};
  p.at(Op::kAllreduce, Level::kCross) = p.at(Op::kAllgather, Level::kCross) = {50.0, 100.0};
  p.at(Op::kAllreduce, Level::kWorld) = p.at(Op::kAllgather, Level::kWorld) = {50.0, 100.0};
  p.copy = {0.0, 1e12};
  Knobs knobs = PlainKnobs(0.0, 1.0);
  knobs.hierarchical_allreduce = true;
  const NetworkModel net = NetworkModel::FromParams(p, Topo(2, 2));
  const Simulation sim = MakeSimulation(OneTensorTrace(Topo(2, 2), knobs), net);
  // Intra reduce-scatter 0.5*(2*1 + 1e6/1000) = 501; cross allreduce of 5e5 B on 2 nodes
  // 2*50 + 5e5/100 = 5100; intra allgather of 5e5 B per rank 1 + 5e5/1000 = 501.
  StepTrace timeline;
  EXPECT_NEAR(PredictUs(sim, knobs, &timeline), 3000.0 + 501.0 + 5100.0 + 501.0 + 1000.0, 1e-3);
  ASSERT_EQ(timeline.collectives.size(), 1u);
  EXPECT_EQ(timeline.collectives[0].algorithm, Algorithm::kHierarchical);
  knobs.hierarchical_allreduce = false;  // flat: 2*log2(4)*50 + 1.5*1e6/100
  EXPECT_NEAR(PredictUs(sim, knobs), 3000.0 + 200.0 + 15000.0 + 1000.0, 1e-3);
}

TEST(ReplayExactTest, NegotiationCostDependsOnTheCache) {
  NegotiationParams np;
  np.bits_fixed_us = 30.0;
  np.cached_per_tensor_us = 0.5;
  np.round_fixed_us = 100.0;
  np.uncached_per_tensor_us = 2.0;
  Knobs knobs = PlainKnobs(0.0, 1.0);
  const Simulation sim =
      MakeSimulation(MakeTrace(MakeWorkload({1000000, 1000000}, {2.3, 2.3}, 0.0, 2.5, 1.0),
                               Topo(1, 2), knobs, 9000.0, 10.0),
                     NetworkModel::FromParams(SimpleParams(), Topo(1, 2)), NegotiationModel(np));
  const double two_collectives_us = 2 * 5010.0;
  // Cache off: a coordinator round for two tensors.
  EXPECT_NEAR(PredictUs(sim, knobs), 3000.0 + 100.0 + 2 * 2.0 + two_collectives_us + 1000.0, 1e-3);
  // Cache big enough: both hit; only the bit-vector allreduce.
  knobs.cache_capacity = 2;
  EXPECT_NEAR(PredictUs(sim, knobs), 3000.0 + 30.0 + 2 * 0.5 + two_collectives_us + 1000.0, 1e-3);
  // Cache too small for the step's tensors (LRU over a cyclic order): bits and a round.
  knobs.cache_capacity = 1;
  EXPECT_NEAR(PredictUs(sim, knobs), 3000.0 + 30.0 + 100.0 + 2 * 2.0 + two_collectives_us + 1000.0,
              1e-3);
}

TEST(ReplayExactTest, FusionCopiesInAndOutThresholdZeroDoesNot) {
  const Workload w = MakeWorkload({1000000, 1000000}, {2.1, 2.2}, 0.0, 2.5, 1.0);
  const NetworkModel net = NetworkModel::FromParams(SimpleParams(4000.0), Topo(1, 2));
  const Simulation sim =
      MakeSimulation(MakeTrace(w, Topo(1, 2), PlainKnobs(64, 1), 9000.0, 10.0), net);
  StepTrace fused;
  // One fused collective of 2e6 B: copy in 500 us, allreduce 10 + 1e4 us, copy out 500 us.
  EXPECT_NEAR(PredictUs(sim, PlainKnobs(64, 1), &fused), 3000.0 + 500.0 + 10010.0 + 500.0 + 1000.0,
              1e-3);
  ASSERT_EQ(fused.collectives.size(), 1u);
  EXPECT_EQ(fused.collectives[0].tensors, (std::vector<int>{0, 1}));
  EXPECT_EQ(fused.collectives[0].bytes, 2000000);
  EXPECT_NEAR(fused.collectives[0].copy_in_end_us - fused.collectives[0].start_us, 500.0, 1e-6);
  EXPECT_NEAR(fused.collectives[0].end_us - fused.collectives[0].comm_end_us, 500.0, 1e-6);
  // Threshold 0: two collectives, one after the other; each copies its input to its output
  // (250 us) and reduces in place there (no copy-out).
  StepTrace split;
  EXPECT_NEAR(PredictUs(sim, PlainKnobs(0, 1), &split), 3000.0 + 2 * (250.0 + 5010.0) + 1000.0,
              1e-3);
  ASSERT_EQ(split.collectives.size(), 2u);
  EXPECT_DOUBLE_EQ(split.collectives[1].start_us, split.collectives[0].end_us);
  // A threshold below the pair's size: two collectives too.
  EXPECT_NEAR(PredictUs(sim, PlainKnobs(1.5, 1)), 3000.0 + 2 * (250.0 + 5010.0) + 1000.0, 1e-3);
}

TEST(ReplayExactTest, NextCycleWaitsForTheCollectivesAndWakesLate) {
  // A ready at 0.5 ms (cycle at 1 ms), B at 1.5 ms: B's cycle starts when A's collective
  // ends (no sleep, so no wake-up delay).
  const Workload w = MakeWorkload({1000000, 1000000}, {0.5, 1.5}, 0.0, 2.0, 1.0);
  const NetworkModel net = NetworkModel::FromParams(SimpleParams(), Topo(1, 2));
  ReplayOptions options = ExactOptions();
  options.wake_delay_us = 100.0;
  const Knobs knobs = PlainKnobs(0, 1);
  Simulation sim = MakeSimulation(MakeTrace(w, Topo(1, 2), knobs, 9000.0, 10.0), net,
                                  NegotiationModel(), options);
  StepTrace tl;
  // Idle cycles at 0 and 1.1 ms (woke 0.1 ms late): A at 1.1 ms, done at 6.11 ms; B's
  // cycle starts right then.
  EXPECT_NEAR(PredictUs(sim, knobs, &tl), 1100.0 + 2 * 5010.0 + 1000.0, 1e-3);
  ASSERT_EQ(tl.cycles.size(), 2u);
  EXPECT_NEAR(tl.cycles[0].start_us, 1100.0, 1e-6);
  EXPECT_NEAR(tl.cycles[1].start_us, tl.collectives[0].end_us, 1e-6);

  // Small tensors, B ready at 3.5 ms: A's cycle (1.1 ms) ends early, so the thread sleeps
  // to 2.1 ms and wakes at 2.2 ms; idle cycles follow 1.1 ms apart until B's.
  const Workload small = MakeWorkload({4000, 4000}, {0.5, 3.5}, 0.0, 4.0, 1.0);
  sim = MakeSimulation(MakeTrace(small, Topo(1, 2), knobs, 9000.0, 10.0), net, NegotiationModel(),
                       options);
  PredictUs(sim, knobs, &tl);
  ASSERT_EQ(tl.cycles.size(), 2u);
  // Cycles: 0, 1.1 (A), 2.2, 3.3, 4.4 (B).
  EXPECT_NEAR(tl.cycles[1].start_us, 4400.0, 1e-6);
  EXPECT_EQ(tl.cycles[1].collectives, 1);
}

TEST(ReplayExactTest, HorovodsCycleGridGoesOnFromTheStepBefore) {
  // Horovod's thread sleeps until its last cycle's start plus the cycle time, across steps:
  // under Phase::kCarried each step starts where the step before (ended as it does) left the
  // grid. One 1e6 B tensor ready at 2.3 ms, 5010 us of collective, a 1 ms tail, 4 ms cycles.
  const Knobs knobs = PlainKnobs(0.0, 4.0);
  const NetworkModel net = NetworkModel::FromParams(SimpleParams(), Topo(1, 2));
  ReplayOptions carried = ExactOptions();
  carried.phase = ReplayOptions::Phase::kCarried;
  const Trace big = OneTensorTrace(Topo(1, 2), knobs);
  // Grid at the step origin: cycles at 0 and 4 ms; done at 9.01 ms, then the tail.
  EXPECT_NEAR(PredictUs(MakeSimulation(big, net), knobs), 4000.0 + 5010.0 + 1000.0, 1e-3);
  // Carried: the cycle that ran the collective overran its 4 ms, so the next one starts when
  // it ends, 1 ms (the tail) before the step's end: the grid sits 4 - 1 = 3 ms into each step.
  StepTrace tl;
  EXPECT_NEAR(PredictUs(MakeSimulation(big, net, NegotiationModel(), carried), knobs, &tl),
              3000.0 + 5010.0 + 1000.0, 1e-3);
  ASSERT_EQ(tl.cycles.size(), 1u);
  EXPECT_NEAR(tl.cycles[0].start_us, 3000.0, 1e-3);

  // A 4000 B tensor (10 + 20 us) under 25 ms cycles that wake 0.1 ms late: the thread's
  // period is 25.1 ms and the step's compute, collective and tail fit in one, so each step
  // takes exactly one period (at the origin's grid: 25.1 + 0.03 + 1 ms).
  const Knobs slow = PlainKnobs(0.0, 25.0);
  const Trace small =
      MakeTrace(MakeWorkload({4000}, {2.3}, 0.0, 2.5, 1.0), Topo(1, 2), slow, 9000.0, 10.0);
  ReplayOptions fixed = ExactOptions();
  fixed.wake_delay_us = carried.wake_delay_us = 100.0;
  EXPECT_NEAR(PredictUs(MakeSimulation(small, net, NegotiationModel(), fixed), slow),
              25100.0 + 30.0 + 1000.0, 1e-3);
  EXPECT_NEAR(PredictUs(MakeSimulation(small, net, NegotiationModel(), carried), slow), 25100.0,
              1e-3);
}

TEST(ReplayExactTest, NoNegotiationCompletesBeforeTheSlowestRankJoins) {
  // The tensor is ready at 0.5 ms, but the step's first negotiation cannot complete before
  // 5 ms: the idle cycle at 0 waits until then, the next cycle starts at 5 ms at once.
  const Workload w = MakeWorkload({1000000}, {0.5}, 0.0, 2.0, 1.0);
  ReplayOptions options = ExactOptions();
  options.first_negotiation_us = 5000.0;
  NegotiationParams np;
  np.round_fixed_us = 100.0;
  const Simulation sim = MakeSimulation(MakeTrace(w, Topo(1, 2), PlainKnobs(0, 1), 9000.0, 10.0),
                                        NetworkModel::FromParams(SimpleParams(), Topo(1, 2)),
                                        NegotiationModel(np), options);
  StepTrace tl;
  EXPECT_NEAR(PredictUs(sim, PlainKnobs(0, 1), &tl), 5000.0 + 100.0 + 5010.0 + 1000.0, 1e-3);
  ASSERT_EQ(tl.cycles.size(), 1u);
  EXPECT_NEAR(tl.cycles[0].start_us, 5000.0, 1e-6);
  // A 20 ms cycle: the cycle after the blocked one comes at 20 ms.
  EXPECT_NEAR(PredictUs(sim, PlainKnobs(0, 20)), 20000.0 + 100.0 + 5010.0 + 1000.0, 1e-3);
}

TEST(ReplayExactTest, GroupsHoldTensorsUntilTheGroupIsReady) {
  const Workload w = MakeWorkload({1000000, 1000000}, {0.5, 2.5}, 0.0, 3.0, 1.0);
  const NetworkModel net = NetworkModel::FromParams(SimpleParams(), Topo(1, 2));
  Knobs knobs = PlainKnobs(64, 1);
  const Simulation sim = MakeSimulation(MakeTrace(w, Topo(1, 2), knobs, 9000.0, 10.0), net);
  StepTrace greedy, grouped;
  PredictUs(sim, knobs, &greedy);
  EXPECT_EQ(greedy.collectives.size(), 2u);
  knobs.num_groups = 1;  // both tensors in one group: one collective when the second is ready
  EXPECT_NEAR(PredictUs(sim, knobs, &grouped), 3000.0 + 10010.0 + 1000.0, 1e-3);
  ASSERT_EQ(grouped.collectives.size(), 1u);
  EXPECT_EQ(grouped.collectives[0].tensors, (std::vector<int>{0, 1}));
}

TEST(ReplayExactTest, ComputeBoundStepEndsWithTheBackwardPass) {
  // A tiny tensor early in a long backward pass: communication hides behind compute.
  const Workload w = MakeWorkload({4000}, {1.0}, 5.0, 50.0, 2.0);
  const Trace trace = MakeTrace(w, Topo(1, 2), PlainKnobs(0, 1), 7000.0, 57.5);
  const Simulation sim =
      MakeSimulation(trace, NetworkModel::FromParams(SimpleParams(), Topo(1, 2)));
  // Compute ends at 55 ms; the measured tail was 57.5 - 55 = 2.5 ms.
  EXPECT_NEAR(PredictUs(sim, PlainKnobs(0, 1)), 57500.0, 1e-3);
  EXPECT_NEAR(PredictUs(sim, PlainKnobs(0, 10)), 57500.0, 1e-3);
}

TEST(ReplayExactTest, ACollectiveBesideTheComputeRunsAtItsContendedRateUntilTheComputeEnds) {
  // One 1e6-byte tensor ready 0.5 ms into a backward pass that ends at 2.5 ms; the 0.5 ms
  // cycle launches it at once: 5010 us alone (2 * 5 us + 1e6 B / 200 B/us).
  const Workload w = MakeWorkload({1000000}, {0.5}, 0.0, 2.5, 1.0);
  const Trace trace = MakeTrace(w, Topo(1, 2), PlainKnobs(0, 0.5), 9000.0, 10.0);
  const NetworkModel net = NetworkModel::FromParams(SimpleParams(), Topo(1, 2));
  // The recorded tail: 10 ms - max(2.5 ms, 9 ms) = 1 ms.
  EXPECT_NEAR(PredictUs(MakeSimulation(trace, net), PlainKnobs(0, 0.5)), 500 + 5010 + 1000, 1e-3);
  ReplayOptions contended = ExactOptions();
  contended.comm_contention = 2.0;
  const Simulation sim = MakeSimulation(trace, net, NegotiationModel(), contended);
  // Until 2.5 ms at half its rate: 2000 us of wall time do 1000 us of its work; the other
  // 4010 us run at full rate after.
  EXPECT_NEAR(PredictUs(sim, PlainKnobs(0, 0.5)), 2500 + 4010 + 1000, 1e-3);
  // Launched after the compute (a 3 ms cycle), it runs at its full rate.
  EXPECT_NEAR(PredictUs(sim, PlainKnobs(0, 3.0)), 3000 + 5010 + 1000, 1e-3);
  // All of it within the compute: a 4x contention on a 1e5-byte tensor (510 us alone) ready at
  // 0.5 ms ends at 0.5 + 4 * 0.51 = 2.54 ms, past the compute's 2.5 ms: the last 40 us of
  // wall time are 10 us of work done at the full rate, so it ends at 2.51 ms.
  const Trace small = MakeTrace(MakeWorkload({100000}, {0.5}, 0.0, 2.5, 1.0), Topo(1, 2),
                                PlainKnobs(0, 0.5), 9000.0, 10.0);
  contended.comm_contention = 4.0;
  StepTrace timeline;
  PredictUs(MakeSimulation(small, net, NegotiationModel(), contended), PlainKnobs(0, 0.5),
            &timeline);
  ASSERT_EQ(timeline.collectives.size(), 1u);
  EXPECT_NEAR(timeline.collectives[0].comm_end_us, 2510.0, 1e-3);
}

TEST(ReplayExactTest, SlowestRankDecidesReadiness) {
  const Workload w = MakeWorkload({1000000}, {0.5}, 0.0, 2.5, 1.0);
  Trace trace = MakeTrace(w, Topo(1, 2), PlainKnobs(0, 1), 9000.0, 10.0);
  trace.steps[0].tensors[1].ready_us = 2300.0;  // rank 1 is late
  const Simulation sim =
      MakeSimulation(trace, NetworkModel::FromParams(SimpleParams(), Topo(1, 2)));
  EXPECT_NEAR(PredictUs(sim, PlainKnobs(0, 1)), 3000.0 + 5010.0 + 1000.0, 1e-3);
}

TEST(ReplayTimelineTest, RowsAreOrderedAndCoverEveryTensor) {
  std::vector<int64_t> bytes;
  std::vector<double> ready;
  for (int i = 0; i < 40; ++i) {
    bytes.push_back(4000 * (1 + i % 7));
    ready.push_back(0.1 * i);
  }
  const Workload w = MakeWorkload(bytes, ready, 1.0, 4.0, 1.0);
  const Simulation sim = MakeSimulation(MakeTrace(w, Topo(1, 4), PlainKnobs(0.01, 0.5), 9000, 10),
                                        NetworkModel::FromParams(SimpleParams(4000), Topo(1, 4)));
  StepTrace tl;
  PredictUs(sim, PlainKnobs(0.01, 0.5), &tl);
  ASSERT_EQ(tl.tensors.size(), 40u);
  std::vector<bool> seen(40, false);
  double last_end = 0.0;
  for (size_t i = 0; i < tl.collectives.size(); ++i) {
    const CollectiveRecord& c = tl.collectives[i];
    EXPECT_EQ(c.seq, static_cast<int>(i));
    // Threshold 0.01 MB = 10486 B: only tensors that fit together share a collective.
    if (c.tensors.size() > 1) {
      EXPECT_LE(c.bytes, 10486);
    }
    EXPECT_GE(c.start_us, last_end);
    EXPECT_LE(c.start_us, c.copy_in_end_us);
    EXPECT_LE(c.copy_in_end_us, c.comm_end_us);
    EXPECT_LE(c.comm_end_us, c.end_us);
    last_end = c.end_us;
    for (int t : c.tensors) {
      EXPECT_FALSE(seen[t]);
      seen[t] = true;
      EXPECT_GE(c.start_us, tl.tensors[t].ready_us);
      EXPECT_DOUBLE_EQ(tl.tensors[t].done_us, c.end_us);
    }
  }
  for (bool s : seen) EXPECT_TRUE(s);
  EXPECT_GT(tl.score_bytes_per_s, 0.0);
}

// Every cycle of a replay fuses exactly what FusionPolicy::Cycle makes of the tensors that
// became ready since the previous cycle, with groups off and on: the replay runs the
// executor's fusion decision, not a copy of it.
TEST(ReplayFusionTest, EachCycleFusesWhatTheSharedPolicySays) {
  std::vector<int64_t> bytes;
  std::vector<double> ready;
  for (int i = 0; i < 30; ++i) {
    bytes.push_back(4000 * (1 + (i * 5) % 9));
    ready.push_back(0.15 * i);
  }
  Workload w = MakeWorkload(bytes, ready, 1.0, 5.0, 1.0);
  for (int i = 0; i < 30; ++i) {
    if (i % 7 == 3) w.tensors[i].op = Op::kAllgather;
    if (i % 5 == 1) {
      w.tensors[i].dtype = DType::kFloat16;
      w.tensors[i].shape = {bytes[i] / 2};
    }
  }
  const Topology topo = Topo(2, 2);
  const int world = topo.world_size();
  const Simulation sim = MakeSimulation(MakeTrace(w, topo, PlainKnobs(64, 1), 9000, 10),
                                        NetworkModel::FromParams(SimpleParams(4000), topo));
  for (double threshold_mb : {0.0, 0.02, 64.0}) {
    for (int groups : {0, 1, 4}) {
      for (double cycle_ms : {0.5, 2.0}) {
        Knobs knobs = PlainKnobs(threshold_mb, cycle_ms);
        knobs.num_groups = groups;
        SCOPED_TRACE(::testing::Message() << "threshold " << threshold_mb << " MB, groups "
                                          << groups << ", cycle " << cycle_ms << " ms");
        StepTrace tl;
        PredictUs(sim, knobs, &tl);
        ASSERT_EQ(tl.tensors.size(), 30u);
        FusionPolicy policy(w, knobs.threshold_bytes(), groups, world);
        double previous_start_us = -std::numeric_limits<double>::infinity();
        size_t next_collective = 0;
        int held_cycles = 0;  // cycles that negotiated tensors but released none
        for (const CycleRecord& cycle : tl.cycles) {
          std::vector<int> newly_ready;
          for (const TensorEvent& t : tl.tensors) {
            if (t.ready_us > previous_start_us && t.ready_us <= cycle.start_us) {
              newly_ready.push_back(t.tensor);
            }
          }
          previous_start_us = cycle.start_us;
          EXPECT_EQ(cycle.submitted, static_cast<int>(newly_ready.size()));
          const std::vector<FusedCollective> expected = policy.Cycle(newly_ready);
          ASSERT_EQ(cycle.collectives, static_cast<int>(expected.size()));
          if (cycle.submitted > 0 && expected.empty()) ++held_cycles;
          for (const FusedCollective& f : expected) {
            ASSERT_LT(next_collective, tl.collectives.size());
            const CollectiveRecord& c = tl.collectives[next_collective++];
            EXPECT_EQ(c.cycle, cycle.cycle);
            EXPECT_EQ(c.tensors, f.tensors);
            EXPECT_EQ(c.op, f.op);
            EXPECT_EQ(c.bytes, f.bytes);
          }
        }
        EXPECT_EQ(next_collective, tl.collectives.size());
        // Four groups over 30 tensors ready across 4.5 ms: some cycle must hold its tensors.
        if (groups == 4) {
          EXPECT_GT(held_cycles, 0);
        }
      }
    }
  }
}

}  // namespace
}  // namespace autotune::sim
