// Applies a setting's library environment (traces/knob_table.h, KnobEnvironment) to this
// process. Libraries read it when they initialize (NCCL at its first call, Open MPI in
// MPI_Init, and mpirun passes it to the ranks), so this runs before that.
#pragma once

#include <vector>

#include "traces/knob_table.h"
#include "traces/knobs.h"
#include "traces/status.h"

namespace autotune::executor {

// Sets each (name, value) with setenv, or unsets the name when value is "". Fails naming
// the variable when setenv/unsetenv fails.
Status ApplyEnvironment(const std::vector<EnvVar>& vars);

// ApplyEnvironment(KnobEnvironment(knobs, library)): the same variables `autotune apply`
// exports. A knob at its library default UNSETS its variables, so that the run really uses
// the default recorded with its knobs, whatever the launching shell exported.
Status ApplyKnobEnvironment(const Knobs& knobs, KnobLibrary library);

}  // namespace autotune::executor
