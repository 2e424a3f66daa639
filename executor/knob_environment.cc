#include "executor/knob_environment.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace autotune::executor {

Status ApplyEnvironment(const std::vector<EnvVar>& vars) {
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

Status ApplyKnobEnvironment(const Knobs& knobs, KnobLibrary library) {
  return ApplyEnvironment(KnobEnvironment(knobs, library));
}

}  // namespace autotune::executor
