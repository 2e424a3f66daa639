#include "tuner/target.h"

namespace autotune::tuner {

const char* TargetName(Target target) {
  switch (target) {
    case Target::kCpu:
      return "cpu";
    case Target::kNccl:
      return "nccl";
    case Target::kExecutor:
      return "executor";
  }
  return "unknown";
}

Status ParseTarget(const std::string& name, Target* target) {
  for (Target t : {Target::kCpu, Target::kNccl, Target::kExecutor}) {
    if (name == TargetName(t)) {
      *target = t;
      return Status::Ok();
    }
  }
  return Status::InvalidArgument("target \"" + name + "\": expected cpu, nccl or executor");
}

}  // namespace autotune::tuner
