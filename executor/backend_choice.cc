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

namespace {

// ParseBackend, with the error naming the --backend flag.
Status ParseBackendFlag(const std::string& backend, BackendKind* kind) {
  if (ParseBackend(backend, kind).ok()) return Status::Ok();
  return Status::InvalidArgument("--backend " + (backend.empty() ? "\"\"" : backend) +
                                 ": unknown backend (mpi | nccl)");
}

}  // namespace

Status ValidateBackendName(const std::string& backend) {
  BackendKind kind = BackendKind::kMpi;
  return ParseBackendFlag(backend, &kind);
}

Status CheckBackendUsable(const std::string& backend) {
  BackendKind kind = BackendKind::kMpi;
  AUTOTUNE_RETURN_IF_ERROR(ParseBackendFlag(backend, &kind));
  return kind == BackendKind::kNccl ? NcclAvailable() : Status::Ok();
}

Status CreateBackend(const std::string& backend, MPI_Comm world, const NodeLayout& layout,
                     const LayoutComms& comms, const Knobs& knobs, std::unique_ptr<Backend>* out) {
  BackendKind kind = BackendKind::kMpi;
  const bool known = ParseBackendFlag(backend, &kind).ok();
  if (known && kind == BackendKind::kMpi) return CreateMpiBackend(world, comms, out);
#ifdef AUTOTUNE_HAVE_NCCL
  if (known && kind == BackendKind::kNccl) {
    return MakeNcclBackend(world, layout, comms, knobs, out);
  }
#endif
  // Reached only when CheckBackendUsable was skipped; agreed so that no rank waits alone.
  Status usable = CheckBackendUsable(backend);
  if (usable.ok()) usable = Status::Internal("CreateBackend: backend " + backend + " not built");
  return AgreeOnStatus(world, usable);
}

}  // namespace autotune::executor
