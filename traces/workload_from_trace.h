// The workload a stored run played, read back from its trace: what `record --like-run N`
// replays, so that an emulated run computes and readies its gradients when run N did (a
// recorded run, or a real job's imported timeline).
//
// Per stored step s (times from the step start, on each rank; traces/trace.h):
//   R[s][t]    = the latest ready_us of tensor t over the ranks (ready on the slowest rank);
//   first[s]   = min over t of R[s][t] (the first gradient ready everywhere);
//   end[s]     = the latest collective end_us (no collectives: the latest tensor done_us).
// The workload (medians over the steps; ms):
//   tensors      = the run's tensors (names, shapes, dtypes, ops, groups), in its order;
//   forward_ms   = median first[s];
//   ready_ms[t]  = max over t' <= t of median (R[s][t'] - first[s]): non-decreasing, so the
//                  first tensor is ready at 0 when the run's ready order is its tensor order;
//   backward_ms  = the last tensor's ready_ms;
//   optimizer_ms = median max(0, step_ms[s] - end[s]) (0 for an imported run, whose step
//                  ends at its last collective: its optimizer and forward lie in forward_ms).
// Per rank r of the run: rank_lead_ms[r] = median over s and t of (R[s][t] - its ready_us),
// how much earlier than the slowest rank its gradients are ready (>= 0).
#pragma once

#include <vector>

#include "traces/status.h"
#include "traces/trace.h"
#include "traces/workload.h"

namespace autotune {

struct TraceWorkload {
  Workload workload;                 // named as the run's workload
  std::vector<double> rank_lead_ms;  // one per rank of the run's world (topology)
};

// Derives the workload as above. InvalidArgument ("run N: ...") when the trace has no
// steps or no tensors, or a step lacks a tensor's ready time on every rank, or names a tensor or
// rank outside the run's workload and world.
Status WorkloadFromTrace(const Trace& trace, TraceWorkload* out);

}  // namespace autotune
