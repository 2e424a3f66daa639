// The data plane of a record or calibrate run, chosen by name: "mpi" (executor/mpi_backend.h,
// host memory, always built) or "nccl" (executor/nccl/nccl_factory.h, CUDA device memory,
// built only with AUTOTUNE_HAVE_NCCL). The one place that maps the name to a backend, so
// that record and calibrate accept and refuse exactly the same names.
#pragma once

#include <mpi.h>

#include <memory>
#include <string>

#include "executor/backend.h"
#include "executor/layout.h"
#include "traces/knobs.h"
#include "traces/status.h"

namespace autotune::executor {

// Returns OK for "mpi" and "nccl"; otherwise InvalidArgument naming --backend and the value.
Status ValidateBackendName(const std::string& backend);

// Whether this process can run the backend (local, no MPI): ValidateBackendName, then for
// "nccl" NcclAvailable() (NotSupported in a build without NCCL or with no CUDA device).
// Cheap; never starts NCCL. For the mpi backend it touches no CUDA at all.
Status CheckBackendUsable(const std::string& backend);

// Creates the named backend over world and the layout's communicators. Collective over
// world; every rank gets the same verdict. knobs: the per-launch NCCL knobs (nccl_algo,
// nccl_proto, nccl_max_nchannels, nccl_cross) for "nccl"; unused by "mpi".
// REQUIRES CheckBackendUsable(backend) passed on every rank.
Status CreateBackend(const std::string& backend, MPI_Comm world, const NodeLayout& layout,
                     const LayoutComms& comms, const Knobs& knobs, std::unique_ptr<Backend>* out);

}  // namespace autotune::executor
