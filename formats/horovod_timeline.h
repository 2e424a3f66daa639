// Horovod timeline I/O: a real Horovod job's timeline (the Chrome-trace JSON Horovod writes
// on rank 0 under HOROVOD_TIMELINE, with or without HOROVOD_TIMELINE_MARK_CYCLES, complete or
// cut off mid-write) read into a Trace of kind imported, and any Trace written back out in
// Horovod's format (same event names, one process per tensor) for Perfetto or
// chrome://tracing.
//
// How an import maps the timeline onto a Trace (traces/trace.h):
// - workload: every tensor that is allreduced/allgathered in every step (process names
//   "allreduce.NAME" / "allgather.NAME"; broadcasts and one-off tensors are left out), its
//   shape and dtype from the args of its op's first closing event that carries them (every
//   closing event's shape must parse), in the ready order (rank 0) of
//   the first kept step, ready_ms = that ready time from the step's start; forward_ms and
//   optimizer_ms 0 and backward_ms the last ready_ms (the compute is inside the ready times);
//   named options.workload_name, else the file's name without folder and extension;
// - steps: the k-th occurrence of each recurring tensor belongs to step k (a tensor may
//   recur once less than the most frequent one: a cut-off file loses part of its last
//   step); only steps complete for every tensor are kept, and of those the first
//   `warmup_steps` are left out. A step starts when the previous step's last collective
//   finished (its op's closing event) and ends when its own last collective finished, so
//   step_ms is that difference and everything before a tensor's readiness (optimizer,
//   forward, backward) lies inside its ready time, and backward_start_us is 0. The file's
//   first step starts where the latest op before its first negotiation (the broadcasts)
//   ended, else at the file's first timestamp;
// - per tensor and step, each rank's ready time is its rank tick (events named "0".."N-1"
//   inside the negotiation, written when the negotiation went through the coordinator,
//   i.e. on a response-cache miss) where present; else rank 0's is its NEGOTIATE_* start
//   (with the response cache on, Horovod's default, the first cycle in which any rank had
//   offered the tensor) and the other ranks' the start of the cycle (CYCLE_START) in which
//   the negotiation ended, else the negotiation end; both are bounds, not times: no cycle
//   runs while a collective does, so a tensor offered during one reads as offered at its end.
//   With a ready log (options.ready_log) every rank's logged time replaces them. All clamped
//   into [step start, done]; done is the tensor's op end;
// - collectives: the tensors of one fused response form one collective. Horovod begins their
//   ops (ALLREDUCE/ALLGATHER) one after another, microseconds apart, before any activity of
//   theirs begins, so in op-start order a tensor joins the collective being formed when its
//   op begins no later than that collective's first activity (INIT_FUSION_BUFFER,
//   MEMCPY_IN_FUSION_BUFFER, MPI_/NCCL_ ...). start = the first op's begin, copy-in ends when
//   the members' MPI_/NCCL_ activity begins (the latest of them), comm ends when it ends,
//   end = the members' latest op end; bytes = the sum of FusionBytes
//   (traces/fusion_policy.h) of the members, as the executor records them;
//   algorithm hierarchical only on nccl with the op's hierarchical knob set;
// - cycles: one CycleRecord per CYCLE_START that had work (a tensor offered or agreed, or a
//   collective launched, in it), numbered from the step's first mark; negotiate_end = the
//   latest negotiation end among the tensors agreed in it; cache_hits = those agreed
//   without rank ticks. A timeline without marks gives no cycles (every collective in 0);
// - backend: nccl when the activities are NCCL_*, else mpi;
// - run: kind imported, command from the options, hardware "horovod timeline SOURCE",
//   steps_planned = steps kept, complete, with the summary FinishRun would compute.
#pragma once

#include <cstdint>
#include <string>

#include "formats/horovod_ready_log.h"
#include "formats/import_options.h"
#include "traces/knobs.h"
#include "traces/status.h"
#include "traces/topology.h"
#include "traces/trace.h"

namespace autotune {

// Parses a timeline's text into trace (run.kind = kImported, run.id = 0, steps filled). A
// text cut off inside the array (no closing "]") is imported up to its last complete step
// with summary->truncated set. Errors (InvalidArgument, one line, trace untouched):
// "SOURCE: event K: what is wrong" (K counts the array's elements from 0: `jq '.[K]'`), or
// "SOURCE: no recurring allreduce/allgather tensors" when there is nothing to import, or
// "SOURCE: ..." for what no one event shows (too few steps for the warm-up, no rank ticks to
// count the ranks by). summary may be null.
// With `ready` (a ready log, formats/horovod_ready_log.h, of the same run), every rank's ready
// time of each tensor it names is the logged one, put on the timeline's clock through pid 0's
// start_time_since_epoch_in_micros; refused (one line naming the log) where the log's ranks
// or steps fall short of the timeline's, it names none of its tensors, or a logged time lies
// more than 2 ms outside the window the timeline allows it (after the end of that tensor's
// negotiation, or before its previous step's op began, or before the timeline began):
// clocks that do not line up, such as another run's log.
Status ParseHorovodTimeline(const std::string& text, const ImportOptions& options, Trace* trace,
                            ImportSummary* summary, const HorovodReadyLog* ready = nullptr);
// The largest timeline read (1 GiB; a folder or a device is refused before reading).
inline constexpr int64_t kMaxTimelineFileBytes = int64_t{1} << 30;
// Reads options.source (and options.ready_log where given) and parses it; IoError naming the
// file when it cannot be read.
Status LoadHorovodTimeline(const ImportOptions& options, Trace* trace, ImportSummary* summary);

// The trace (recorded, imported or simulated) as a Horovod timeline: one process per tensor
// ("allreduce.NAME"), per step NEGOTIATE_ALLREDUCE (rank 0 ready -> the later of the latest
// rank's readiness and its cycle's negotiation end) with one tick per rank, then
// ALLREDUCE enclosing MEMCPY_IN_FUSION_BUFFER / MPI_ALLREDUCE (NCCL_ALLREDUCE on nccl) /
// MEMCPY_OUT_FUSION_BUFFER, its closing event carrying dtype and shape; CYCLE_START marks;
// steps laid end to end. ParseHorovodTimeline of the result (warmup_steps = 0) gives back the
// workload's tensors and the collectives' members, bytes and order.
std::string WriteHorovodTimeline(const Trace& trace);

}  // namespace autotune
