// The MPI ControlChannel: negotiation traffic on its own duplicate of the world
// communicator, so it never matches messages of the data collectives.
#pragma once

#include <mpi.h>

#include <memory>

#include "executor/negotiation.h"

namespace autotune::executor {

// Duplicates world (collective over world); the channel frees its duplicate.
std::unique_ptr<ControlChannel> CreateMpiControlChannel(MPI_Comm world);

}  // namespace autotune::executor
