// The predicted per-collective timeline as CSV, one row per fused collective, comparable
// row by row with a recorded run's collectives.
#pragma once

#include <string>
#include <vector>

#include "traces/status.h"
#include "traces/trace.h"

namespace autotune::sim {

// Header line: setting,step,seq,cycle,op,algorithm,bytes,tensors,start_us,copy_in_end_us,
// comm_end_us,end_us,first_tensor,last_tensor
std::string TimelineCsvHeader();
// Rows of one setting's predicted steps (setting = its index in the command's output).
std::string TimelineCsvRows(int setting, const std::vector<StepTrace>& steps);
// Writes text to path (replacing it); IoError names the path.
Status WriteTextFile(const std::string& path, const std::string& text);

}  // namespace autotune::sim
