// Applies the per-launch NCCL knobs to this process's environment. NCCL reads NCCL_ALGO,
// NCCL_PROTO and NCCL_MAX_NCHANNELS when it initializes and caches some of them for the
// life of the process, so this must run before the process's first NCCL call
// (ncclGetUniqueId / ncclCommInitRank); the NCCL backend does it first thing.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "traces/knobs.h"
#include "traces/status.h"

namespace autotune::executor {

// Sets each (name, value) with setenv, or unsets the name when value is "". Fails naming
// the variable when setenv/unsetenv fails.
Status ApplyEnvironment(const std::vector<std::pair<std::string, std::string>>& vars);

// ApplyEnvironment(NcclKnobEnvironment(knobs)) (executor/nccl_tuner_csv.h). A knob at its
// default UNSETS its variable, so that the run really uses NCCL's default, as recorded with
// the run's knobs, even if the launching shell exported something else.
Status ApplyNcclKnobEnvironment(const Knobs& knobs);

}  // namespace autotune::executor
