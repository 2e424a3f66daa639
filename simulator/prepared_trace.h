// PreparedTrace: a recorded trace checked once and reduced to the flat per-step arrays a
// replay reads (the slowest rank's ready time per tensor, its ready order, the compute
// end and the measured tail of each step), so a replay touches no maps and no rows.
#pragma once

#include <cstdint>
#include <vector>

#include "traces/status.h"
#include "traces/trace.h"

namespace autotune::sim {

struct PreparedStep {
  int step = 0;                    // StepTrace::step
  double measured_step_ms = 0.0;   // StepTrace::step_ms
  double backward_start_us = 0.0;  // StepTrace::backward_start_us
  // Backward compute finished on the slowest rank: max(backward start + backward_ms,
  // latest ready time).
  double compute_end_us = 0.0;
  // Measured step end minus max(compute end, last tensor done): the optimizer, the
  // step-end barrier and what else the step pays after its gradients; knob-independent.
  double tail_us = 0.0;
  int64_t bytes = 0;             // StepTrace::bytes (reduced + gathered)
  std::vector<double> ready_us;  // per tensor: max over ranks of TensorEvent::ready_us
  std::vector<int> ready_order;  // tensor indices by ready_us, ties in index order
  double first_cycle_us = -1.0;  // start of the step's first recorded cycle, -1 if none
  // The recorded communication load (CpuShare): time some collective or its copies ran on
  // rank 0 (the union of their [start, end]) and the recorded cycles that had work.
  double comm_busy_us = 0.0;
  int work_cycles = 0;
};

// When backward compute finished on the slowest rank of a recorded step: max(backward start +
// the workload's backward_ms, the latest ready time over every rank's tensor rows). Before it
// the ranks' compute threads run beside the communication; after it, until the step's tail,
// the communication runs alone. PreparedStep::compute_end_us is this. For an imported run the
// floor is its workload's backward_ms, the median last gradient over the steps kept, where
// diagnose (simulator/diagnosis.h) cuts each step at its own last gradient: making the replay
// cut the same way was tried 2026-11-29 and made resnet50's grid MAPE 3.4% -> 6.0% against
// real Horovod (bench/horovod), so the two differ on purpose.
double ComputeEndUs(const RunInfo& run, const StepTrace& step);

class PreparedTrace {
 public:
  // Checks every row of trace and precomputes the steps. Errors name the run, the step
  // and the row at fault (InvalidArgument for a run without trace rows, Corruption for
  // inconsistent rows).
  static Status Prepare(const Trace& trace, PreparedTrace* out);

  const RunInfo& run() const { return run_; }
  const Workload& workload() const { return run_.workload; }
  int num_tensors() const { return static_cast<int>(run_.workload.tensors.size()); }
  const std::vector<PreparedStep>& steps() const { return steps_; }
  // Sum of FusionBytes over the workload's tensors for a world size.
  int64_t FusionBytesPerStep(int world_size) const;

 private:
  RunInfo run_;
  std::vector<PreparedStep> steps_;
};

}  // namespace autotune::sim
