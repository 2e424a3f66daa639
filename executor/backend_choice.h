// The data plane of a record or calibrate run: BackendKind::kMpi (executor/mpi_backend.h,
// host memory, always built) or kNccl (executor/nccl/nccl_factory.h, CUDA device memory,
// built only with AUTOTUNE_HAVE_NCCL). The one place that maps --backend to a backend, so
// that record and calibrate accept and refuse exactly the same names.
#pragma once

#include <mpi.h>

#include <memory>
#include <string>

#include "executor/backend.h"
#include "executor/layout.h"
#include "traces/backend_kind.h"
#include "traces/knobs.h"
#include "traces/status.h"

namespace autotune::executor {

// Parses the value of --backend for the executor's data planes ("mpi", "nccl"); otherwise
// InvalidArgument naming --backend and the value: "--backend X: unknown backend (mpi | nccl)",
// or for "gloo" (a calibration library, not a data plane): "--backend gloo: not a data plane
// of the executor (mpi | nccl); gloo is measured by `autotune calibrate --backend gloo`".
Status ParseBackendFlag(const std::string& name, BackendKind* backend);

// Whether this process can run the backend (local, no MPI): for kNccl, NcclAvailable()
// (NotSupported in a build without NCCL or with no CUDA device). Cheap; never starts NCCL.
// For kMpi it touches no CUDA at all.
Status CheckBackendUsable(BackendKind backend);

// Creates the backend over world and the layout's communicators. Collective over world;
// every rank gets the same verdict. knobs: the per-launch NCCL knobs (nccl_algo, nccl_proto,
// nccl_max_nchannels, nccl_cross) for kNccl; unused by kMpi.
// REQUIRES CheckBackendUsable(backend) passed on every rank.
Status CreateBackend(BackendKind backend, MPI_Comm world, const NodeLayout& layout,
                     const LayoutComms& comms, const Knobs& knobs, std::unique_ptr<Backend>* out);

}  // namespace autotune::executor
