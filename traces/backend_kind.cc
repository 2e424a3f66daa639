#include "traces/backend_kind.h"

namespace autotune {

const char* BackendName(BackendKind backend) {
  switch (backend) {
    case BackendKind::kMpi: return "mpi";
    case BackendKind::kNccl: return "nccl";
  }
  return "mpi";
}

Status ParseBackend(const std::string& name, BackendKind* out) {
  for (BackendKind b : {BackendKind::kMpi, BackendKind::kNccl}) {
    if (name == BackendName(b)) {
      *out = b;
      return Status::Ok();
    }
  }
  return Status::InvalidArgument("unknown backend \"" + name + "\" (mpi | nccl)");
}

}  // namespace autotune
