// Target: what a search's measured samples run on; it decides which knobs can matter at all
// (tuner/job_space.h).
#pragma once

#include <string>

#include "traces/status.h"

namespace autotune::tuner {

enum class Target {
  kCpu,       // Horovod on CPUs (MPI): it turns hierarchical collectives off without NCCL/DDL
  kNccl,      // Horovod with NCCL: hierarchical collectives exist
  kExecutor,  // autotune's own executor: every knob exists
};
// "cpu", "nccl", "executor".
const char* TargetName(Target target);
// Inverse of TargetName; InvalidArgument naming the value and the choices otherwise.
Status ParseTarget(const std::string& name, Target* target);

}  // namespace autotune::tuner
