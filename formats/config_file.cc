#include "formats/config_file.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "traces/files.h"
#include "traces/knob_table.h"

namespace autotune {
namespace {

// horovodrun's sections that autotune reads nothing from but accepts.
const std::set<std::string> kIgnoredSections = {"timeline", "library_options", "logging"};

const KnobSpec* FindKnobInYaml(const std::string& section, const std::string& key) {
  for (const KnobSpec& spec : KnobTable()) {
    if (section == spec.yaml_section && key == spec.yaml_key) return &spec;
  }
  return nullptr;
}

bool HasYamlSection(const std::string& section) {
  for (const KnobSpec& spec : KnobTable()) {
    if (section == spec.yaml_section) return true;
  }
  return false;
}

// A key or value as it appears in an error line: with its control characters escaped (JSON
// style), so that the line stays one line.
std::string Printable(const std::string& text) {
  for (unsigned char c : text) {
    if (c < 0x20 || c == 0x7f) {
      const std::string quoted =
          nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      return quoted.substr(1, quoted.size() - 2);
    }
  }
  return text;
}

// A scalar's text, or an error naming source and key when the node is not a scalar.
Status ScalarText(const YAML::Node& node, const std::string& where, std::string* out) {
  if (!node.IsScalar()) {
    return Status::InvalidArgument(where + ": expected a single value");
  }
  *out = node.Scalar();
  return Status::Ok();
}

// Sets the knob whose YAML home is section.key from a scalar; unknown key: an error.
Status SetParam(const YAML::Node& value, const std::string& where, const std::string& section,
                const std::string& key, ConfigFile* config) {
  const KnobSpec* spec = FindKnobInYaml(section, key);
  if (spec == nullptr) return Status::InvalidArgument(where + ": unknown key");
  std::string text;
  AUTOTUNE_RETURN_IF_ERROR(ScalarText(value, where, &text));
  Status s = SetKnobText(*spec, text, &config->knobs);
  if (!s.ok()) {
    return Status::InvalidArgument(where + ": \"" + Printable(text) + "\" has the wrong type");
  }
  config->set_knobs.insert(spec->name);
  return Status::Ok();
}

template <typename T>
Status ReadTyped(const YAML::Node& value, const std::string& where, T* out) {
  try {
    *out = value.as<T>();
    return Status::Ok();
  } catch (const YAML::Exception&) {
    std::string text = value.IsScalar() ? value.Scalar() : "(not a value)";
    return Status::InvalidArgument(where + ": \"" + Printable(text) + "\" has the wrong type");
  }
}

nlohmann::json YamlToJson(const YAML::Node& node) {
  if (node.IsMap()) {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& kv : node) j[kv.first.as<std::string>()] = YamlToJson(kv.second);
    return j;
  }
  if (node.IsSequence()) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& item : node) j.push_back(YamlToJson(item));
    return j;
  }
  if (node.IsScalar()) {
    const std::string& s = node.Scalar();
    try {
      size_t used = 0;
      double d = std::stod(s, &used);
      if (used == s.size()) return d;
    } catch (const std::exception&) {
    }
    if (s == "true") return true;
    if (s == "false") return false;
    return s;
  }
  return nullptr;
}

// A section of knobs only: "params" (Horovod's) or "ddp".
Status ParseKnobSection(const YAML::Node& node, const std::string& source,
                        const std::string& section, ConfigFile* config) {
  if (!node.IsMap()) {
    return Status::InvalidArgument(source + ": " + section + ": expected a mapping");
  }
  for (const auto& kv : node) {
    std::string key = kv.first.as<std::string>();
    AUTOTUNE_RETURN_IF_ERROR(
        SetParam(kv.second, source + ": " + section + "." + Printable(key), section, key, config));
  }
  return Status::Ok();
}

