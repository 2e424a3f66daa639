// RunCalibrate: `autotune calibrate` as a library call. Every rank of the world calls it
// with the same options; rank 0 stores the calibration (Store::SaveCalibration).
//
// For every size (log-spaced: min_bytes, 2 min_bytes, ... up to max_bytes, max_bytes
// included) it times, after one untimed warm-up, `repetitions` runs of each collective and
// keeps the median, min and max of the slowest rank's time:
//   world        allreduce, allgather on all ranks (flat)
//   intra        allreduce, allgather within each node, all nodes at once (local size > 1)
//   cross        allreduce on every local rank's cross communicator at once (as the
//                hierarchical allreduce runs them); allgather on local rank 0's only (as
//                the hierarchical allgather runs it) (nodes > 1)
//   hierarchical the composed allreduce and allgather on the world (executor/hierarchical.h)
//   copy         one fusion-buffer copy-in of the size on every rank (op column: allreduce);
//                with the nccl backend the copy kernel's device time from CUDA events, one
//                batched copy-in cut into fusion-buffer members (MeasureDeviceCopyCurve,
//                executor/nccl/nccl_factory.h), rank 0's curve stored
// Message bytes are per rank (allgather: what each rank sends); allreduce data is float32.
// The backend (executor/backend_choice.h) is checked on every rank before the database is
// opened; the calibration stores its name and hardware (for nccl: the GPU).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "traces/backend_kind.h"
#include "traces/calibration.h"
#include "traces/knobs.h"
#include "traces/stall_settings.h"
#include "traces/status.h"

namespace autotune::executor {

struct CalibrateOptions {
  int64_t min_bytes = 1024;                // smallest message, bytes, >= 4. Default 1 KiB.
  int64_t max_bytes = 64LL * 1024 * 1024;  // largest message, bytes, >= min. Default 64 MiB.
  int repetitions = 10;                    // timed runs per point, >= 1. Default 10.
  std::string db_path = "autotune.db";     // SQLite database, created if missing
  BackendKind backend = BackendKind::kMpi;  // mpi, or nccl (CUDA device memory)
  // Per-launch knobs of the nccl backend (nccl_algo, nccl_proto, nccl_max_nchannels,
  // nccl_cross) and, recorded with an mpi calibration, mpi_tcp_eager_limit (the caller sets
  // its environment before MPI_Init); the other fields are unused. Default: the libraries'
  // own choices, cross via NCCL.
  Knobs knobs;
  MPI_Comm world = MPI_COMM_WORLD;
  // The stall check (executor/stall_inspector.h); a shutdown ends the job with
  // kStallExitCode (executor/stall_inspector.h), nothing saved.
  StallSettings stall;
  // Rank 0, after each message size: sizes done, sizes in all, the size in bytes. Null: none.
  std::function<void(int done, int total, int64_t bytes)> on_size;
};

// The message sizes measured, ascending, each a multiple of 4 bytes.
std::vector<int64_t> CalibrationSizes(int64_t min_bytes, int64_t max_bytes);

// Checks the options and that this process can run the backend (no MPI, local).
Status ValidateCalibrateOptions(const CalibrateOptions& options);

// Measures and stores. On every rank *out holds the points; its id is the stored one.
Status RunCalibrate(const CalibrateOptions& options, Calibration* out);

}  // namespace autotune::executor
