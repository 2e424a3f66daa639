// What python/autotune_torch/gloo_calibrate.py prints (rank 0, one JSON line): torch's gloo
// allreduce timed against message size, the measurements of `autotune calibrate --backend
// gloo` (tools/gloo_calibrate.h):
//   {"torch": VERSION, "world_size": N,
//    "points": [[bytes, median_us, min_us, max_us, repetitions], ...]}
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "traces/calibration.h"
#include "traces/status.h"

namespace autotune {

// The helper's line as calibration points of the world allreduce on world_size ranks (scope
// world, op allreduce), one per size of `sizes` in that order, and the torch version in
// *torch_version. InvalidArgument, one line naming what is wrong, when the text is not that
// JSON object, its world_size is not world_size, its sizes are not `sizes`, or a time is not
// finite and positive with min <= median <= max.
Status ParseGlooCalibration(const std::string& text, int world_size,
                            const std::vector<int64_t>& sizes,
                            std::vector<CalibrationPoint>* points, std::string* torch_version);

}  // namespace autotune