Status ParseStallCheck(const YAML::Node& node, const std::string& source, ConfigFile* config) {
  if (!node.IsMap()) return Status::InvalidArgument(source + ": stall_check: expected a mapping");
  StallCheckSection& section = config->stall_check;
  for (const auto& kv : node) {
    const std::string key = kv.first.as<std::string>();
    const std::string where = source + ": stall_check." + key;
    std::optional<double>* seconds = key == "warning_time_seconds"    ? &section.warning_time_s
                                     : key == "shutdown_time_seconds" ? &section.shutdown_time_s
                                                                      : nullptr;
    if (key == "enabled") {
      bool enabled = true;
      AUTOTUNE_RETURN_IF_ERROR(ReadTyped(kv.second, where, &enabled));
      section.enabled = enabled;
    } else if (seconds != nullptr) {
      double value = 0.0;
      AUTOTUNE_RETURN_IF_ERROR(ReadTyped(kv.second, where, &value));
      if (!(value >= 0) || !std::isfinite(value)) {
        return Status::InvalidArgument(where + ": must be a number of seconds >= 0");
      }
      *seconds = value;
    } else {
      return Status::InvalidArgument(where + ": unknown key");
    }
  }
  return Status::Ok();
}

Status ParseAutotune(const YAML::Node& node, const std::string& source, ConfigFile* config) {
  if (!node.IsMap()) return Status::InvalidArgument(source + ": autotune: expected a mapping");
  TunerSettings& t = config->autotune;
  for (const auto& kv : node) {
    std::string key = kv.first.as<std::string>();
    std::string where = source + ": autotune." + Printable(key);
    if (key == "enabled") {
      AUTOTUNE_RETURN_IF_ERROR(ReadTyped(kv.second, where, &t.enabled));
    } else if (key == "log_file") {
      AUTOTUNE_RETURN_IF_ERROR(ReadTyped(kv.second, where, &t.log_file));
    } else if (key == "warmup_samples") {
      AUTOTUNE_RETURN_IF_ERROR(ReadTyped(kv.second, where, &t.warmup_samples));
      if (t.warmup_samples < 0) return Status::InvalidArgument(where + ": must be >= 0");
    } else if (key == "steps_per_sample") {
      AUTOTUNE_RETURN_IF_ERROR(ReadTyped(kv.second, where, &t.steps_per_sample));
      if (t.steps_per_sample < 1) return Status::InvalidArgument(where + ": must be >= 1");
    } else if (key == "bayes_opt_max_samples") {
      AUTOTUNE_RETURN_IF_ERROR(ReadTyped(kv.second, where, &t.bayes_opt_max_samples));
      if (t.bayes_opt_max_samples < 1) return Status::InvalidArgument(where + ": must be >= 1");
    } else if (key == "gaussian_process_noise") {
      AUTOTUNE_RETURN_IF_ERROR(ReadTyped(kv.second, where, &t.gaussian_process_noise));
      if (!(t.gaussian_process_noise >= 0) || !std::isfinite(t.gaussian_process_noise)) {
        return Status::InvalidArgument(where + ": must be a finite number >= 0");
      }
    } else {
      return Status::InvalidArgument(where + ": unknown key");
    }
  }
  return Status::Ok();
}

Status ParseExtra(const YAML::Node& node, const std::string& source, ConfigFile* config) {
  if (!node.IsMap()) {
    return Status::InvalidArgument(source + ": autotune_extra: expected a mapping");
  }
  for (const auto& kv : node) {
    const std::string key = kv.first.as<std::string>();
    const std::string where = source + ": autotune_extra." + Printable(key);
    if (key == "provenance") {
      // YAML does not check that text is UTF-8; JSON must be: bad bytes become U+FFFD.
      config->provenance_json =
          YamlToJson(kv.second).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    } else if (kv.second.IsMap()) {  // a subsection of backend knobs: nccl, mpi
      const std::string section = "autotune_extra." + key;
      if (!HasYamlSection(section)) return Status::InvalidArgument(where + ": unknown key");
      for (const auto& sub : kv.second) {
        const std::string sub_key = sub.first.as<std::string>();
        AUTOTUNE_RETURN_IF_ERROR(
            SetParam(sub.second, where + "." + Printable(sub_key), section, sub_key, config));
      }
    } else if (HasYamlSection("autotune_extra." + key)) {
      return Status::InvalidArgument(where + ": expected a mapping");
    } else {
      AUTOTUNE_RETURN_IF_ERROR(SetParam(kv.second, where, "autotune_extra", key, config));
    }
  }
  return Status::Ok();
}

