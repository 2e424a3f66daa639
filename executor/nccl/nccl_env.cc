#include "executor/nccl/nccl_env.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "executor/nccl_tuner_csv.h"

namespace autotune::executor {

Status ApplyEnvironment(const std::vector<std::pair<std::string, std::string>>& vars) {
  for (const auto& [name, value] : vars) {
    const int rc = value.empty() ? unsetenv(name.c_str()) : setenv(name.c_str(), value.c_str(), 1);
    if (rc != 0) {
      return Status::Internal(
          (value.empty() ? "unsetenv(" + name + ")" : "setenv(" + name + "=" + value + ")") +
          " failed: " + std::strerror(errno));
    }
  }
  return Status::Ok();
}

Status ApplyNcclKnobEnvironment(const Knobs& knobs) {
  return ApplyEnvironment(NcclKnobEnvironment(knobs));
}

}  // namespace autotune::executor
