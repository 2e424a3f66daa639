// Compute slowed by communication (simulator/cpu_share.h): the share and stretch formulas on
// hand-computed cases, a replay whose fixed point is solved by hand, and the fit recovering
// a known spin share from a run at another setting, and the cycles' share from two.
#include "simulator/cpu_share.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "simulator/simulation.h"
#include "tests/support/sim_fixtures.h"
#include "tests/support/synthetic.h"

namespace autotune::sim {
namespace {

using testing::MakeSimulation;
using testing::MakeTrace;
using testing::MakeWorkload;
using testing::PlainKnobs;
using testing::Topo;

CpuShareParams TwoCoresFourRanks() {
  CpuShareParams p;
  p.cores = 2;
  p.ranks = 4;
  return p;
}

TEST(CpuShareTest, TheCommunicationThreadsShareIsItsCpuTimeOverTheStep) {
  CpuShareParams p = TwoCoresFourRanks();
  p.sigma = 0.5;
  // 0.5 * 300 us + 10 cycles * 5 us = 200 us of 1000.
  EXPECT_DOUBLE_EQ(CommThreadShare(p, {300.0, 10.0, 1000.0, 5.0}), 0.2);
  // Never more than the whole step.
  EXPECT_DOUBLE_EQ(CommThreadShare(p, {5000.0, 0.0, 1000.0, 5.0}), 1.0);
}

TEST(CpuShareTest, ComputeStretchesByTheThreadsWantingCoresOverTheCores) {
  const CpuShareParams p = TwoCoresFourRanks();
  // 4 compute threads + 4 * 0.5 communication + 1 tracer = 7 threads on 2 cores.
  EXPECT_DOUBLE_EQ(ComputeStretch(p, 0.5, 1.0), 3.5);
  // Enough cores: no stretch.
  CpuShareParams roomy = p;
  roomy.cores = 16;
  EXPECT_DOUBLE_EQ(ComputeStretch(roomy, 0.5, 1.0), 1.0);
  // Not known: no stretch.
  EXPECT_DOUBLE_EQ(ComputeStretch(CpuShareParams(), 1.0, 1.0), 1.0);
}

TEST(CpuShareTest, CpuShareOfARunCountsTheRanksOfEveryNodeOnTheHost) {
  RunInfo run;
  run.topology = Topo(2, 2);
  run.host.cores = 2;
  run.host.nodes_per_host = 2;
  const CpuShareParams p = CpuShareOf(run);
  EXPECT_EQ(p.cores, 2);
  EXPECT_EQ(p.ranks, 4);
}

// One 1 MiB tensor ready 10 ms into the step (no forward), backward ends then, the step took
// 20 ms: a 10 ms tail. No collective was recorded, so the recorded stretch is 4/2 = 2. The
// network runs the allreduce in exactly 10 ms (2 * 3/4 * B / bandwidth), copies are free.
Simulation OneTensorSimulation(double sigma) {
  Trace trace = MakeTrace(MakeWorkload({1 << 20}, {10.0}, 0.0, 10.0, 0.0), Topo(2, 2),
                          PlainKnobs(64, 0.001), 0.0, 20.0);
  trace.run.host.cores = 2;
  trace.run.host.nodes_per_host = 2;
  NetworkParams params = NetworkParams::Uniform(0.0, 1.5 * (1 << 20) / 10000.0);
  params.copy = {0.0, 1e12};
  const NetworkModel network = NetworkModel::FromParams(params, Topo(2, 2));
  ReplayOptions options = testing::ExactOptions();
  options.cpu = CpuShareOf(trace.run);
  options.cpu.sigma = sigma;
  return MakeSimulation(trace, network, NegotiationModel(), options);
}

TEST(CpuShareTest, TheReplaySolvesTheFixedPointOfStepTimeAndCommunicationShare) {
  // Compute dilates by u = stretch / recorded stretch = 2 (1 + d) / 2 = 1 + d, with
  // d = 10 ms / step and step = 10u (backward) + 10 (allreduce) + 10u (tail) = 20u + 10:
  // u = 1 + 10 / (20u + 10), i.e. 2u^2 - u - 2 = 0, u = (1 + sqrt(17)) / 4.
  const Simulation sim = OneTensorSimulation(1.0);
  const double u = (1.0 + std::sqrt(17.0)) / 4.0;
  const SettingResult r = sim.Evaluate(PlainKnobs(64, 0.001));
  EXPECT_NEAR(r.step_ms_median, 20.0 * u + 10.0, 0.002 * (20.0 * u + 10.0));
  // Without the model the same replay holds compute as recorded: 10 + 10 + 10 ms.
  Simulation fixed = OneTensorSimulation(1.0);
  fixed.set_cpu_share(CpuShareParams());
  EXPECT_NEAR(fixed.Evaluate(PlainKnobs(64, 0.001)).step_ms_median, 30.0, 0.01);
}

// One 1 MiB tensor ready at 10 ms, its allreduce 10 ms, a 10 ms tail, 1 ms cycles, recorded
// with the cache on: an idle cycle costs nothing with it (no bit-vector cost) and 100 us with
// it off (the coordinator's round). At a spin share and a share of that cycle cost.
Simulation CycleCostSimulation(double sigma, double cycle_cpu_share) {
  Trace trace = MakeTrace(MakeWorkload({1 << 20}, {10.0}, 0.0, 10.0, 0.0), Topo(2, 2),
                          PlainKnobs(64, 1.0), 0.0, 20.0);
  trace.run.knobs.cache_capacity = 1024;
  trace.run.host.cores = 2;
  trace.run.host.nodes_per_host = 2;
  NetworkParams params = NetworkParams::Uniform(0.0, 1.5 * (1 << 20) / 10000.0);
  params.copy = {0.0, 1e12};
  NegotiationParams np;
  np.round_fixed_us = 100.0;
  ReplayOptions options = testing::ExactOptions();
  options.cpu = CpuShareOf(trace.run);
  options.cpu.sigma = sigma;
  options.cpu.cycle_cpu_share = cycle_cpu_share;
  return MakeSimulation(trace, NetworkModel::FromParams(params, Topo(2, 2)),
                        NegotiationModel(np), options);
}

TEST(CpuShareTest, EachSettingsCyclesCostItsOwnNegotiation) {
  // No spin share (sigma 0), so only the cycles take CPU.
  const Simulation sim = CycleCostSimulation(0.0, 1.0);
  Knobs on = PlainKnobs(64, 1.0);
  on.cache_capacity = 1024;
  // Cache on: cycles cost nothing, compute as recorded: 10 + 10 + 10 ms.
  EXPECT_NEAR(sim.Evaluate(on).step_ms_median, 30.0, 1e-6);
  // Cache off: the thread's share d = cycles * 100 us / S with cycles = 1 + (S - 10 ms) / 1 ms,
  // i.e. d = 0.1 - 0.9 ms / S; compute dilates by u = 1 + d (2 (1 + d) cores wanted of 2,
  // over the recorded 4 of 2) and S = 20u + 10.1 ms + the wait for the next 1 ms cycle
  // (0 to 1 ms): u in [1.0714, 1.0724], S in [31.53, 32.55] ms.
  const double off = sim.Evaluate(PlainKnobs(64, 1.0)).step_ms_median;
  EXPECT_GE(off, 31.5);
  EXPECT_LE(off, 32.6);
}

TEST(CpuShareTest, TheFitRecoversTheSpinShareThatMadeAnotherRunsStepTime) {
  // The "other run" at another cycle time took what the model with sigma = 0.5 predicts.
  const Knobs other_knobs = PlainKnobs(64, 0.002);
  RunInfo other;
  other.id = 9;
  other.knobs = other_knobs;
  other.step_ms_median = OneTensorSimulation(0.5).Evaluate(other_knobs).step_ms_median;
  Simulation sim = OneTensorSimulation(1.0);
  const RunInfo others[] = {other};
  EXPECT_EQ(sim.FitCommSpin(others), 1);
  EXPECT_DOUBLE_EQ(sim.options().cpu.sigma, 0.5);
  EXPECT_NE(sim.options().cpu.sigma_source.find("run 9"), std::string::npos);
  // A run at the recorded setting tells nothing about a change: not used.
  RunInfo same = other;
  same.knobs = PlainKnobs(64, 0.001);
  Simulation untouched = OneTensorSimulation(1.0);
  const RunInfo only_same[] = {same};
  EXPECT_EQ(untouched.FitCommSpin(only_same), 0);
  EXPECT_DOUBLE_EQ(untouched.options().cpu.sigma, 1.0);
}

TEST(CpuShareTest, TheFitRecoversTheShareOfTheCyclesCostTooWhereTwoRunsSeparateThem) {
  // Two other runs made by sigma 0.5 and a quarter of the cycles' modelled cost: one with the
  // cache on at 2 ms cycles (its cycles free: only sigma shows), one with it off at 1 ms (100
  // us a cycle at a quarter: 25 us). The fit over both grids finds both.
  RunInfo cached;
  cached.id = 5;
  cached.knobs = PlainKnobs(64, 2.0);
  cached.knobs.cache_capacity = 1024;
  RunInfo uncached;
  uncached.id = 6;
  uncached.knobs = PlainKnobs(64, 1.0);
  // The (sigma, share) a fit from the prior (1, 1) finds where the two runs' step times were
  // made at `sigma` and `share`.
  auto fit = [&](double sigma, double share) {
    for (RunInfo* r : {&cached, &uncached}) {
      r->step_ms_median = CycleCostSimulation(sigma, share).Evaluate(r->knobs).step_ms_median;
    }
    Simulation sim = CycleCostSimulation(1.0, 1.0);
    const RunInfo others[] = {cached, uncached};
    EXPECT_EQ(sim.FitCommSpin(others), 2);
    return std::pair{sim.options().cpu.sigma, sim.options().cpu.cycle_cpu_share};
  };
  EXPECT_EQ(fit(0.5, 0.25), std::pair(0.5, 0.25));
  // Where the cycles cost as modelled, the share stays 1.
  EXPECT_EQ(fit(0.5, 1.0), std::pair(0.5, 1.0));
}

// An imported Horovod run (its timeline traced it) on a host whose 2 cores hold all 4 ranks,
// given an untraced step time (untraced_over_traced times the timeline's median step; 0: none
// given). Built the way `simulate` builds it (Simulation::Build). compute_scale stretches its
// compute (ready times, forward, backward): at 10 the step is mostly compute and the
// communication thread's share stays below 1. own_over_timeline > 0: the traced job's own step
// time given too, that times the timeline's median.
Simulation ImportedWithUntraced(double untraced_over_traced, double* untraced_ms,
                                double compute_scale = 1.0, double own_over_timeline = 0.0) {
  const NetworkModel net =
      NetworkModel::FromParams(NetworkParams::Uniform(30.0, 120.0), Topo(2, 2));
  Trace trace;
  SyntheticTraceOptions so;
  so.steps = 4;
  const double k = compute_scale;
  const Workload w = MakeWorkload({1 << 20, 1 << 20, 1 << 22, 1 << 18},
                                  {2.0 * k, 4.0 * k, 6.0 * k, 8.0 * k}, 5.0 * k, 8.0 * k, 1.0);
  EXPECT_TRUE(SynthesizeTrace(w, Knobs(), net,
                              NegotiationModel::Prior(net, 4), so, &trace)
                  .ok());
  trace.run.kind = RunKind::kImported;
  trace.run.framework = Framework::kHorovod;
  trace.run.host.cores = 2;
  trace.run.host.nodes_per_host = 2;
  std::vector<double> steps;
  for (const StepTrace& st : trace.steps) steps.push_back(st.step_ms);
  std::sort(steps.begin(), steps.end());
  trace.run.step_ms_median = 0.5 * (steps[1] + steps[2]);
  *untraced_ms = untraced_over_traced * trace.run.step_ms_median;
  trace.run.untraced_step_ms = *untraced_ms;
  trace.run.traced_step_ms = own_over_timeline * trace.run.step_ms_median;
  Simulation sim;
  const Status st = Simulation::Build(trace, SynthesizeCalibration(net), std::nullopt, &sim);
  EXPECT_TRUE(st.ok()) << st.message();
  return sim;
}

TEST(CpuShareTest, AnIdleCyclesWaitForItsPeersTakesNoCompute) {
  // The imported run's cycles each took 3 ms (its ranks share 2 cores: the negotiation waits
  // for a descheduled peer). The replay paces cycles by that time, but an idle cycle takes
  // the compute only the CPU its message costs with every rank present (the prior, here
  // tens of microseconds), not 3 ms: a longer cycle gives the compute back little.
  Trace trace;
  const NetworkModel net =
      NetworkModel::FromParams(NetworkParams::Uniform(30.0, 120.0), Topo(2, 2));
  SyntheticTraceOptions so;
  so.steps = 4;
  // Compute 10x the collectives' scale, so that its slowdown shows in the step.
  const Workload w = MakeWorkload({1 << 20, 1 << 20, 1 << 22, 1 << 18}, {20.0, 40.0, 60.0, 80.0},
                                  50.0, 80.0, 1.0);
  ASSERT_TRUE(SynthesizeTrace(w, Knobs(), net, NegotiationModel::Prior(net, 4), so, &trace).ok());
  trace.run.kind = RunKind::kImported;
  trace.run.framework = Framework::kHorovod;
  trace.run.host.cores = 2;
  trace.run.host.nodes_per_host = 2;
  int cycles = 0;
  for (StepTrace& st : trace.steps) {
    for (CycleRecord& c : st.cycles) {
      c.negotiate_end_us = c.start_us + 3000.0;
      ++cycles;
    }
  }
  ASSERT_GE(cycles, 3);
  Simulation sim;
  ASSERT_TRUE(Simulation::Build(trace, SynthesizeCalibration(net), std::nullopt, &sim).ok());
  EXPECT_NEAR(sim.negotiation().CycleUs(true, 0, 0), 3000.0, 1.0);
  const double prior_us = NegotiationModel::Prior(net, 4).CycleUs(true, 0, 0);
  EXPECT_LT(prior_us, 300.0);
  EXPECT_NEAR(sim.options().cpu.cycle_cpu_us, prior_us, 0.1 * prior_us);
  // The replay's own load per setting takes the same CPU figure: predicting the traced job at
  // its recorded setting (the tracer kept) stretches the compute as recorded, so the step is
  // the replay's without the slowdown model. With the 3 ms taken as CPU at the predicted
  // setting only, the thread is busy throughout and the step came out 15% longer (204.3
  // against 177.0 ms, checked by breaking it).
  ReplayOptions traced = sim.options();
  traced.cpu.predicted_tau = traced.cpu.recorded_tau;
  traced.production_scale = 1.0;
  ReplayOptions no_slowdown = traced;
  no_slowdown.cpu.cores = 0;
  const double with_model =
      MakeSimulation(trace, sim.network(), sim.negotiation(), traced).Evaluate(trace.run.knobs)
          .step_ms_median;
  const double without =
      MakeSimulation(trace, sim.network(), sim.negotiation(), no_slowdown)
          .Evaluate(trace.run.knobs)
          .step_ms_median;
  EXPECT_NEAR(with_model, without, 0.05 * without);
}

TEST(CpuShareTest, TheRecordedSettingPredictsTheGivenUntracedStepTimeEvenAboveTheTraced) {
  // Production 5% faster than traced: the tracer takes cores (tau > 0; in this short-compute
  // step all it may, the timeline writer's one core, explain part of it) and a ratio the rest.
  double untraced_ms = 0.0;
  const Simulation faster = ImportedWithUntraced(0.95, &untraced_ms);
  EXPECT_NEAR(faster.Evaluate(Knobs()).step_ms_median, untraced_ms, 0.002 * untraced_ms);
  EXPECT_GT(faster.options().cpu.recorded_tau, 0.0);
  // Production 10% slower than traced (the tracing cost within the noise): no tracer of zero
  // or more cores makes the production job slower than the traced, so tau stays at 0 and a
  // ratio covers the rest; the recorded setting still predicts the given time.
  const Simulation slower = ImportedWithUntraced(1.10, &untraced_ms);
  EXPECT_NEAR(slower.Evaluate(Knobs()).step_ms_median, untraced_ms, 0.002 * untraced_ms);
  EXPECT_LT(slower.options().cpu.recorded_tau, 0.01);
  EXPECT_NE(slower.predicts().find("do not explain"), std::string::npos) << slower.predicts();
}

TEST(CpuShareTest, TheTracerTakesAtMostTheWritersOneCore) {
  // A compute-bound step (10x compute) whose production run came out 40% faster than the
  // traced one: 4 ranks on 2 cores, so the one core Horovod's timeline writer spins on slows
  // the compute by at most (4 + 1) / 4 = 1.25x, far short of 1 / 0.6. A tracer of more cores
  // (one run's noise read as a tracing cost) would shrink the recorded compute that every
  // other setting and topology is predicted from; the tracer stops at one core and a ratio
  // covers the rest, so the recorded setting still predicts the given time.
  double untraced_ms = 0.0;
  const Simulation sim = ImportedWithUntraced(0.60, &untraced_ms, 10.0);
  EXPECT_NEAR(sim.Evaluate(Knobs()).step_ms_median, untraced_ms, 0.002 * untraced_ms);
  EXPECT_LE(sim.options().cpu.recorded_tau, 1.0);
  EXPECT_GT(sim.options().cpu.recorded_tau, 0.99);
  EXPECT_NE(sim.predicts().find("do not explain"), std::string::npos) << sim.predicts();
}

TEST(CpuShareTest, FittingTheSpinShareKeepsTheUntracedStepTimeAtTheRecordedSetting) {
  // Another run of the job, at a 5 ms cycle, took 1.5x what the prior share predicts: the fit
  // moves the share off its prior, and with it what the recorded setting would predict under
  // the tracing cost fitted before; the fit fits that cost again.
  double untraced_ms = 0.0;
  Simulation sim = ImportedWithUntraced(0.95, &untraced_ms, 10.0);
  Knobs other_knobs;
  other_knobs.cycle_time_ms = 5.0;
  RunInfo other;
  other.id = 7;
  other.knobs = other_knobs;
  other.step_ms_median = 1.5 * sim.Evaluate(other_knobs).step_ms_median;
  ASSERT_EQ(sim.FitCommSpin(std::vector<RunInfo>{other}), 1);
  EXPECT_NE(sim.options().cpu.sigma, 1.0);
  EXPECT_NEAR(sim.Evaluate(Knobs()).step_ms_median, untraced_ms, 0.002 * untraced_ms);
}

TEST(CpuShareTest, AnotherRunsProductionStepTimeFitsTheSpinShareLikeForLike) {
  // Another run at a 5 ms cycle whose production step is exactly what the prior share (1.0)
  // predicts for production there, while its traced run took 1.5x that (its timeline cost
  // more than the recorded setting's: seen on the real convnet, 44% at 0 MB / 25 ms against
  // 8% at the default). Production against production, the prior explains it exactly (the
  // tracing cost is fitted again under each share, and under 1.0 it is the one fitted at
  // build): the share stays 1.0.
  double untraced_ms = 0.0;
  Simulation sim = ImportedWithUntraced(0.95, &untraced_ms, 10.0);
  ASSERT_DOUBLE_EQ(sim.options().cpu.sigma, 1.0);
  Knobs other_knobs;
  other_knobs.cycle_time_ms = 5.0;
  RunInfo other;
  other.id = 7;
  other.knobs = other_knobs;
  other.untraced_step_ms = sim.Evaluate(other_knobs).step_ms_median;
  other.step_ms_median = 1.5 * other.untraced_step_ms;
  ASSERT_EQ(sim.FitCommSpin(std::vector<RunInfo>{other}), 1);
  EXPECT_DOUBLE_EQ(sim.options().cpu.sigma, 1.0);
  EXPECT_NE(sim.options().cpu.sigma_source.find("7 (production)"), std::string::npos)
      << sim.options().cpu.sigma_source;
  EXPECT_NEAR(sim.Evaluate(other_knobs).step_ms_median, other.untraced_step_ms,
              1e-9 * other.untraced_step_ms);
  // Its traced step alone would move the share (the traced 1.5x read as communication).
  Simulation traced_only = ImportedWithUntraced(0.95, &untraced_ms, 10.0);
  other.untraced_step_ms = 0.0;
  ASSERT_EQ(traced_only.FitCommSpin(std::vector<RunInfo>{other}), 1);
  EXPECT_NE(traced_only.options().cpu.sigma, 1.0);
  EXPECT_NE(traced_only.options().cpu.sigma_source.find("7 (traced)"), std::string::npos);
}

// Settings other than the recorded one, at which the tests below compare two fits.
std::vector<Knobs> OtherSettings() {
  std::vector<Knobs> out;
  for (double fusion_mb : {0.0, 4.0}) {
    for (double cycle_ms : {1.0, 5.0}) {
      Knobs k;
      k.fusion_threshold_mb = fusion_mb;
      k.cycle_time_ms = cycle_ms;
      out.push_back(k);
    }
  }
  return out;
}

TEST(CpuShareTest, AProductionRunNoFasterThanItsTracedJobIsPooledWithIt) {
  // The traced job's own step 4% above its timeline's, production 10% above: a tracing cost
  // below zero is run-to-run noise, so the recorded setting predicts the geometric mean of
  // the two measurements of the job: sqrt(1.10 x 1.04) = 1.06958 x the timeline's step.
  double untraced_ms = 0.0;
  const Simulation sim = ImportedWithUntraced(1.10, &untraced_ms, 1.0, 1.04);
  const double pooled_ms = std::sqrt(1.10 * 1.04) * (untraced_ms / 1.10);
  EXPECT_NEAR(sim.Evaluate(Knobs()).step_ms_median, pooled_ms, 0.002 * pooled_ms);
  EXPECT_NE(sim.predicts().find("pooled"), std::string::npos) << sim.predicts();
  // Production faster than the traced job's own: nothing pooled, the given time predicted.
  const Simulation faster = ImportedWithUntraced(1.00, &untraced_ms, 1.0, 1.04);
  EXPECT_NEAR(faster.Evaluate(Knobs()).step_ms_median, untraced_ms, 0.002 * untraced_ms);
  EXPECT_EQ(faster.predicts().find("pooled"), std::string::npos) << faster.predicts();
}

TEST(CpuShareTest, TheTracedJobsOwnStepTimeMakesTheTracingCostLikeForLike) {
  // The timeline reads 20% short of the traced job's own step (1.2 x) and production is 5%
  // faster than the latter (1.14 = 0.95 x 1.2). Against the timeline the production job
  // looked slower than the traced one (no tracer explains that: a ratio); like for like it is
  // the 5% tracing cost of a job whose timeline read it exactly, so every setting predicts
  // 1.2 x what that job (production 0.95 x its timeline) predicts.
  double untraced_ms = 0.0;
  const Simulation like = ImportedWithUntraced(1.14, &untraced_ms, 10.0, 1.2);
  const Simulation exact = ImportedWithUntraced(0.95, &untraced_ms, 10.0);
  EXPECT_NEAR(like.options().cpu.recorded_tau, exact.options().cpu.recorded_tau, 0.01);
  EXPECT_GT(like.options().cpu.recorded_tau, 0.0);
  std::vector<Knobs> settings = OtherSettings();
  settings.push_back(Knobs());
  for (const Knobs& k : settings) {
    const double want = 1.2 * exact.Evaluate(k).step_ms_median;
    EXPECT_NEAR(like.Evaluate(k).step_ms_median, want, 0.002 * want)
        << k.fusion_threshold_mb << " MB, " << k.cycle_time_ms << " ms";
  }
  // Without a production step time the traced job's own still sets the scale: 1.2 x.
  const Simulation traced_only = ImportedWithUntraced(0.0, &untraced_ms, 10.0, 1.2);
  const Simulation neither = ImportedWithUntraced(0.0, &untraced_ms, 10.0);
  for (const Knobs& k : settings) {
    const double want = 1.2 * neither.Evaluate(k).step_ms_median;
    EXPECT_NEAR(traced_only.Evaluate(k).step_ms_median, want, 1e-6 * want);
  }
}

// One 1e6-byte tensor ready 0.5 ms into a 2.5 ms backward pass, a 1 ms tail (the recorded
// step: done at 9 ms, 10 ms long), on two ranks of a two-core host; alone its allreduce takes
// 2 * 5 us + 1e6 B / 200 B/us = 5010 us. The options replay it exactly, the communication
// thread spinning for none of it (sigma 0, no cycle cost).
struct OneTensorStep {
  Trace trace;
  NetworkModel network;
  ReplayOptions options;
};

OneTensorStep MakeOneTensorStep() {
  Trace trace = MakeTrace(MakeWorkload({1000000}, {0.5}, 0.0, 2.5, 1.0), Topo(1, 2),
                          PlainKnobs(0, 0.5), 9000.0, 10.0);
  trace.run.host.cores = 2;
  NetworkParams params = NetworkParams::Uniform(5.0, 200.0);
  params.copy = {0.0, 1e12};
  ReplayOptions options = testing::ExactOptions();
  options.cpu = CpuShareOf(trace.run);
  options.cpu.sigma = 0.0;
  return {trace, NetworkModel::FromParams(params, Topo(1, 2)), options};
}

TEST(CpuShareTest, CommunicationBesideTheComputeSlowsWithTheComputesOwnStretch) {
  // Recorded stretch 2 / 2 = 1; a predicted tracer of one core makes it (2 + 1) / 2 = 1.5, so
  // compute dilates by exactly 1.5 at every setting, and the collective, its two communication
  // threads beside the tracer, takes (2 + 1) / 2 = 1.5x its time alone too: 7515 us.
  OneTensorStep s = MakeOneTensorStep();
  s.options.comm_contention = 2.0;  // beside the recorded compute: half its rate
  s.options.cpu.predicted_tau = 1.0;
  const Simulation sim = MakeSimulation(s.trace, s.network, NegotiationModel(), s.options);
  // Dilated: ready at 0.75 ms, launched by the 1 ms cycle, compute ends at 3.75 ms, tail
  // 1.5 ms. The contention becomes 1 + (2 - 1) * 1.5 = 2.5: 2750 us at 1/2.5 of the rate do
  // 1100 us of its work, the other 6415 us run at full rate after 3.75 ms: done at 10165 us,
  // the step 10165 + 1500 us. (Held at 2: 1375 us of work beside, done at 9890 us.)
  EXPECT_NEAR(sim.Evaluate(PlainKnobs(0, 0.5)).step_ms_median, 11.665, 1e-6);
  // Launched after the compute (a 5 ms cycle), it runs at its full rate either way.
  EXPECT_NEAR(sim.Evaluate(PlainKnobs(0, 5.0)).step_ms_median, 5.0 + 1.5 * 5.010 + 1.5, 1e-6);
  // Without a tracer to predict the compute is as recorded, and so is the contention: the
  // collective starts at 0.5 ms, 2000 us beside at half rate do 1000 us, done at 6510 us.
  s.options.cpu.predicted_tau = 0.0;
  const Simulation undilated = MakeSimulation(s.trace, s.network, NegotiationModel(), s.options);
  EXPECT_NEAR(undilated.Evaluate(PlainKnobs(0, 0.5)).step_ms_median, 7.510, 1e-6);
}

TEST(CpuShareTest, TheRecordedTracerSlowedTheCollectivesToo) {
  // The step recorded with Horovod's timeline writer spinning on one core (tau 1) and
  // predicted without it (production): the recorded compute ran at 2 / (2 + 1) of its rate
  // and so did the collective, its two communication threads beside the writer. Launched by a
  // 5 ms cycle after the compute: 5 ms, then the allreduce at 1 / 1.5 of its recorded 5010 us,
  // then the 1 ms tail at 1 / 1.5 too.
  OneTensorStep s = MakeOneTensorStep();
  s.options.cpu.recorded_tau = 1.0;
  s.options.cpu.predicted_tau = 0.0;
  const Simulation production = MakeSimulation(s.trace, s.network, NegotiationModel(), s.options);
  EXPECT_NEAR(production.Evaluate(PlainKnobs(0, 5.0)).step_ms_median,
              5.0 + 5.010 / 1.5 + 1.0 / 1.5, 1e-6);
  EXPECT_NE(production.DescribeCpuShare().find("its collectives at 1.500x"), std::string::npos)
      << production.DescribeCpuShare();
  // The traced job (the tracer kept): the recorded collective and tail.
  s.options.cpu.predicted_tau = 1.0;
  const Simulation traced = MakeSimulation(s.trace, s.network, NegotiationModel(), s.options);
  EXPECT_NEAR(traced.Evaluate(PlainKnobs(0, 5.0)).step_ms_median, 5.0 + 5.010 + 1.0, 1e-6);
  // Four ranks on the two cores (a 2x2 emulated on one host): (4 + 1) / 4 of the rate each;
  // one rank and the writer: the two cores are enough.
  CpuShareParams host;
  host.cores = 2;
  EXPECT_NEAR(CommStretch(host, 0.0, 4) / CommStretch(host, 1.0, 4), 4.0 / 5.0, 1e-12);
  EXPECT_EQ(CommStretch(host, 1.0, 1), 1.0);
}

// A traced Horovod job of 4 ranks on 2 cores (a 2x2 emulated on one host) with the given traced
// and production step times (0: not given).
RunInfo TracedRun(double traced_ms, double production_ms) {
  RunInfo run;
  run.kind = RunKind::kImported;
  run.framework = Framework::kHorovod;
  run.topology = Topo(2, 2);
  run.host.cores = 2;
  run.host.nodes_per_host = 2;
  run.traced_step_ms = traced_ms;
  run.untraced_step_ms = production_ms;
  return run;
}

TEST(CpuShareTest, EachRunsTracingCostSetsTheTracerItsCollectivesRanBeside) {
  // Oversubscribed, each collective runs at (4 + tau) / 4 of its production time: a traced step
  // 10% over the production one is tau = 0.4 cores, 2% is 0.08.
  const RunInfo costly = TracedRun(1100.0, 1000.0);
  const RunInfo cheap = TracedRun(1020.0, 1000.0);
  EXPECT_NEAR(TracingCostOf(costly), 1.1, 1e-12);
  EXPECT_DOUBLE_EQ(TracingCostOf(TracedRun(1100.0, 0.0)), 0.0);
  EXPECT_NEAR(TracerCoresOf(costly), 0.4, 1e-12);
  EXPECT_NEAR(TracerCoresOf(cheap), 0.08, 1e-12);
  // The cheaply traced run's collectives, brought to the costly one's tracer: 4.4 / 4.08; and
  // back again.
  EXPECT_NEAR(TracerCommScale(costly, cheap), 4.4 / 4.08, 1e-12);
  EXPECT_NEAR(TracerCommScale(cheap, costly), 4.08 / 4.4, 1e-12);
  EXPECT_DOUBLE_EQ(TracerCommScale(costly, costly), 1.0);
  // A replayed run whose production step is no faster than its traced one measured no tracing
  // cost: nothing is scaled to it, though another run shows one.
  EXPECT_DOUBLE_EQ(TracerCommScale(TracedRun(950.0, 1000.0), TracedRun(1050.0, 1000.0)), 1.0);
  EXPECT_DOUBLE_EQ(TracerCommScale(TracedRun(1000.0, 1000.0), cheap), 1.0);
  // The traced job's own step time, where not given, is the imported steps' median.
  RunInfo median_only = TracedRun(0.0, 1000.0);
  median_only.step_ms_median = 1100.0;
  EXPECT_NEAR(TracerCoresOf(median_only), 0.4, 1e-12);
  // At most the writer's one core (a 50% cost is noise or something else); a production run
  // slower than its traced run is no tracer at all.
  EXPECT_DOUBLE_EQ(TracerCoresOf(TracedRun(1500.0, 1000.0)), 1.0);
  EXPECT_DOUBLE_EQ(TracerCoresOf(TracedRun(950.0, 1000.0)), 0.0);
  // No production step time: the replay's prior, one core for a Horovod timeline, none for
  // autotune's own recorded runs.
  EXPECT_DOUBLE_EQ(TracerCoresOf(TracedRun(1100.0, 0.0)), 1.0);
  RunInfo recorded = TracedRun(1100.0, 0.0);
  recorded.kind = RunKind::kMeasured;
  EXPECT_DOUBLE_EQ(TracerCoresOf(recorded), 0.0);
  EXPECT_NEAR(TracerCommScale(recorded, TracedRun(1100.0, 0.0)), 4.0 / 5.0, 1e-12);
  // With cores to spare (2 ranks on 8 cores) the writer slows no collective: scale 1.
  RunInfo roomy = costly;
  roomy.topology = Topo(1, 2);
  roomy.host.nodes_per_host = 1;
  roomy.host.cores = 8;
  RunInfo roomy_cheap = roomy;
  roomy_cheap.traced_step_ms = 1020.0;
  EXPECT_DOUBLE_EQ(TracerCommScale(roomy, roomy_cheap), 1.0);
}

}  // namespace
}  // namespace autotune::sim
