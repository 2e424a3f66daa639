#include "executor/backend_choice.h"

#include "executor/mpi_backend.h"
#include "executor/mpi_runtime.h"
#include "executor/nccl/nccl_factory.h"

namespace autotune::executor {

#ifndef AUTOTUNE_HAVE_NCCL
// Builds without NCCL have no executor/nccl/ library: the one factory entry point that
// every build answers (the others are never called there).
Status NcclAvailable() {
  return Status::NotSupported(
      "--backend nccl: this autotune was built without NCCL (CMake found no CUDA toolkit "
      "with NCCL, or AUTOTUNE_WITH_NCCL=OFF)");
}
#endif

Status ParseBackendFlag(const std::string& name, BackendKind* backend) {
  BackendKind parsed = BackendKind::kMpi;
  if (ParseBackend(name, &parsed).ok() && parsed == BackendKind::kGloo) {
    return Status::InvalidArgument("--backend gloo: not a data plane of the executor (mpi | "
                                   "nccl); gloo is measured by `autotune calibrate --backend "
                                   "gloo`");
  }
  if (ParseBackend(name, backend).ok()) return Status::Ok();
  return Status::InvalidArgument("--backend " + (name.empty() ? "\"\"" : name) +
                                 ": unknown backend (mpi | nccl)");
}

Status CheckBackendUsable(BackendKind backend) {
  return backend == BackendKind::kNccl ? NcclAvailable() : Status::Ok();
}

Status CreateBackend(BackendKind backend, MPI_Comm world, const NodeLayout& layout,
                     const LayoutComms& comms, const Knobs& knobs, std::unique_ptr<Backend>* out) {
  if (backend == BackendKind::kMpi) return CreateMpiBackend(world, comms, out);
#ifdef AUTOTUNE_HAVE_NCCL
  if (backend == BackendKind::kNccl) return MakeNcclBackend(world, layout, comms, knobs, out);
#endif
  // Reached only when CheckBackendUsable was skipped; agreed so that no rank waits alone.
  Status usable = CheckBackendUsable(backend);
  if (usable.ok()) {
    usable = Status::Internal(std::string("CreateBackend: backend ") + BackendName(backend) +
                              " not built");
  }
  return AgreeOnStatus(world, usable);
}

}  // namespace autotune::executor
