#include "traces/backend_kind.h"

namespace autotune {

const char* BackendName(BackendKind backend) {
  switch (backend) {
    case BackendKind::kMpi: return "mpi";
    case BackendKind::kNccl: return "nccl";
    case BackendKind::kGloo: return "gloo";
  }
  return "mpi";
}

Status ParseBackend(const std::string& name, BackendKind* out) {
  for (BackendKind b : {BackendKind::kMpi, BackendKind::kNccl, BackendKind::kGloo}) {
    if (name == BackendName(b)) {
      *out = b;
      return Status::Ok();
    }
  }
  return Status::InvalidArgument("unknown backend \"" + name + "\" (mpi | nccl | gloo)");
}

}  // namespace autotune
