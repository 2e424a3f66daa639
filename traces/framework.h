// Framework: the training framework whose communication a run models or measured, and so
// whose knobs it has (DESIGN.md, "Knobs"): Horovod (background cycle, negotiation, fusion
// buffer) or PyTorch DDP (gradient buckets). The one place that spells the names the
// database, config files and the command line use ("horovod", "ddp").
#pragma once

#include <string>

#include "traces/status.h"

namespace autotune {

enum class Framework {
  kHorovod,  // Horovod's background cycle and tensor fusion
  kDdp,      // PyTorch DistributedDataParallel's gradient buckets
};

// "horovod" | "ddp".
const char* FrameworkName(Framework framework);
// Inverse of FrameworkName; InvalidArgument naming the value and the accepted names otherwise.
Status ParseFramework(const std::string& name, Framework* out);

}  // namespace autotune
