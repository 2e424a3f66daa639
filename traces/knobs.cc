#include "traces/knobs.h"

#include <cmath>
#include <sstream>

#include <nlohmann/json.hpp>

#include "traces/knob_table.h"

namespace autotune {

int64_t Knobs::threshold_bytes() const {
  return static_cast<int64_t>(std::llround(fusion_threshold_mb * 1024.0 * 1024.0));
}

int64_t Knobs::ddp_bucket_cap_bytes() const {
  return static_cast<int64_t>(ddp_bucket_cap_mb * 1024.0 * 1024.0);
}

int64_t Knobs::ddp_first_bucket_bytes() const {
  return static_cast<int64_t>(ddp_first_bucket_mb * 1024.0 * 1024.0);
}

Status Knobs::Validate() const {
  for (const KnobSpec& spec : KnobTable()) AUTOTUNE_RETURN_IF_ERROR(ValidateKnob(spec, *this));
  return Status::Ok();
}

const std::vector<std::string>& KnobNames() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> names;
    for (const KnobSpec& spec : KnobTable()) names.push_back(spec.name);
    return names;
  }();
  return kNames;
}

Status SetKnob(Knobs* knobs, const std::string& name, const std::string& value) {
  const KnobSpec* spec = FindKnob(name);
  if (spec == nullptr) return Status::InvalidArgument("unknown knob \"" + name + "\"");
  return SetKnobText(*spec, value, knobs);
}

std::string KnobValue(const Knobs& knobs, const std::string& name) {
  const KnobSpec* spec = FindKnob(name);
  return spec == nullptr ? "" : KnobText(*spec, knobs);
}

nlohmann::json KnobsToJson(const Knobs& knobs) {
  nlohmann::json j = nlohmann::json::object();
  for (const KnobSpec& spec : KnobTable()) {
    std::visit([&](auto member) { j[spec.name] = knobs.*member; }, spec.field);
  }
  return j;
}

Status KnobsFromJson(const nlohmann::json& j, Knobs* out) {
  if (!j.is_object()) return Status::InvalidArgument("knobs: expected a JSON object");
  Knobs k;
  for (const auto& [name, value] : j.items()) {
    std::string text;
    if (value.is_string()) {
      text = value.get<std::string>();
    } else if (value.is_boolean()) {
      text = value.get<bool>() ? "true" : "false";
    } else if (value.is_number_integer()) {
      text = std::to_string(value.get<int64_t>());
    } else if (value.is_number()) {
      std::ostringstream number;
      number << value.get<double>();
      text = number.str();
    } else {
      return Status::InvalidArgument("knobs: \"" + name + "\" has a value of the wrong type");
    }
    AUTOTUNE_RETURN_IF_ERROR(SetKnob(&k, name, text));
  }
  AUTOTUNE_RETURN_IF_ERROR(k.Validate());
  *out = k;
  return Status::Ok();
}

std::string KnobsShort(const Knobs& knobs, Framework framework) {
  std::string out;
  for (const KnobSpec& spec : KnobTable()) {
    if (spec.summary_label == nullptr || KnobIsUnset(spec, knobs)) continue;
    if (!KnobInFramework(spec, framework)) continue;
    std::string value = KnobText(spec, knobs);
    if (spec.type == KnobType::kBool) value = value == "true" ? "1" : "0";
    out += (out.empty() ? "" : " ") + std::string(spec.summary_label) + "=" + value +
           spec.summary_unit;
  }
  return out;
}

}  // namespace autotune
