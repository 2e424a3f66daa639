// The MPI backend: host memory, Open MPI collectives on duplicated communicators.
//
// float32/float64/int32/int64 reduce with MPI_SUM on the matching MPI types; float16 and
// bfloat16 reduce with user MPI_Ops that add in float and round back to nearest even
// (exact for the integer-valued test data). Errors from MPI come back as Status (the
// communicators use MPI_ERRORS_RETURN) naming the primitive and level.
#pragma once

#include <mpi.h>

#include <memory>

#include "executor/backend.h"
#include "executor/layout.h"

namespace autotune::executor {

// Creates the backend over duplicates of world and of the layout's communicators; the
// backend owns the duplicates. Collective over world.
Status CreateMpiBackend(MPI_Comm world, const LayoutComms& comms, std::unique_ptr<Backend>* out);

// "CPU model; MPI library version" of this host, for RunInfo::hardware.
std::string HostHardwareDescription();

}  // namespace autotune::executor
