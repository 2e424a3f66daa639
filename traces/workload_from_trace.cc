#include "traces/workload_from_trace.h"

#include <algorithm>
#include <limits>
#include <string>

namespace autotune {

namespace {

constexpr double kNone = -std::numeric_limits<double>::infinity();

// One step's per-tensor latest ready time (R[s][t] in the header), first and end.
struct StepReady {
  std::vector<double> latest_us;
  double first_us = 0.0;
  double end_us = 0.0;
};

Status ReadStep(const Trace& trace, const StepTrace& step, int ranks, StepReady* out) {
  const std::string where =
      "run " + std::to_string(trace.run.id) + " step " + std::to_string(step.step) + ": ";
  const int n = static_cast<int>(trace.run.workload.tensors.size());
  out->latest_us.assign(n, kNone);
  double done_us = 0.0;
  for (const TensorEvent& e : step.tensors) {
    if (e.tensor < 0 || e.tensor >= n || e.rank < 0 || e.rank >= ranks) {
      return Status::InvalidArgument(where + "event of tensor " + std::to_string(e.tensor) +
                                     " on rank " + std::to_string(e.rank) + " outside " +
                                     std::to_string(n) + " tensors x " + std::to_string(ranks) +
                                     " ranks");
    }
    out->latest_us[e.tensor] = std::max(out->latest_us[e.tensor], e.ready_us);
    done_us = std::max(done_us, e.done_us);
  }
  for (int t = 0; t < n; ++t) {
    if (out->latest_us[t] == kNone) {
      return Status::InvalidArgument(where + "tensor " + trace.run.workload.tensors[t].name +
                                     " has no ready time");
    }
  }
  out->first_us = *std::min_element(out->latest_us.begin(), out->latest_us.end());
  out->end_us = done_us;
  if (!step.collectives.empty()) {
    out->end_us = 0.0;
    for (const CollectiveRecord& c : step.collectives) {
      out->end_us = std::max(out->end_us, c.end_us);
    }
  }
  return Status::Ok();
}

// rank_lead_ms as the header defines it; 0 for a rank without events.
std::vector<double> RankLeads(const Trace& trace, const std::vector<StepReady>& ready, int ranks) {
  std::vector<std::vector<double>> leads(ranks);
  for (size_t s = 0; s < trace.steps.size(); ++s) {
    for (const TensorEvent& e : trace.steps[s].tensors) {
      leads[e.rank].push_back((ready[s].latest_us[e.tensor] - e.ready_us) / 1000.0);
    }
  }
  std::vector<double> out(ranks, 0.0);
  for (int r = 0; r < ranks; ++r) out[r] = Median(leads[r]);
  return out;
}

}  // namespace

Status WorkloadFromTrace(const Trace& trace, TraceWorkload* out) {
  const std::string run = "run " + std::to_string(trace.run.id);
  if (trace.steps.empty()) return Status::InvalidArgument(run + ": no stored steps");
  if (trace.run.workload.tensors.empty()) {
    return Status::InvalidArgument(run + ": its workload has no tensors");
  }
  int ranks = trace.run.topology.world_size();
  if (ranks <= 0) {
    for (const StepTrace& step : trace.steps) {
      for (const TensorEvent& e : step.tensors) ranks = std::max(ranks, e.rank + 1);
    }
  }
  std::vector<StepReady> ready(trace.steps.size());
  for (size_t s = 0; s < trace.steps.size(); ++s) {
    AUTOTUNE_RETURN_IF_ERROR(ReadStep(trace, trace.steps[s], ranks, &ready[s]));
  }
  Workload& w = out->workload;
  w = trace.run.workload;
  std::vector<double> values(trace.steps.size());
  for (size_t s = 0; s < ready.size(); ++s) values[s] = ready[s].first_us / 1000.0;
  w.forward_ms = Median(values);
  double previous = 0.0;
  for (size_t t = 0; t < w.tensors.size(); ++t) {
    for (size_t s = 0; s < ready.size(); ++s) {
      values[s] = (ready[s].latest_us[t] - ready[s].first_us) / 1000.0;
    }
    previous = std::max(previous, Median(values));
    w.tensors[t].ready_ms = previous;
  }
  w.backward_ms = w.tensors.back().ready_ms;
  for (size_t s = 0; s < ready.size(); ++s) {
    values[s] = std::max(0.0, trace.steps[s].step_ms - ready[s].end_us / 1000.0);
  }
  w.optimizer_ms = Median(values);
  out->rank_lead_ms = RankLeads(trace, ready, ranks);
  return Status::Ok();
}

}  // namespace autotune
