#include "traces/framework.h"

namespace autotune {

const char* FrameworkName(Framework framework) {
  switch (framework) {
    case Framework::kHorovod: return "horovod";
    case Framework::kDdp: return "ddp";
  }
  return "horovod";
}

Status ParseFramework(const std::string& name, Framework* out) {
  for (Framework f : {Framework::kHorovod, Framework::kDdp}) {
    if (name == FrameworkName(f)) {
      *out = f;
      return Status::Ok();
    }
  }
  return Status::InvalidArgument("unknown framework \"" + name + "\" (horovod | ddp)");
}

}  // namespace autotune
