// Horovod timeline I/O: a real Horovod job's timeline (the Chrome-trace JSON Horovod writes
// on rank 0 under HOROVOD_TIMELINE, with or without HOROVOD_TIMELINE_MARK_CYCLES, complete or
// cut off mid-write) read into a Trace of kind imported, and any Trace written back out in
// Horovod's format (same event names, one process per tensor) for Perfetto or
// chrome://tracing.
//
// How an import maps the timeline onto a Trace (traces/trace.h):
// - workload: every tensor that is allreduced/allgathered in every step (process names
//   "allreduce.NAME" / "allgather.NAME"; broadcasts and one-off tensors are left out), its
//   shape and dtype from the args of the op's closing event, in the ready order of the
//   first kept step;
// - steps: the k-th occurrence of each recurring tensor belongs to step k; the first
//   `warmup_steps` steps are left out. A step starts when the previous step's last
//   collective finished (its copy-out ended) and ends when its own last collective finished,
//   so step_ms is that difference and everything before a tensor's readiness (optimizer,
//   forward, backward) lies inside its ready time;
// - per tensor and step: rank 0's ready time is its NEGOTIATE_* start; the other ranks'
//   from the rank ticks (events named "0".."N-1" inside the negotiation) where present, else
//   the start of the cycle (CYCLE_START) in which the negotiation ended, else the
//   negotiation end; done is the tensor's op end;
// - collectives: tensors whose op (ALLREDUCE/ALLGATHER) starts at the same time form one
//   fused collective; copy-in = MEMCPY_IN_FUSION_BUFFER, comm = the MPI_/NCCL_ activity,
//   copy-out = MEMCPY_OUT_FUSION_BUFFER; bytes = the sum of the member tensors' bytes;
// - cycles: one CycleRecord per CYCLE_START that had work (negotiate_end = the latest
//   negotiation end among the tensors agreed in it);
// - backend: nccl when the activities are NCCL_*, else mpi.
#pragma once

#include <cstdint>
#include <string>

#include "traces/knobs.h"
#include "traces/status.h"
#include "traces/topology.h"
#include "traces/trace.h"

namespace autotune {

struct TimelineImportOptions {
  std::string source;       // file name, prefixes every error
  Topology topology;        // nodes/ranks_per_node; world size 0 = from the rank ticks
  Knobs knobs;              // the knobs the job ran under (the timeline does not carry them)
  int warmup_steps = 1;     // leading steps left out
  std::string command;      // RunInfo::command of the imported run
};

struct TimelineImportSummary {
  int steps = 0;                // steps kept
  int tensors = 0;              // tensors per step
  int64_t bytes_per_step = 0;   // sum of the tensors' bytes
  double step_ms_median = 0.0;
  int collectives_per_step = 0; // median fused collectives per kept step
  bool truncated = false;       // the file ended mid-write (a killed job)
};

// Parses a timeline's text into trace (run.kind = kImported, run.id = 0, steps filled).
// Errors (InvalidArgument, one line): "SOURCE: event K: what is wrong", or
// "SOURCE: no recurring allreduce/allgather tensors" when there is nothing to import.
Status ParseHorovodTimeline(const std::string& text, const TimelineImportOptions& options,
                            Trace* trace, TimelineImportSummary* summary);
// Reads options.source and parses it.
Status LoadHorovodTimeline(const TimelineImportOptions& options, Trace* trace,
                           TimelineImportSummary* summary);

// The trace (recorded, imported or simulated) as a Horovod timeline: one process per tensor
// ("allreduce.NAME"), per step NEGOTIATE_ALLREDUCE (rank 0 ready -> latest rank ready), then
// ALLREDUCE enclosing MEMCPY_IN_FUSION_BUFFER / MPI_ALLREDUCE (NCCL_ALLREDUCE on nccl) /
// MEMCPY_OUT_FUSION_BUFFER, its closing event carrying dtype and shape; CYCLE_START marks;
// steps laid end to end. ParseHorovodTimeline of the result (warmup_steps = 0) gives back the
// workload's tensors and the collectives' members, bytes and order.
std::string WriteHorovodTimeline(const Trace& trace);

}  // namespace autotune
