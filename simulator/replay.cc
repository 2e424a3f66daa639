#include "simulator/replay.h"

#include <algorithm>
#include <cmath>

namespace autotune::sim {

Replayer::Replayer(const PreparedTrace& trace, const NetworkModel& network,
                   const NegotiationModel& negotiation, const ReplayOptions& options)
    : trace_(trace),
      network_(network),
      negotiation_(negotiation),
      options_(options),
      world_size_(network.topology().world_size()) {
  const int64_t recorded = trace.FusionBytesPerStep(trace.run().topology.world_size());
  const int64_t predicted = trace.FusionBytesPerStep(world_size_);
  bytes_scale_ = recorded > 0 ? static_cast<double>(predicted) / recorded : 1.0;
  newly_ready_.reserve(trace.num_tensors());
}

ReplaySetting Replayer::MakeSetting(const Knobs& knobs) const {
  const bool cache_on = knobs.cache_capacity > 0;
  return ReplaySetting{
      .knobs = knobs,
      .cycle_us = knobs.cycle_time_ms * 1000.0,
      .cache_on = cache_on,
      .all_cached = cache_on && knobs.cache_capacity >= trace_.num_tensors(),
      .allreduce_algorithm =
          knobs.hierarchical_allreduce ? Algorithm::kHierarchical : Algorithm::kFlat,
      .allgather_algorithm =
          knobs.hierarchical_allgather ? Algorithm::kHierarchical : Algorithm::kFlat,
      .fusion =
          FusionPolicy(trace_.workload(), knobs.threshold_bytes(), knobs.num_groups, world_size_),
  };
}

double Replayer::Phase(int index) const {
  if (options_.phase == ReplayOptions::Phase::kFixed) return options_.fixed_phase;
  const int steps = static_cast<int>(trace_.steps().size());
  return (index + 0.5) / steps;
}

StepPrediction Replayer::ReplayStep(int index, const ReplaySetting& setting, StepTrace* timeline) {
  const PreparedStep& step = trace_.steps()[index];
  const int n = trace_.num_tensors();
  const bool record = timeline != nullptr;
  if (record) {
    *timeline = StepTrace();
    timeline->step = step.step;
    timeline->backward_start_us = step.backward_start_us;
  }
  policy_ = setting.fusion;

  // An idle cycle still negotiates; when that outlasts the cycle time it sets the period,
  // else the thread sleeps out the cycle and wakes a little late.
  const double idle_us = negotiation_.CycleUs(setting.cache_on, 0, 0);
  const double idle_period_us = std::max(
      idle_us >= setting.cycle_us ? idle_us : setting.cycle_us + options_.wake_delay_us, 1e-3);
  double next_cycle_us = Phase(index) * idle_period_us;
  const double floor_us = index < static_cast<int>(options_.step_first_negotiation_us.size())
                              ? options_.step_first_negotiation_us[index]
                              : options_.first_negotiation_us;
  double stream_free_us = 0.0;
  double last_done_us = 0.0;
  StepPrediction out;
  int next = 0;  // position in ready_order of the first tensor not yet negotiated
  while (next < n) {
    // Skip the idle cycles; one still waiting for the slowest rank ends at the floor.
    const double first_ready_us = step.ready_us[step.ready_order[next]];
    while (first_ready_us > next_cycle_us) {
      if (next_cycle_us < floor_us) {
        next_cycle_us = std::max(next_cycle_us + idle_period_us, floor_us);
      } else {
        next_cycle_us +=
            std::ceil((first_ready_us - next_cycle_us) / idle_period_us) * idle_period_us;
      }
    }
    const double cycle_start_us = next_cycle_us;
    newly_ready_.clear();
    while (next < n && step.ready_us[step.ready_order[next]] <= cycle_start_us) {
      newly_ready_.push_back(step.ready_order[next++]);
    }
    const int count = static_cast<int>(newly_ready_.size());
    const int cached = setting.all_cached ? count : 0;
    const double negotiate_end_us = std::max(
        cycle_start_us + negotiation_.CycleUs(setting.cache_on, cached, count - cached), floor_us);

    double t = std::max(negotiate_end_us, stream_free_us);
    int launched = 0;
    const std::vector<FusedCollective> fused = policy_->Cycle(newly_ready_);
    if (!fused.empty()) {
      for (const FusedCollective& f : fused) {
        const Algorithm algorithm =
            f.op == Op::kAllreduce ? setting.allreduce_algorithm : setting.allgather_algorithm;
        const bool copy_out = f.tensors.size() > 1 || options_.single_tensor_copy_out;
        const int64_t in_bytes = f.op == Op::kAllgather ? f.bytes / world_size_ : f.bytes;
        const double start_us = t;
        t += options_.copy_scale * network_.CopyUs(in_bytes);
        const double copy_in_end_us = t;
        t += options_.comm_scale * network_.CollectiveUs(f.op, algorithm, f.bytes);
        const double comm_end_us = t;
        if (copy_out) t += options_.copy_scale * network_.CopyUs(f.bytes);
        if (record) {
          CollectiveRecord c;
          c.seq = out.collectives;
          c.cycle = out.cycles;
          c.op = f.op;
          c.algorithm = algorithm;
          c.bytes = f.bytes;
          c.tensors = f.tensors;
          c.start_us = start_us;
          c.copy_in_end_us = copy_in_end_us;
          c.comm_end_us = comm_end_us;
          c.end_us = t;
          timeline->collectives.push_back(std::move(c));
          for (int tensor : f.tensors) {
            timeline->tensors.push_back({0, tensor, step.ready_us[tensor], t});
          }
        }
        ++out.collectives;
        ++launched;
      }
      stream_free_us = t;
      last_done_us = std::max(last_done_us, t);
    }
    if (record) {
      CycleRecord c;
      c.cycle = out.cycles;
      c.start_us = cycle_start_us;
      c.negotiate_end_us = negotiate_end_us;
      c.submitted = count;
      c.cache_hits = cached;
      c.responses = count;
      c.collectives = launched;
      timeline->cycles.push_back(c);
    }
    ++out.cycles;
    const double cycle_end_us = options_.cycle_waits_for_collectives
                                    ? std::max(negotiate_end_us, stream_free_us)
                                    : negotiate_end_us;
    // The executor sets the next wake-up at this cycle's start plus the cycle time; a cycle
    // that ran past it starts the next one at once (no sleep, no wake-up delay).
    next_cycle_us = cycle_end_us < cycle_start_us + setting.cycle_us
                        ? cycle_start_us + setting.cycle_us + options_.wake_delay_us
                        : cycle_end_us;
  }
  out.last_done_us = last_done_us;
  out.step_ms = (std::max(step.compute_end_us, last_done_us) + step.tail_us) * 1e-3;
  out.bytes = static_cast<int64_t>(std::llround(step.bytes * bytes_scale_));
  if (record) {
    std::sort(timeline->tensors.begin(), timeline->tensors.end(),
              [](const TensorEvent& a, const TensorEvent& b) { return a.tensor < b.tensor; });
    timeline->step_ms = out.step_ms;
    timeline->bytes = out.bytes;
    timeline->score_bytes_per_s = out.score_bytes_per_s();
  }
  return out;
}

std::vector<StepPrediction> Replayer::ReplayAll(const ReplaySetting& setting,
                                                std::vector<StepTrace>* timeline) {
  const int steps = static_cast<int>(trace_.steps().size());
  std::vector<StepPrediction> out(steps);
  if (timeline) timeline->assign(steps, StepTrace());
  for (int i = 0; i < steps; ++i) {
    out[i] = ReplayStep(i, setting, timeline ? &(*timeline)[i] : nullptr);
  }
  return out;
}

}  // namespace autotune::sim
