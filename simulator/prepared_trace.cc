#include "simulator/prepared_trace.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "traces/fusion_policy.h"

namespace autotune::sim {
namespace {

bool FiniteNonNegative(double v) { return std::isfinite(v) && v >= 0.0; }

// Sets ps->ready_us[t] to the latest ready time of tensor t over the ranks of st's tensor
// rows and *last_done_us to the latest done time (0 without rows); a row whose tensor or rank
// is out of range or whose times are not finite and >= 0, or a tensor without a row, is
// Corruption naming `where`.
Status ReduceTensorRows(const RunInfo& run, const std::string& where, const StepTrace& st,
                        PreparedStep* ps, double* last_done_us) {
  const int num_tensors = static_cast<int>(run.workload.tensors.size());
  const int world = run.topology.world_size();
  ps->ready_us.assign(num_tensors, -1.0);
  *last_done_us = 0.0;
  for (size_t i = 0; i < st.tensors.size(); ++i) {
    const TensorEvent& e = st.tensors[i];
    const std::string row = where + " tensor row " + std::to_string(i);
    if (e.tensor < 0 || e.tensor >= num_tensors) {
      return Status::Corruption(row + ": tensor index " + std::to_string(e.tensor) +
                                " outside the workload's " + std::to_string(num_tensors));
    }
    if (e.rank < 0 || e.rank >= world) {
      return Status::Corruption(row + ": rank " + std::to_string(e.rank) + " outside " +
                                run.topology.key());
    }
    if (!FiniteNonNegative(e.ready_us) || !FiniteNonNegative(e.done_us)) {
      return Status::Corruption(row + ": ready_us/done_us must be finite and >= 0");
    }
    ps->ready_us[e.tensor] = std::max(ps->ready_us[e.tensor], e.ready_us);
    *last_done_us = std::max(*last_done_us, e.done_us);
  }
  for (int t = 0; t < num_tensors; ++t) {
    if (ps->ready_us[t] < 0.0) {
      return Status::Corruption(where + ": tensor " + std::to_string(t) + " (\"" +
                                run.workload.tensors[t].name + "\") has no ready time");
    }
  }
  return Status::Ok();
}

// Returns Corruption naming `where` if a collective row of st lists a tensor index outside
// [0, num_tensors).
Status CheckCollectiveRows(const std::string& where, const StepTrace& st, int num_tensors) {
  for (size_t i = 0; i < st.collectives.size(); ++i) {
    for (int t : st.collectives[i].tensors) {
      if (t < 0 || t >= num_tensors) {
        return Status::Corruption(where + " collective row " + std::to_string(i) +
                                  ": tensor index " + std::to_string(t) + " out of range");
      }
    }
  }
  return Status::Ok();
}

// Sets ps->first_cycle_us to the earliest start among st's cycle rows (unchanged without rows);
// a cycle with a non-finite start or negotiate end is Corruption naming `where`.
Status ReduceCycleRows(const std::string& where, const StepTrace& st, PreparedStep* ps) {
  for (const CycleRecord& c : st.cycles) {
    if (!std::isfinite(c.start_us) || !std::isfinite(c.negotiate_end_us)) {
      return Status::Corruption(where + " cycle " + std::to_string(c.cycle) +
                                ": start/negotiate_end are not finite");
    }
    if (ps->first_cycle_us < 0.0 || c.start_us < ps->first_cycle_us) {
      ps->first_cycle_us = c.start_us;
    }
  }
  return Status::Ok();
}

// The time rank 0's collectives and their copies ran: the union of their [start, end].
double BusyUs(const StepTrace& st) {
  std::vector<std::pair<double, double>> spans;
  for (const CollectiveRecord& c : st.collectives) {
    if (std::isfinite(c.start_us) && std::isfinite(c.end_us) && c.end_us > c.start_us) {
      spans.emplace_back(c.start_us, c.end_us);
    }
  }
  std::sort(spans.begin(), spans.end());
  double busy = 0.0, open_start = 0.0, open_end = -1.0;
  for (const auto& [start, end] : spans) {
    if (start > open_end) {
      if (open_end > open_start) busy += open_end - open_start;
      open_start = start;
      open_end = end;
    } else {
      open_end = std::max(open_end, end);
    }
  }
  if (open_end > open_start) busy += open_end - open_start;
  return busy;
}

// Checks the rows of one recorded step of run (named `name` in errors) and reduces them to
// *ps: InvalidArgument for a step without tensor rows, Corruption for inconsistent rows.
// REQUIRES: run has at least one tensor.
Status PrepareStep(const RunInfo& run, const std::string& name, const StepTrace& st,
                   PreparedStep* ps) {
  const std::string where = name + " step " + std::to_string(st.step);
  if (st.tensors.empty()) {
    return Status::InvalidArgument(where + " has no tensor rows");
  }
  if (!std::isfinite(st.step_ms) || st.step_ms <= 0.0) {
    return Status::Corruption(where + ": step_ms " + std::to_string(st.step_ms) +
                              " is not a positive time");
  }
  const int num_tensors = static_cast<int>(run.workload.tensors.size());
  ps->step = st.step;
  ps->measured_step_ms = st.step_ms;
  ps->backward_start_us = FiniteNonNegative(st.backward_start_us) ? st.backward_start_us : 0.0;
  ps->bytes = st.bytes;
  double last_done_us = 0.0;
  AUTOTUNE_RETURN_IF_ERROR(ReduceTensorRows(run, where, st, ps, &last_done_us));
  AUTOTUNE_RETURN_IF_ERROR(CheckCollectiveRows(where, st, num_tensors));
  AUTOTUNE_RETURN_IF_ERROR(ReduceCycleRows(where, st, ps));
  ps->work_cycles = static_cast<int>(st.cycles.size());
  ps->comm_busy_us = BusyUs(st);
  ps->ready_order.resize(num_tensors);
  std::iota(ps->ready_order.begin(), ps->ready_order.end(), 0);
  std::stable_sort(ps->ready_order.begin(), ps->ready_order.end(),
                   [&](int a, int b) { return ps->ready_us[a] < ps->ready_us[b]; });
  ps->compute_end_us = ComputeEndUs(run, st);
  const double gradients_end_us = std::max(ps->compute_end_us, last_done_us);
  ps->tail_us = std::max(0.0, st.step_ms * 1000.0 - gradients_end_us);
  return Status::Ok();
}

}  // namespace

double ComputeEndUs(const RunInfo& run, const StepTrace& step) {
  double last_ready_us = 0.0;
  for (const TensorEvent& e : step.tensors) {
    if (FiniteNonNegative(e.ready_us)) last_ready_us = std::max(last_ready_us, e.ready_us);
  }
  const double backward_start_us =
      FiniteNonNegative(step.backward_start_us) ? step.backward_start_us : 0.0;
  return std::max(backward_start_us + run.workload.backward_ms * 1000.0, last_ready_us);
}

int64_t PreparedTrace::FusionBytesPerStep(int world_size) const {
  int64_t total = 0;
  for (const TensorSpec& t : run_.workload.tensors) total += FusionBytes(t, world_size);
  return total;
}

Status PreparedTrace::Prepare(const Trace& trace, PreparedTrace* out) {
  const RunInfo& run = trace.run;
  const std::string name = "run " + std::to_string(run.id);
  if (run.topology.nodes < 1 || run.topology.ranks_per_node < 1) {
    return Status::Corruption(name + ": topology " + run.topology.key() + " is not valid");
  }
  if (run.workload.tensors.empty()) {
    return Status::Corruption(name + ": workload \"" + run.workload.name + "\" has no tensors");
  }
  if (trace.steps.empty()) {
    return Status::InvalidArgument(name + " has no recorded steps (no trace rows to replay)");
  }
  PreparedTrace prepared;
  prepared.run_ = run;
  for (const StepTrace& st : trace.steps) {
    PreparedStep ps;
    AUTOTUNE_RETURN_IF_ERROR(PrepareStep(run, name, st, &ps));
    prepared.steps_.push_back(std::move(ps));
  }
  *out = std::move(prepared);
  return Status::Ok();
}

}  // namespace autotune::sim
