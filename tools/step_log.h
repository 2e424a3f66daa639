// A job's step log: one JSON object per line, the last one holding "step_ms": [...] (as
// bench/horovod/train.py prints), which `import` (--step-log, --traced-step-log) and
// `search --live --production-runs` read.
#pragma once

#include <string>

#include "traces/status.h"

namespace autotune::cli {

// The median of the "step_ms" list of the log's last JSON object line; errors name `flag`
// (the option the path came from), the path and the line.
Status ReadStepLog(const std::string& flag, const std::string& path, double* median_ms);

}  // namespace autotune::cli
