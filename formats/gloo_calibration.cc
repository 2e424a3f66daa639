#include "formats/gloo_calibration.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <utility>

namespace autotune {
namespace {

Status Bad(const std::string& what) {
  return Status::InvalidArgument("gloo calibration helper's output: " + what);
}

}  // namespace

Status ParseGlooCalibration(const std::string& text, int world_size,
                            const std::vector<int64_t>& sizes,
                            std::vector<CalibrationPoint>* points, std::string* torch_version) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Bad("not one JSON object");
  if (!j.contains("torch") || !j["torch"].is_string()) return Bad("no \"torch\" version");
  if (!j.contains("world_size") || !j["world_size"].is_number_integer() ||
      j["world_size"].get<int64_t>() != world_size) {
    return Bad("\"world_size\" is not the job's " + std::to_string(world_size) + " ranks");
  }
  if (!j.contains("points") || !j["points"].is_array() || j["points"].size() != sizes.size()) {
    return Bad("\"points\" is not a list of " + std::to_string(sizes.size()) + " sizes");
  }
  std::vector<CalibrationPoint> out;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const nlohmann::json& p = j["points"][i];
    const std::string where = "point " + std::to_string(i + 1);
    if (!p.is_array() || p.size() != 5 || !p[0].is_number_integer() ||
        !p[4].is_number_integer() || !p[1].is_number() || !p[2].is_number() ||
        !p[3].is_number()) {
      return Bad(where + " is not [bytes, median_us, min_us, max_us, repetitions]");
    }
    CalibrationPoint c;
    c.op = Op::kAllreduce;
    c.scope = Scope::kWorld;
    c.ranks = world_size;
    c.bytes = p[0].get<int64_t>();
    c.median_us = p[1].get<double>();
    c.min_us = p[2].get<double>();
    c.max_us = p[3].get<double>();
    c.repetitions = static_cast<int>(p[4].get<int64_t>());
    if (c.bytes != sizes[i]) {
      return Bad(where + " measured " + std::to_string(c.bytes) + " bytes, not the " +
                 std::to_string(sizes[i]) + " asked for");
    }
    const bool finite = std::isfinite(c.median_us) && std::isfinite(c.min_us) &&
                        std::isfinite(c.max_us);
    if (!finite || c.min_us <= 0.0 || c.min_us > c.median_us || c.median_us > c.max_us ||
        c.repetitions < 1) {
      return Bad(where + " (" + std::to_string(c.bytes) +
                 " bytes) has times that are not 0 < min <= median <= max or no repetitions");
    }
    out.push_back(c);
  }
  *points = std::move(out);
  *torch_version = j["torch"].get<std::string>();
  return Status::Ok();
}

}  // namespace autotune
