#include "tests/support/synthetic.h"

#include <algorithm>
#include <random>

#include "simulator/prepared_trace.h"
#include "simulator/replay.h"
#include "traces/fusion_policy.h"
#include "traces/score.h"

namespace autotune::sim {

Calibration SynthesizeCalibration(const NetworkModel& network, int64_t id) {
  Calibration cal;
  cal.id = id;
  cal.created_at = "1970-01-01T00:00:00Z";
  cal.topology = network.topology();
  cal.hardware = "synthetic";
  const Topology& t = cal.topology;
  auto add = [&](Op op, Scope scope, int ranks, int64_t bytes, double us) {
    CalibrationPoint p;
    p.op = op;
    p.scope = scope;
    p.ranks = ranks;
    p.bytes = bytes;
    p.repetitions = 1;
    p.median_us = p.min_us = p.max_us = us;
    cal.points.push_back(p);
  };
  for (int64_t bytes = 1024; bytes <= (int64_t{64} << 20); bytes *= 4) {
    for (Op op : {Op::kAllreduce, Op::kAllgather}) {
      const int64_t fusion = op == Op::kAllgather ? bytes * t.world_size() : bytes;
      add(op, Scope::kWorld, t.world_size(), bytes, network.FlatUs(op, fusion));
      if (t.ranks_per_node > 1) {
        add(op, Scope::kIntra, t.ranks_per_node, bytes,
            network.LevelUs(op, Level::kIntra, static_cast<double>(bytes)));
      }
      if (t.nodes > 1) {
        add(op, Scope::kCross, t.nodes, bytes,
            network.LevelUs(op, Level::kCross, static_cast<double>(bytes)));
        if (t.ranks_per_node > 1) {
          add(op, Scope::kHierarchical, t.world_size(), bytes, network.HierarchicalUs(op, fusion));
        }
      }
    }
    add(Op::kAllreduce, Scope::kCopy, 1, bytes, network.CopyUs(bytes));
  }
  return cal;
}

Status SynthesizeTrace(const Workload& workload, const Knobs& knobs, const NetworkModel& network,
                       const NegotiationModel& negotiation, const SyntheticTraceOptions& options,
                       Trace* out) {
  AUTOTUNE_RETURN_IF_ERROR(knobs.Validate());
  if (workload.tensors.empty() || options.steps < 1) {
    return Status::InvalidArgument("synthetic trace: needs tensors and at least one step");
  }
  Trace trace;
  RunInfo& run = trace.run;
  run.id = options.run_id;
  run.created_at = "1970-01-01T00:00:00Z";
  run.command = "synthetic";
  run.workload = workload;
  run.knobs = knobs;
  run.topology = network.topology();
  run.hardware = "synthetic";
  run.steps_planned = options.steps;
  run.complete = true;
  run.steps_recorded = options.steps;

  const int world = run.topology.world_size();
  const int n = static_cast<int>(workload.tensors.size());
  const double backward_start_us = workload.forward_ms * 1000.0;
  const double compute_end_us = backward_start_us + workload.backward_ms * 1000.0;
  const double optimizer_us = workload.optimizer_ms * 1000.0;
  std::mt19937 rng(options.seed);
  std::uniform_real_distribution<double> jitter(0.0, options.rank_jitter_us);
  int64_t bytes = 0;
  for (const TensorSpec& t : workload.tensors) bytes += FusionBytes(t, world);

  for (int s = 0; s < options.steps; ++s) {
    StepTrace step;
    step.step = s;
    step.backward_start_us = backward_start_us;
    step.bytes = bytes;
    double last_ready_us = 0.0;
    for (int r = 0; r < world; ++r) {
      for (int t = 0; t < n; ++t) {
        const double ready =
            backward_start_us + workload.tensors[t].ready_ms * 1000.0 + jitter(rng);
        step.tensors.push_back({r, t, ready, ready});
        last_ready_us = std::max(last_ready_us, ready);
      }
    }
    // With nothing done yet, the tail is exactly the optimizer time.
    step.step_ms = (std::max(compute_end_us, last_ready_us) + optimizer_us) * 1e-3;
    trace.steps.push_back(std::move(step));
  }

  PreparedTrace prepared;
  AUTOTUNE_RETURN_IF_ERROR(PreparedTrace::Prepare(trace, &prepared));
  Replayer replayer(prepared, network, negotiation);
  std::vector<StepTrace> timeline;
  const std::vector<StepPrediction> predicted =
      replayer.ReplayAll(replayer.MakeSetting(knobs), &timeline);
  for (int s = 0; s < options.steps; ++s) {
    StepTrace& step = trace.steps[s];
    std::vector<double> done_us(n, 0.0);
    for (const TensorEvent& e : timeline[s].tensors) done_us[e.tensor] = e.done_us;
    for (TensorEvent& e : step.tensors) e.done_us = done_us[e.tensor];
    step.cycles = std::move(timeline[s].cycles);
    step.collectives = std::move(timeline[s].collectives);
    step.step_ms = predicted[s].step_ms;
    step.score_bytes_per_s = predicted[s].score_bytes_per_s();
  }
  std::vector<double> step_ms;
  std::vector<int64_t> step_bytes;
  for (const StepTrace& st : trace.steps) {
    step_ms.push_back(st.step_ms);
    step_bytes.push_back(st.bytes);
  }
  run.step_ms_median = Median(step_ms);
  run.step_ms_p95 = Percentile(step_ms, 95.0);
  run.score_bytes_per_s = ScoreBytesPerSecond(step_bytes, step_ms);
  *out = std::move(trace);
  return Status::Ok();
}

}  // namespace autotune::sim
