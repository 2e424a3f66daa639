// A real PyTorch DDP job's trace (written by autotune's recorder,
// python/autotune_torch/ddp_trace.py: one DIR/rank<R>.json per rank) read as an
// imported run of framework ddp, so that simulate, search, compare and runs use it like a
// recorded one.
//
// Mapping: the workload's tensors are the parameters that got a gradient, in the order they
// became ready on rank 0 in the first kept step (registration = their index in the file,
// which is model.parameters() order); ready_ms = rank 0's median ready time after the
// forward's end (the backward's start); forward_ms, backward_ms (up to the last gradient) and
// optimizer_ms (from the last bucket's completion to the step's end) are rank 0's medians.
// Per kept step: every rank's TensorEvent (ready; done = its bucket's completion), rank 0's
// buckets as collectives in launch order (cycle = DDP's bucket index; copy_in_end = start,
// as DDP copies gradients in when they are ready; comm_end = end = the allreduce's
// completion), no cycles; the step's time is rank 0's. Where every file names one kernel's
// monotonic clock and gives each step's start (version 2), or where each rank on another
// kernel than rank 0's gives its clock's measured offset from rank 0's, every rank's times are
// put on rank 0's clock and a bucket starts when its last rank launched it there; otherwise (version
// 1, no offsets) each rank keeps its own step start and a bucket runs its shortest time over
// the ranks before rank 0's end. The knobs are the file's DDP
// settings. The last bucket's copy back to the gradients is not observable from the hooks.
// The backend: nccl when the files' "backend" (the process group's) says so (the job ran on
// GPUs), else mpi (gloo on the host's CPUs; also a trace written before the field).
#pragma once

#include <cstdint>

#include "formats/import_options.h"
#include "traces/status.h"
#include "traces/trace.h"

namespace autotune {

// Reads options.source (a folder of rank<R>.json files, R = 0 .. world_size - 1) into trace
// (kind imported, framework ddp; the DDP knobs from the files override options.knobs').
// Errors (one line, trace untouched) name the file and the field at fault: a missing rank,
// a malformed file, files of different jobs (world size, parameters, settings), too few
// steps for the warm-up.
// The largest rank<R>.json read (256 MiB; a folder or a device is refused before reading).
inline constexpr int64_t kMaxDdpTraceFileBytes = int64_t{256} << 20;
// The most ranks a DDP trace may name ("world_size").
inline constexpr int kMaxDdpWorldSize = 65536;
Status LoadDdpTrace(const ImportOptions& options, Trace* trace, ImportSummary* summary);

}  // namespace autotune