// A key given twice in one mapping (anywhere in the document) is an error naming the key's
// path and line: YAML leaves duplicates undefined and yaml-cpp would keep one silently.
Status CheckNoDuplicateKeys(const YAML::Node& node, const std::string& source,
                            const std::string& where) {
  if (node.IsSequence()) {
    for (const auto& item : node) {
      AUTOTUNE_RETURN_IF_ERROR(CheckNoDuplicateKeys(item, source, where));
    }
  }
  if (!node.IsMap()) return Status::Ok();
  std::set<std::string> seen;
  for (const auto& kv : node) {
    const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "?";
    const std::string path = where.empty() ? Printable(key) : where + "." + Printable(key);
    if (!seen.insert(key).second) {
      return Status::InvalidArgument(source + ": " + path + ": given twice (line " +
                                     std::to_string(kv.first.Mark().line + 1) + ")");
    }
    AUTOTUNE_RETURN_IF_ERROR(CheckNoDuplicateKeys(kv.second, source, path));
  }
  return Status::Ok();
}

}  // namespace

Status ParseConfigYaml(const std::string& text, const std::string& source, ConfigFile* out) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(source + ": malformed YAML at line " +
                                   std::to_string(e.mark.line + 1) + ": " + Printable(e.msg));
  }
  ConfigFile config;
  if (root.IsNull()) {
    *out = config;
    return Status::Ok();
  }
  if (!root.IsMap()) return Status::InvalidArgument(source + ": expected a YAML mapping");
  AUTOTUNE_RETURN_IF_ERROR(CheckNoDuplicateKeys(root, source, ""));
  try {
    for (const auto& kv : root) {
      std::string section = kv.first.as<std::string>();
      if (section == "params" || section == "ddp") {
        AUTOTUNE_RETURN_IF_ERROR(ParseKnobSection(kv.second, source, section, &config));
        if (section == "ddp") config.framework = Framework::kDdp;
      } else if (section == "autotune") {
        AUTOTUNE_RETURN_IF_ERROR(ParseAutotune(kv.second, source, &config));
      } else if (section == "autotune_extra") {
        AUTOTUNE_RETURN_IF_ERROR(ParseExtra(kv.second, source, &config));
      } else if (section == "stall_check") {
        AUTOTUNE_RETURN_IF_ERROR(ParseStallCheck(kv.second, source, &config));
      } else if (!kIgnoredSections.count(section)) {
        return Status::InvalidArgument(source + ": " + Printable(section) + ": unknown section");
      }
    }
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(source + ": " + Printable(e.msg));
  }
  if (config.framework == Framework::kDdp && root["params"]) {
    return Status::InvalidArgument(source +
                                   ": params (Horovod's knobs) and ddp (PyTorch DDP's) are both "
                                   "given; a config file is for one framework");
  }
  Status valid = config.knobs.Validate();
  if (!valid.ok()) return valid.WithPrefix(source);
  *out = std::move(config);
  return Status::Ok();
}

Status LoadConfigFile(const std::string& path, ConfigFile* out) {
  std::string text;
  AUTOTUNE_RETURN_IF_ERROR(ReadInputFile(path, "config file", kMaxConfigFileBytes, &text));
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    // A file that says nothing is more likely a write cut short than a wish for the defaults.
    return Status::InvalidArgument(path + ": the config file is empty; nothing to apply");
  }
  return ParseConfigYaml(text, path, out);
}

