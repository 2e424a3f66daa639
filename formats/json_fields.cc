#include "formats/json_fields.h"

#include <cmath>

namespace autotune::json_fields {

Status Integer(const nlohmann::json& j, const char* key, const std::string& where, int64_t* out) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number() || !std::isfinite(it->get<double>()) ||
      std::floor(it->get<double>()) != it->get<double>() || std::fabs(it->get<double>()) > 1e15) {
    return Status::InvalidArgument(where + ": \"" + key + "\" must be an integer");
  }
  *out = it->is_number_integer() ? it->get<int64_t>() : static_cast<int64_t>(it->get<double>());
  return Status::Ok();
}

Status Number(const nlohmann::json& j, const char* key, const std::string& where, double* out) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number() || !std::isfinite(it->get<double>())) {
    return Status::InvalidArgument(where + ": \"" + key + "\" must be a number");
  }
  *out = it->get<double>();
  return Status::Ok();
}

}  // namespace autotune::json_fields
