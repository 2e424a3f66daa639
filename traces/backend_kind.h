// BackendKind: the collective library a run or a calibration used. The one place that
// spells the names the database and the command line use ("mpi", "nccl", "gloo").
#pragma once

#include <string>

#include "traces/status.h"

namespace autotune {

enum class BackendKind {
  kMpi,   // Open MPI on host memory
  kNccl,  // NCCL on CUDA device memory
  // torch.distributed's gloo on host memory: a calibration's library only (`autotune
  // calibrate --backend gloo`, for DDP jobs on CPUs); runs record mpi or nccl.
  kGloo,
};

// "mpi" | "nccl" | "gloo".
const char* BackendName(BackendKind backend);
// Inverse of BackendName; InvalidArgument naming the value and the accepted names otherwise.
Status ParseBackend(const std::string& name, BackendKind* out);

}  // namespace autotune