namespace {

// Keys longer than this are written as explicit keys: YAML's limit on an implicit key is 1024
// characters, and quoting and escaping can make a key up to six times its bytes.
constexpr size_t kMaxImplicitKeyBytes = 128;

// Shortest decimal form that reads back as the same value, so files stay readable.
std::string Number(double v) {
  std::ostringstream out;
  out.precision(15);
  out << v;
  return out.str();
}

void EmitKnobValue(const KnobSpec& spec, const Knobs& knobs, YAML::Emitter* out) {
  std::visit(
      [&](auto member) {
        const auto& value = knobs.*member;
        if constexpr (std::is_same_v<std::decay_t<decltype(value)>, double>) {
          *out << Number(value);
        } else {
          *out << value;
        }
      },
      spec.field);
}

// The knobs of `framework` in one YAML section ("params", "autotune_extra.nccl"), knobs at
// their "library default" value left out; subsections of `section` are emitted as nested
// mappings.
void EmitKnobSection(const std::string& section, const Knobs& knobs, Framework framework,
                     YAML::Emitter* out) {
  std::vector<std::string> subsections;
  for (const KnobSpec& spec : KnobTable()) {
    const std::string home = spec.yaml_section;
    if (home == section) {
      if (KnobIsUnset(spec, knobs) || !KnobInFramework(spec, framework)) continue;
      *out << YAML::Key << spec.yaml_key << YAML::Value;
      EmitKnobValue(spec, knobs, out);
    } else if (home.rfind(section + ".", 0) == 0 &&
               std::find(subsections.begin(), subsections.end(), home) == subsections.end()) {
      subsections.push_back(home);
    }
  }
  for (const std::string& sub : subsections) {
    bool any = false;
    for (const KnobSpec& spec : KnobTable()) {
      any = any || (sub == spec.yaml_section && !KnobIsUnset(spec, knobs));
    }
    if (!any) continue;
    *out << YAML::Key << sub.substr(section.size() + 1) << YAML::Value << YAML::BeginMap;
    EmitKnobSection(sub, knobs, framework, out);
    *out << YAML::EndMap;
  }
}

void EmitTunerSettings(const TunerSettings& t, YAML::Emitter* out) {
  *out << YAML::Key << "autotune" << YAML::Value << YAML::BeginMap;
  *out << YAML::Key << "enabled" << YAML::Value << t.enabled;
  if (!t.log_file.empty()) *out << YAML::Key << "log_file" << YAML::Value << t.log_file;
  *out << YAML::Key << "warmup_samples" << YAML::Value << t.warmup_samples;
  *out << YAML::Key << "steps_per_sample" << YAML::Value << t.steps_per_sample;
  *out << YAML::Key << "bayes_opt_max_samples" << YAML::Value << t.bayes_opt_max_samples;
  *out << YAML::Key << "gaussian_process_noise" << YAML::Value << Number(t.gaussian_process_noise);
  *out << YAML::EndMap;
}

void EmitProvenance(const std::string& provenance_json, YAML::Emitter* out) {
  nlohmann::json provenance = nlohmann::json::parse(provenance_json, nullptr, false);
  if (!provenance.is_object() || provenance.empty()) return;
  *out << YAML::Key << "provenance" << YAML::Value << YAML::BeginMap;
  for (const auto& [key, value] : provenance.items()) {
    // YAML caps an implicit key at 1024 characters; a longer one (quoted, escaped) is written
    // as an explicit "? key" so that the file reads back.
    if (key.size() > kMaxImplicitKeyBytes) *out << YAML::LongKey;
    *out << YAML::Key << key << YAML::Value;
    if (value.is_string()) {
      *out << value.get<std::string>();
    } else {
      *out << value.dump();
    }
  }
  *out << YAML::EndMap;
}

}  // namespace

std::string ConfigToYaml(const ConfigFile& config) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  if (config.framework == Framework::kDdp) {
    out << YAML::Key << "ddp" << YAML::Value << YAML::BeginMap;
    EmitKnobSection("ddp", config.knobs, config.framework, &out);
    out << YAML::EndMap;
  } else {
    out << YAML::Key << "params" << YAML::Value << YAML::BeginMap;
    EmitKnobSection("params", config.knobs, config.framework, &out);
    out << YAML::EndMap;
    EmitTunerSettings(config.autotune, &out);
  }
  out << YAML::Key << "autotune_extra" << YAML::Value << YAML::BeginMap;
  EmitKnobSection("autotune_extra", config.knobs, config.framework, &out);
  EmitProvenance(config.provenance_json, &out);
  out << YAML::EndMap;
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

Status SaveConfigFile(const std::string& path, const ConfigFile& config) {
  return WriteOutputFile(path, ConfigToYaml(config));
}

}  // namespace autotune
