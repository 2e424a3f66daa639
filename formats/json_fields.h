// Typed reads of one field of a JSON object in autotune's own trace files (the
// DDP trace, the Horovod ready log): the value, or one line naming where and
// the key.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "traces/status.h"

namespace autotune::json_fields {

// The integer at j[key] (a JSON integer, or a number with no fraction) of at
// most 1e15 in magnitude, else "WHERE: "KEY" must be an integer".
Status Integer(const nlohmann::json& j, const char* key, const std::string& where, int64_t* out);

// The finite number at j[key], else "WHERE: "KEY" must be a number".
Status Number(const nlohmann::json& j, const char* key, const std::string& where, double* out);

}  // namespace autotune::json_fields
