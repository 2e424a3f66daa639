#include "executor/nccl/cuda_status.h"

namespace autotune::executor {

Status CudaStatus(cudaError_t rc, const std::string& call) {
  if (rc == cudaSuccess) return Status::Ok();
  return Status::Internal(call + " failed: " + cudaGetErrorName(rc) + ": " +
                          cudaGetErrorString(rc));
}

Status NcclStatus(ncclResult_t rc, const std::string& call, ncclComm_t comm) {
  if (rc == ncclSuccess) return Status::Ok();
  std::string message = call + " failed: " + ncclGetErrorString(rc);
  const char* last = ncclGetLastError(comm);
  if (last != nullptr && *last != '\0') message += std::string(": ") + last;
  return Status::Internal(message);
}

}  // namespace autotune::executor
