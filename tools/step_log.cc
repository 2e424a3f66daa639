#include "tools/step_log.h"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "traces/trace.h"

namespace autotune::cli {

Status ReadStepLog(const std::string& flag, const std::string& path, double* median_ms) {
  std::ifstream in(path);
  if (!in) return Status::IoError(flag + " " + path + ": cannot open");
  std::string line, last;
  int number = 0, last_number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line[0] == '{') {
      last = line;
      last_number = number;
    }
  }
  if (last.empty()) {
    return Status::InvalidArgument(flag + " " + path +
                                   ": no line holds a JSON object with \"step_ms\"");
  }
  const std::string where = flag + " " + path + " line " + std::to_string(last_number);
  nlohmann::json j = nlohmann::json::parse(last, nullptr, false);
  if (!j.is_object() || !j.contains("step_ms") || !j["step_ms"].is_array() ||
      j["step_ms"].empty()) {
    return Status::InvalidArgument(where + ": needs \"step_ms\": a non-empty list of numbers");
  }
  std::vector<double> steps;
  for (const auto& v : j["step_ms"]) {
    if (!v.is_number() || !(v.get<double>() > 0.0) || !std::isfinite(v.get<double>())) {
      return Status::InvalidArgument(where + ": \"step_ms\" holds a value that is not a "
                                     "positive number");
    }
    steps.push_back(v.get<double>());
  }
  *median_ms = Median(std::move(steps));
  return Status::Ok();
}

}  // namespace autotune::cli
