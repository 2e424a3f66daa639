// BackendKind: the collective library a run or a calibration used. The one place that
// spells the names the database and the command line use ("mpi", "nccl").
#pragma once

#include <string>

#include "traces/status.h"

namespace autotune {

enum class BackendKind {
  kMpi,   // Open MPI on host memory
  kNccl,  // NCCL on CUDA device memory
};

// "mpi" | "nccl".
const char* BackendName(BackendKind backend);
// Inverse of BackendName; InvalidArgument naming the value and the accepted names otherwise.
Status ParseBackend(const std::string& name, BackendKind* out);

}  // namespace autotune
