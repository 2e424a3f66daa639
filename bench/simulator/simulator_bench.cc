// Simulator speed: step replays per second of a 4-rank resnet50 trace on one core (target
// >= 10,000/s) and the time to simulate one step of a 1,024-rank extrapolated topology
// (target <= 1 s). A "replay" is one recorded step replayed under one knob setting.
//
// Usage: simulator_bench [--db FILE --run ID] [google benchmark flags]
// Without --db/--run the trace is synthesized from the built-in resnet50 (2 nodes x 2
// ranks, 1 Gbit/s-like cross-node link, 5 steps). Besides Google Benchmark's table, every
// figure is printed as the benchmarks' result line (bench/common/result.h); a benchmark
// left out by --benchmark_filter prints value 0 and met=no.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench/common/result.h"
#include "simulator/grid.h"
#include "simulator/simulation.h"
#include "store/store.h"
#include "tests/support/synthetic.h"

namespace autotune::sim {
namespace {

struct BenchInputs {
  Trace trace;
  Calibration calibration;
  std::string source;
};

Status LoadInputs(const std::string& db, int64_t run, BenchInputs* in) {
  if (db.empty()) {
    Topology topo;
    topo.nodes = 2;
    topo.ranks_per_node = 2;
    NetworkParams p;
    for (Op op : {Op::kAllreduce, Op::kAllgather}) {
      p.at(op, Level::kIntra) = {5.0, 2000.0};
      p.at(op, Level::kCross) = {40.0, 115.0};
      p.at(op, Level::kWorld) = {40.0, 110.0};
    }
    p.copy = {2.0, 3000.0};
    const NetworkModel net = NetworkModel::FromParams(p, topo);
    in->calibration = SynthesizeCalibration(net);
    Workload w;
    AUTOTUNE_RETURN_IF_ERROR(BuiltinWorkload("resnet50", &w));
    SyntheticTraceOptions so;
    so.steps = 5;
    AUTOTUNE_RETURN_IF_ERROR(
        SynthesizeTrace(w, Knobs(), net, NegotiationModel::Prior(net, 161), so, &in->trace));
    in->source = "synthetic resnet50 2x2";
    return Status::Ok();
  }
  std::unique_ptr<Store> store;
  AUTOTUNE_RETURN_IF_ERROR(Store::Open(db, Store::Mode::kReadOnly, &store));
  AUTOTUNE_RETURN_IF_ERROR(store->LoadTrace(run, &in->trace));
  AUTOTUNE_RETURN_IF_ERROR(
      store->FindCalibration(in->trace.run.topology, in->trace.run.backend, &in->calibration));
  in->source = db + " run " + std::to_string(run) + " (" + in->trace.run.workload.name + " " +
               in->trace.run.topology.key() + ")";
  return Status::Ok();
}

Topology Extrapolated() {
  Topology t;
  t.nodes = 256;
  t.ranks_per_node = 4;
  return t;
}

// One step replay per iteration, cycling through the steps and the given settings.
void ReplaySteps(benchmark::State& state, const BenchInputs& in, const std::vector<Knobs>& knobs) {
  Simulation sim;
  Status st = Simulation::Build(in.trace, in.calibration, std::nullopt, &sim);
  if (!st.ok()) {
    state.SkipWithError(st.message().c_str());
    return;
  }
  Replayer replayer(sim.trace(), sim.network(), sim.negotiation(), sim.options());
  std::vector<ReplaySetting> settings;
  for (const Knobs& k : knobs) settings.push_back(replayer.MakeSetting(k));
  const int steps = static_cast<int>(sim.trace().steps().size());
  size_t i = 0;
  for (auto _ : state) {
    const StepPrediction p =
        replayer.ReplayStep(static_cast<int>(i % steps), settings[(i / steps) % settings.size()]);
    benchmark::DoNotOptimize(p.step_ms);
    ++i;
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}

// Fits the models, retargets them to 256 nodes x 4 ranks and replays one step.
void Simulate1024RanksOneStep(benchmark::State& state, const BenchInputs& in) {
  for (auto _ : state) {
    Simulation sim;
    Status st = Simulation::Build(in.trace, in.calibration, Extrapolated(), &sim);
    if (!st.ok()) {
      state.SkipWithError(st.message().c_str());
      return;
    }
    Replayer replayer(sim.trace(), sim.network(), sim.negotiation(), sim.options());
    StepTrace timeline;
    const StepPrediction p = replayer.ReplayStep(0, replayer.MakeSetting(Knobs()), &timeline);
    benchmark::DoNotOptimize(p.step_ms);
  }
}

void RegisterAll(const BenchInputs& in) {
  const Knobs recorded = in.trace.run.knobs;
  Knobs zero = recorded;
  zero.fusion_threshold_mb = 0.0;
  zero.cycle_time_ms = 0.5;
  const std::vector<Knobs> grid = KnobGrid(recorded, {}, in.trace.run.topology, false, in.trace.run.framework);
  benchmark::RegisterBenchmark("BM_ReplayStep_GridMix",
                               [&in, grid](benchmark::State& s) { ReplaySteps(s, in, grid); });
  benchmark::RegisterBenchmark("BM_ReplayStep_RecordedKnobs", [&in, recorded](benchmark::State& s) {
    ReplaySteps(s, in, {recorded});
  });
  benchmark::RegisterBenchmark("BM_ReplayStep_ThresholdZero",
                               [&in, zero](benchmark::State& s) { ReplaySteps(s, in, {zero}); });
  benchmark::RegisterBenchmark("BM_Simulate1024RanksOneStep", [&in](benchmark::State& s) {
    Simulate1024RanksOneStep(s, in);
  })->Unit(benchmark::kMillisecond);
}

// Keeps Google Benchmark's console table and remembers each run's real time per iteration.
class CapturingReporter : public benchmark::ConsoleReporter {
 public:
  // No colors: the figure lines that follow must start their lines, for scripts.
  CapturingReporter() : benchmark::ConsoleReporter(OO_Tabular) {}
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.run_type == Run::RT_Iteration && r.iterations > 0) {
        seconds_per_iteration[r.benchmark_name()] =
            r.real_accumulated_time / static_cast<double>(r.iterations);
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }
  std::map<std::string, double> seconds_per_iteration;
};

}  // namespace
}  // namespace autotune::sim

