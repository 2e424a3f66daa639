// Errors from the CUDA runtime and NCCL as autotune::Status, naming the call that failed and
// the library's own error text (cudaGetErrorString; ncclGetErrorString plus the
// communicator's last error message when one is known).
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <string>

#include "traces/status.h"

namespace autotune::executor {

// OK for cudaSuccess, else Internal("CALL failed: <error name>: <error string>").
Status CudaStatus(cudaError_t rc, const std::string& call);
// OK for ncclSuccess, else Internal("CALL failed: <error string>[: <last error>]"). comm
// may be null.
Status NcclStatus(ncclResult_t rc, const std::string& call, ncclComm_t comm = nullptr);

}  // namespace autotune::executor
