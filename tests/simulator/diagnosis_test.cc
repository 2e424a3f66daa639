// Diagnosis on traces built by hand, where every part of the step is known by construction,
// and on synthetic traces whose compute and tail are known from the workload.
#include "simulator/diagnosis.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tests/support/sim_fixtures.h"
#include "tests/support/synthetic.h"

namespace autotune::sim {
namespace {

using testing::MakeWorkload;
using testing::Topo;

constexpr double kMs = 1000.0;  // microseconds per millisecond

CollectiveRecord Collective(int seq, int cycle, int tensor, double start_ms, double copy_in_ms,
                            double comm_ms, double copy_out_ms) {
  CollectiveRecord c;
  c.seq = seq;
  c.cycle = cycle;
  c.bytes = 4096;
  c.tensors = {tensor};
  c.start_us = start_ms * kMs;
  c.copy_in_end_us = (start_ms + copy_in_ms) * kMs;
  c.comm_end_us = (start_ms + copy_in_ms + comm_ms) * kMs;
  c.end_us = (start_ms + copy_in_ms + comm_ms + copy_out_ms) * kMs;
  return c;
}

CycleRecord Cycle(int index, double start_ms, double negotiate_ms) {
  CycleRecord c;
  c.cycle = index;
  c.start_us = start_ms * kMs;
  c.negotiate_end_us = (start_ms + negotiate_ms) * kMs;
  c.submitted = c.responses = c.collectives = 1;
  return c;
}

// Two ranks, two tensors. Backward runs 10..90 ms. Tensor 0 is ready at 49 ms on rank 0 and
// 50 ms on rank 1; cycle 0 negotiates it 50..52 and its collective runs 52..60 (1 + 6 + 1):
// hidden behind compute. Tensor 1 is ready at 96 ms on rank 0 and 100 ms on rank 1 (compute
// ends at 100 ms, 4 ms of it rank skew); nothing runs 100..103 (cycle wait 3), cycle 1
// negotiates 103..108 (5), its collective copies in 108..110, reduces 110..136, copies out
// 136..138 (copies 4, collective 26); the optimizer and barrier take 7 ms: step 145 ms.
Trace HandMadeTrace(double step_ms = 145.0) {
  Trace trace;
  trace.run.id = 3;
  trace.run.workload = MakeWorkload({4096, 4096}, {39.0, 86.0}, 10.0, 80.0, 7.0);
  trace.run.topology = Topo(1, 2);
  StepTrace st;
  st.step_ms = step_ms;
  st.backward_start_us = 10 * kMs;
  st.tensors = {{0, 0, 49 * kMs, 60 * kMs},
                {1, 0, 50 * kMs, 60 * kMs},
                {0, 1, 96 * kMs, 138 * kMs},
                {1, 1, 100 * kMs, 138 * kMs}};
  st.cycles = {Cycle(0, 50, 2), Cycle(1, 103, 5)};
  st.collectives = {Collective(0, 0, 0, 52, 1, 6, 1), Collective(1, 1, 1, 108, 2, 26, 2)};
  trace.steps.push_back(st);
  return trace;
}

TEST(DiagnosisTest, HandMadeStepHasTheConstructedParts) {
  Diagnosis d;
  ASSERT_TRUE(Diagnose(HandMadeTrace(), &d).ok());
  ASSERT_EQ(d.steps.size(), 1u);
  const StepDiagnosis& s = d.median();
  EXPECT_NEAR(s.step_ms, 145.0, 1e-9);
  EXPECT_NEAR(s.compute_ms, 107.0, 1e-9);  // 100 ms to the last gradient + 7 ms tail
  EXPECT_NEAR(s.rank_skew_ms, 4.0, 1e-9);
  EXPECT_NEAR(s.cycle_wait_ms, 3.0, 1e-9);
  EXPECT_NEAR(s.negotiation_ms, 5.0, 1e-9);
  EXPECT_NEAR(s.copy_ms, 4.0, 1e-9);
  EXPECT_NEAR(s.collective_ms, 26.0, 1e-9);
  EXPECT_NEAR(s.exposed_comm_ms(), 38.0, 1e-9);
  EXPECT_NEAR(s.total_comm_ms, 2.0 + 8.0 + 5.0 + 30.0, 1e-9);
  EXPECT_NEAR(s.hidden_comm_ms(), 10.0, 1e-9);
  EXPECT_NEAR(s.ideal_step_ms(), 107.0, 1e-9);
  EXPECT_NEAR(d.max_gain_fraction, 38.0 / 145.0, 1e-12);
  EXPECT_EQ(d.verdict, DiagnosisVerdict::kTune);
  EXPECT_NE(d.verdict_line.find("26.2%"), std::string::npos) << d.verdict_line;
  EXPECT_NE(d.verdict_line.find("largest part: collectives"), std::string::npos);
  EXPECT_NE(d.verdict_line.find("run autotune search"), std::string::npos);
}

TEST(DiagnosisTest, OtherRanksFinishingLastCountAsCollectiveTime) {
  Trace trace = HandMadeTrace();
  trace.steps[0].tensors[3].done_us = 139 * kMs;  // rank 1 copies out 1 ms after rank 0
  Diagnosis d;
  ASSERT_TRUE(Diagnose(trace, &d).ok());
  EXPECT_NEAR(d.median().collective_ms, 27.0, 1e-9);
  EXPECT_NEAR(d.median().compute_ms, 106.0, 1e-9);  // the tail is 1 ms shorter
  EXPECT_NEAR(d.median().cycle_wait_ms, 3.0, 1e-9);
}

TEST(DiagnosisTest, OverlappingActivitiesAreCountedOnce) {
  // A cycle negotiating 112..118 while the collective reduces (a stream that runs on while
  // cycles go on): the instants belong to the collective; the second half of the cycle
  // wait 100..103 turns into negotiation by a cycle 101.5..103.
  Trace trace = HandMadeTrace();
  trace.steps[0].cycles.push_back(Cycle(2, 112, 6));
  trace.steps[0].cycles.push_back(Cycle(3, 101.5, 1.5));
  Diagnosis d;
  ASSERT_TRUE(Diagnose(trace, &d).ok());
  const StepDiagnosis& s = d.median();
  EXPECT_NEAR(s.collective_ms, 26.0, 1e-9);
  EXPECT_NEAR(s.negotiation_ms, 6.5, 1e-9);
  EXPECT_NEAR(s.cycle_wait_ms, 1.5, 1e-9);
  EXPECT_NEAR(s.copy_ms, 4.0, 1e-9);
  EXPECT_NEAR(s.total_comm_ms, 45.0 + 1.5, 1e-9);
}

TEST(DiagnosisTest, FullyHiddenCommunicationKeepsTheDefaults) {
  // Tensor 1 ready at 80 ms on both ranks, negotiated 81..82 and reduced 82..89 (1 + 5 + 1):
  // everything is done before backward compute ends at 90 ms; the step ends at 107 ms.
  Trace trace = HandMadeTrace(107.0);
  StepTrace& st = trace.steps[0];
  st.tensors[2].ready_us = st.tensors[3].ready_us = 80 * kMs;
  st.tensors[2].done_us = st.tensors[3].done_us = 89 * kMs;
  st.cycles[1] = Cycle(1, 81, 1);
  st.collectives[1] = Collective(1, 1, 1, 82, 1, 5, 1);
  Diagnosis d;
  ASSERT_TRUE(Diagnose(trace, &d).ok());
  const StepDiagnosis& s = d.median();
  EXPECT_NEAR(s.exposed_comm_ms(), 0.0, 1e-9);
  EXPECT_NEAR(s.compute_ms, 107.0, 1e-9);
  EXPECT_NEAR(s.rank_skew_ms, 0.0, 1e-9);
  EXPECT_NEAR(s.total_comm_ms, 2.0 + 8.0 + 1.0 + 7.0, 1e-9);
  EXPECT_NEAR(s.hidden_comm_ms(), s.total_comm_ms, 1e-9);
  EXPECT_NEAR(d.max_gain_fraction, 0.0, 1e-12);
  EXPECT_EQ(d.verdict, DiagnosisVerdict::kKeepDefaults);
  EXPECT_NE(d.verdict_line.find("keep the defaults"), std::string::npos) << d.verdict_line;
  EXPECT_NE(d.verdict_line.find("(100% of it hidden behind compute)"), std::string::npos)
      << d.verdict_line;
}

// On CPUs (mpi) the hidden communication shares the cores with compute: a keep-the-defaults
// line says the bound does not count that; on GPUs (nccl) it does not apply.
TEST(DiagnosisTest, HiddenCommunicationOnCpusIsCaveated) {
  Trace trace = HandMadeTrace(107.0);
  StepTrace& st = trace.steps[0];
  st.tensors[2].ready_us = st.tensors[3].ready_us = 80 * kMs;
  st.tensors[2].done_us = st.tensors[3].done_us = 89 * kMs;
  st.cycles[1] = Cycle(1, 81, 1);
  st.collectives[1] = Collective(1, 1, 1, 82, 1, 5, 1);
  const std::string caveat = "competes with compute for the cores";
  trace.run.backend = BackendKind::kMpi;
  Diagnosis d;
  ASSERT_TRUE(Diagnose(trace, &d).ok());
  EXPECT_EQ(d.verdict, DiagnosisVerdict::kKeepDefaults);
  EXPECT_NE(d.verdict_line.find(caveat), std::string::npos) << d.verdict_line;  // 18 of 107 ms
  trace.run.backend = BackendKind::kNccl;
  ASSERT_TRUE(Diagnose(trace, &d).ok());
  EXPECT_EQ(d.verdict_line.find(caveat), std::string::npos) << d.verdict_line;
}

TEST(DiagnosisTest, RankSkewIsTheSlowestRanksLateness) {
  // Rank 0's tensor 1 at 80 ms while rank 1's is at 100 ms: backward ends at 90 on rank 0.
  Trace trace = HandMadeTrace();
  trace.steps[0].tensors[2].ready_us = 80 * kMs;
  Diagnosis d;
  ASSERT_TRUE(Diagnose(trace, &d).ok());
  EXPECT_NEAR(d.median().rank_skew_ms, 10.0, 1e-9);
}

TEST(DiagnosisTest, ReportsTheMedianStep) {
  Trace trace = HandMadeTrace();
  for (double step_ms : {200.0, 150.0, 160.0}) {
    trace.steps.push_back(trace.steps[0]);
    trace.steps.back().step = static_cast<int>(trace.steps.size()) - 1;
    trace.steps.back().step_ms = step_ms;
  }
  Diagnosis d;
  ASSERT_TRUE(Diagnose(trace, &d).ok());
  // Sorted: 145 (step 0), 150 (2), 160 (3), 200 (1); the lower middle is step 2.
  EXPECT_EQ(d.median().step, 2);
  EXPECT_NEAR(d.median().compute_ms, 112.0, 1e-9);  // the longer tail is compute
  // The bound is the median of the steps' own gains (38 ms exposed in each): of 38/145,
  // 38/150, 38/160 and 38/200 the mean of the middle two.
  EXPECT_NEAR(d.max_gain_fraction, (38.0 / 150.0 + 38.0 / 160.0) / 2.0, 1e-12);
  trace.steps.pop_back();
  ASSERT_TRUE(Diagnose(trace, &d).ok());
  EXPECT_EQ(d.median().step, 2);  // 145, 150, 200: the middle one
  EXPECT_NEAR(d.max_gain_fraction, 38.0 / 150.0, 1e-12);
}

TEST(DiagnosisTest, TheBoundIsTheMedianOfTheStepsGainsNotTheMedianStepsGain) {
  // A: the hand-made step, 38 of 145 ms exposed (26.2%). B: its tail 50 ms longer, 38 of 195
  // (19.5%). C: its collective reduces 50 ms longer, 88 of 195 exposed (45.1%). The median
  // step by time is B (A 145, B 195, C 195), but the median of the gains is A's 38/145.
  Trace trace = HandMadeTrace();
  trace.steps.push_back(trace.steps[0]);
  trace.steps.back().step = 1;
  trace.steps.back().step_ms = 195.0;
  trace.steps.push_back(trace.steps[0]);
  StepTrace& c = trace.steps.back();
  c.step = 2;
  c.step_ms = 195.0;
  c.collectives[1] = Collective(1, 1, 1, 108, 2, 76, 2);
  c.tensors[2].done_us = c.tensors[3].done_us = 188 * kMs;
  Diagnosis d;
  ASSERT_TRUE(Diagnose(trace, &d).ok());
  EXPECT_EQ(d.median().step, 1);
  EXPECT_NEAR(d.steps[2].exposed_comm_ms(), 88.0, 1e-9);
  EXPECT_NEAR(d.max_gain_fraction, 38.0 / 145.0, 1e-12);
}

TEST(DiagnosisTest, AnImportedRunsBackwardEndsWithItsLastGradient) {
  // The workload says backward runs 120 ms (10..130), past the last gradient at 100 ms. A
  // recorded run computes until 130: exposed is only the collective's end 130..136 and the
  // copy-out 136..138. An imported run's workload is a median of the steps kept, so its
  // backward ends with the step's own last gradient: the parts of the hand-made step.
  Trace trace = HandMadeTrace();
  trace.run.workload.backward_ms = 120.0;
  Diagnosis d;
  ASSERT_TRUE(Diagnose(trace, &d).ok());
  EXPECT_NEAR(d.median().compute_ms, 130.0 + 7.0, 1e-9);
  EXPECT_NEAR(d.median().exposed_comm_ms(), 8.0, 1e-9);
  trace.run.kind = RunKind::kImported;
  ASSERT_TRUE(Diagnose(trace, &d).ok());
  EXPECT_NEAR(d.median().compute_ms, 107.0, 1e-9);
  EXPECT_NEAR(d.median().exposed_comm_ms(), 38.0, 1e-9);
  EXPECT_NEAR(d.median().rank_skew_ms, 4.0, 1e-9);
}

TEST(DiagnosisTest, ASimulatedRunsBackwardEndsWithItsLastGradient) {
  // A replay that took the tracer's cost off an imported run shrank its compute: the
  // simulated step's last gradient comes at 100 ms while the workload it carries (the source
  // run's) still says backward ends at 130 ms. Its compute ends with its own last gradient:
  // the hand-made step's parts, not the 8 ms a 130 ms floor would leave exposed.
  Trace trace = HandMadeTrace();
  trace.run.workload.backward_ms = 120.0;
  trace.run.kind = RunKind::kSimulated;
  Diagnosis d;
  ASSERT_TRUE(Diagnose(trace, &d).ok());
  EXPECT_NEAR(d.median().compute_ms, 107.0, 1e-9);
  EXPECT_NEAR(d.median().exposed_comm_ms(), 38.0, 1e-9);
  EXPECT_NEAR(d.median().collective_ms, 26.0, 1e-9);
  EXPECT_NEAR(d.median().rank_skew_ms, 4.0, 1e-9);
}

TEST(DiagnosisTest, VerdictThresholdIsTheNoiseFraction) {
  StepDiagnosis s;
  s.step_ms = 100.0;
  s.compute_ms = 95.0;
  s.collective_ms = 5.0;
  s.total_comm_ms = 20.0;
  std::string line;
  EXPECT_EQ(Judge(s, 0.05, &line), DiagnosisVerdict::kTune);
  EXPECT_NE(line.find("tuning can gain up to 5.0%"), std::string::npos) << line;
  s.compute_ms = 96.0;
  s.collective_ms = 4.0;
  EXPECT_EQ(Judge(s, 0.04, &line), DiagnosisVerdict::kKeepDefaults);
  EXPECT_NE(line.find("communication is 20.0% of the step (80% of it hidden"), std::string::npos)
      << line;
  EXPECT_NE(line.find("at most 4.0%, below the 5% noise"), std::string::npos) << line;
}

TEST(DiagnosisTest, RunWithoutStepsIsAnError) {
  Trace trace = HandMadeTrace();
  trace.steps.clear();
  Diagnosis d;
  const Status s = Diagnose(trace, &d);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("run 3 has no recorded steps"), std::string::npos) << s.message();
}

// A synthetic trace without jitter: compute ends at forward + backward on every rank (every
// tensor is ready inside the backward pass) and the tail is the optimizer, so compute is
// their sum and the rest of each step is exposed communication.
TEST(DiagnosisTest, SyntheticStepsAddUpAndComputeIsTheWorkloads) {
  Workload w = MakeWorkload({64 << 10, 256 << 10, 1 << 20, 256 << 10}, {5.0, 10.0, 20.0, 29.0},
                            10.0, 30.0, 4.0);
  for (double bytes_per_us : {1e3, 1e5}) {  // slow network: exposed; fast: hidden
    const NetworkModel net =
        NetworkModel::FromParams(NetworkParams::Uniform(40, bytes_per_us), Topo(2, 2));
    SyntheticTraceOptions so;
    so.steps = 4;
    so.rank_jitter_us = 0.0;
    Trace trace;
    ASSERT_TRUE(SynthesizeTrace(w, testing::PlainKnobs(4, 1), net, NegotiationModel::Prior(net, 4),
                                so, &trace)
                    .ok());
    Diagnosis d;
    ASSERT_TRUE(Diagnose(trace, &d).ok());
    ASSERT_EQ(d.steps.size(), 4u);
    for (size_t i = 0; i < d.steps.size(); ++i) {
      const StepDiagnosis& s = d.steps[i];
      EXPECT_NEAR(s.step_ms, trace.steps[i].step_ms, 1e-12);
      EXPECT_NEAR(s.compute_ms, 44.0, 1e-9);
      EXPECT_NEAR(s.rank_skew_ms, 0.0, 1e-12);
      EXPECT_NEAR(s.compute_ms + s.exposed_comm_ms(), s.step_ms, 1e-9 * s.step_ms);
      EXPECT_NEAR(s.exposed_comm_ms(), s.step_ms - 44.0, 1e-9);
    }
    if (bytes_per_us < 100) {
      EXPECT_GT(d.max_gain_fraction, 0.5);  // 1.5 MB at 1 kB/us: seconds of collectives
      EXPECT_GT(d.median().collective_ms, d.median().negotiation_ms);
      EXPECT_EQ(d.verdict, DiagnosisVerdict::kTune);
    } else {
      EXPECT_LT(d.max_gain_fraction, kTuningNoiseFraction);
      EXPECT_EQ(d.verdict, DiagnosisVerdict::kKeepDefaults);
    }
  }
}

TEST(DiagnosisTest, MannKendallByHand) {
  // 1..6 rising: all 15 pairs rise, S = 15, variance 6*5*17/18, z = (15 - 1) / sd.
  EXPECT_NEAR(MannKendallZ({1, 2, 3, 4, 5, 6}), 14.0 / std::sqrt(6.0 * 5 * 17 / 18), 1e-12);
  EXPECT_NEAR(MannKendallZ({6, 5, 4, 3, 2, 1}), -14.0 / std::sqrt(6.0 * 5 * 17 / 18), 1e-12);
  // 3, 1, 2: pairs -1, -1, +1: S = -1, continuity-corrected to 0.
  EXPECT_EQ(MannKendallZ({3, 1, 2}), 0.0);
  // Three tied pairs: 12 of 15 pairs rise, the ties take 3 * (2*1*9/18) off the variance.
  EXPECT_NEAR(MannKendallZ({1, 1, 2, 2, 3, 3}), 11.0 / std::sqrt(6.0 * 5 * 17 / 18 - 3.0),
              1e-12);
  EXPECT_EQ(MannKendallZ({5, 5, 5, 5}), 0.0);
  EXPECT_EQ(MannKendallZ({1, 2}), 0.0);
}

// The hand-made step repeated with these step times: 38 ms of each exposed, the rest compute.
Trace StepsOfTimes(const std::vector<double>& step_ms) {
  Trace trace = HandMadeTrace();
  const StepTrace first = trace.steps[0];
  trace.steps.clear();
  for (double ms : step_ms) {
    trace.steps.push_back(first);
    trace.steps.back().step = static_cast<int>(trace.steps.size()) - 1;
    trace.steps.back().step_ms = ms;
  }
  return trace;
}

TEST(DiagnosisTest, TheGainsSpreadAndDrift) {
  // Slower and slower steps with the same 38 ms exposed: the shares fall in order, all 28
  // pairs of 8: S = -28, z = -27 / sqrt(8*7*21/18).
  Diagnosis d;
  ASSERT_TRUE(Diagnose(StepsOfTimes({145, 150, 155, 160, 165, 170, 175, 180}), &d).ok());
  EXPECT_NEAR(d.gain_trend_z, -27.0 / std::sqrt(8.0 * 7 * 21 / 18), 1e-12);
  EXPECT_TRUE(d.drifting);
  EXPECT_NEAR(d.gain_first_half, (38.0 / 150 + 38.0 / 155) / 2, 1e-12);
  EXPECT_NEAR(d.gain_second_half, (38.0 / 170 + 38.0 / 175) / 2, 1e-12);
  // Nearest rank of 8: the 2nd and 6th smallest shares.
  EXPECT_NEAR(d.gain_quartile_low, 38.0 / 175, 1e-12);
  EXPECT_NEAR(d.gain_quartile_high, 38.0 / 155, 1e-12);
  EXPECT_NE(d.verdict_line.find("the steps drift"), std::string::npos) << d.verdict_line;
  EXPECT_EQ(d.max_gain_fraction, d.gain_second_half);

  // The same two paces alternating: S = -10 + 6 = -4; two groups of 4 ties take 2 * 4*3*13/18
  // off the variance: z = -3 / sqrt(48), no trend.
  ASSERT_TRUE(Diagnose(StepsOfTimes({145, 160, 145, 160, 145, 160, 145, 160}), &d).ok());
  EXPECT_NEAR(d.gain_trend_z, -3.0 / std::sqrt(48.0), 1e-12);
  EXPECT_FALSE(d.drifting);
  EXPECT_EQ(d.verdict_line.find("the steps drift"), std::string::npos) << d.verdict_line;

  // Fewer than kMinDriftSteps: not tested, the halves are the bound, the median of all five.
  ASSERT_TRUE(Diagnose(StepsOfTimes({145, 150, 155, 160, 165}), &d).ok());
  EXPECT_NEAR(d.max_gain_fraction, 38.0 / 155, 1e-12);
  EXPECT_FALSE(d.drifting);
  EXPECT_EQ(d.gain_trend_z, 0.0);
  EXPECT_EQ(d.gain_first_half, d.max_gain_fraction);
  EXPECT_EQ(d.gain_second_half, d.max_gain_fraction);
}

TEST(DiagnosisTest, TheBoundIsTheLaterHalfsSoLeavingOutLeadingStepsMovesItLittle) {
  // Twelve steps slowing by 5 ms each (145..200) with 38 ms exposed: the later six
  // (175..200) give the bound, the median of 38/185 and 38/190, and the line says which.
  std::vector<double> times;
  for (int i = 0; i < 12; ++i) times.push_back(145.0 + 5.0 * i);
  Diagnosis d;
  ASSERT_TRUE(Diagnose(StepsOfTimes(times), &d).ok());
  const double twelve = (38.0 / 185 + 38.0 / 190) / 2;
  EXPECT_NEAR(d.max_gain_fraction, twelve, 1e-12);
  EXPECT_NE(d.verdict_line.find("the median over the last 6 of 12 steps"), std::string::npos)
      << d.verdict_line;
  // Four more leading steps left out (165..200): the later four (185..200), the median of
  // 38/190 and 38/195, 0.5 points lower; the median over every step would move from 38/170 and
  // 38/175 to 38/180 and 38/185, 1.2 points.
  times.erase(times.begin(), times.begin() + 4);
  ASSERT_TRUE(Diagnose(StepsOfTimes(times), &d).ok());
  EXPECT_NEAR(d.max_gain_fraction, (38.0 / 190 + 38.0 / 195) / 2, 1e-12);
  EXPECT_NE(d.verdict_line.find("the median over the last 4 of 8 steps"), std::string::npos)
      << d.verdict_line;
  // The same eight, imported with those four as their warm-up (the run's warmup_steps): the
  // later half of the twelve recorded, the last six of the eight kept (175..200), the bound of
  // the twelve again.
  Trace imported = StepsOfTimes(times);
  imported.run.warmup_steps = 4;
  ASSERT_TRUE(Diagnose(imported, &d).ok());
  EXPECT_NEAR(d.max_gain_fraction, twelve, 1e-12);
  EXPECT_NE(d.verdict_line.find("the median over the last 6 of 8 steps"), std::string::npos)
      << d.verdict_line;
  // A warm-up of more than half the recorded steps (9 of 17): all eight kept.
  imported.run.warmup_steps = 9;
  ASSERT_TRUE(Diagnose(imported, &d).ok());
  EXPECT_NEAR(d.max_gain_fraction, (38.0 / 180 + 38.0 / 185) / 2, 1e-12);
  EXPECT_EQ(d.gain_steps, 8u);
}

}  // namespace
}  // namespace autotune::sim