int main(int argc, char** argv) {
  using namespace autotune::sim;  // NOLINT(build/namespaces)
  std::string db;
  int64_t run = 0;
  std::vector<char*> rest = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--db") == 0 && i + 1 < argc) {
      db = argv[++i];
    } else if (std::strcmp(argv[i], "--run") == 0 && i + 1 < argc) {
      run = std::atoll(argv[++i]);
    } else {
      rest.push_back(argv[i]);
    }
  }
  if (db.empty() != (run == 0)) {
    std::fprintf(stderr, "simulator_bench: give both --db FILE and --run ID, or neither\n");
    return 2;
  }
  BenchInputs inputs;
  autotune::Status st = LoadInputs(db, run, &inputs);
  if (!st.ok()) {
    std::fprintf(stderr, "simulator_bench: %s\n", st.message().c_str());
    return 1;
  }
  std::printf("# simulator_bench: %s, %zu tensors, %zu steps, one thread\n", inputs.source.c_str(),
              inputs.trace.run.workload.tensors.size(), inputs.trace.steps.size());
  int bench_argc = static_cast<int>(rest.size());
  benchmark::Initialize(&bench_argc, rest.data());
  RegisterAll(inputs);
  CapturingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();

  auto per_s = [&](const char* name) {
    auto it = reporter.seconds_per_iteration.find(name);
    return it == reporter.seconds_per_iteration.end() || it->second <= 0 ? 0.0 : 1.0 / it->second;
  };
  // Target: at least 10,000 step replays a second on one core (threshold 0 is the worst
  // case, one collective per tensor).
  for (const auto& [figure, benchmark] :
       {std::pair{"step_replays_per_s_grid_mix", "BM_ReplayStep_GridMix"},
        {"step_replays_per_s_recorded_knobs", "BM_ReplayStep_RecordedKnobs"},
        {"step_replays_per_s_threshold_0", "BM_ReplayStep_ThresholdZero"}}) {
    const double value = per_s(benchmark);
    autotune::bench::PrintFigure({.bench = std::string("simulator.") + figure,
                                  .value = value,
                                  .unit = "1/s",
                                  .anchor = "target",
                                  .anchor_value = 10000.0,
                                  .target = autotune::bench::RatioAtLeast(1.0),
                                  .valid = value > 0});
  }
  // Target: fit + retarget to 256x4 + one step within 1 s.
  const double big = per_s("BM_Simulate1024RanksOneStep");
  autotune::bench::PrintFigure({.bench = "simulator.simulate_1024_ranks_one_step_s",
                                .value = big > 0 ? 1.0 / big : 0.0,
                                .unit = "s",
                                .anchor = "target",
                                .anchor_value = 1.0,
                                .target = autotune::bench::RatioAtMost(1.0),
                                .valid = big > 0});
  return 0;
}
