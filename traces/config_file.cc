#include "traces/config_file.h"

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

namespace autotune {
namespace {

// horovodrun's sections that autotune reads nothing from but accepts.
const std::set<std::string> kIgnoredSections = {"timeline", "stall_check", "library_options",
                                                "logging"};

// A scalar's text, or an error naming source and key when the node is not a scalar.
Status ScalarText(const YAML::Node& node, const std::string& where, std::string* out) {
  if (!node.IsScalar()) {
    return Status::InvalidArgument(where + ": expected a single value");
  }
  *out = node.Scalar();
  return Status::Ok();
}

Status SetParam(const YAML::Node& value, const std::string& where, const std::string& knob,
                ConfigFile* config) {
  std::string text;
  AUTOTUNE_RETURN_IF_ERROR(ScalarText(value, where, &text));
  Status s = SetKnob(&config->knobs, knob, text);
  if (!s.ok()) return Status::InvalidArgument(where + ": \"" + text + "\" has the wrong type");
  config->set_knobs.insert(knob);
  return Status::Ok();
}

template <typename T>
Status ReadTyped(const YAML::Node& value, const std::string& where, T* out) {
  try {
    *out = value.as<T>();
    return Status::Ok();
  } catch (const YAML::Exception&) {
    std::string text = value.IsScalar() ? value.Scalar() : "(not a value)";
    return Status::InvalidArgument(where + ": \"" + text + "\" has the wrong type");
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

Status ParseParams(const YAML::Node& params, const std::string& source, ConfigFile* config) {
  static const std::set<std::string> kParams = {"fusion_threshold_mb", "cycle_time_ms",
                                                "cache_capacity", "hierarchical_allreduce",
                                                "hierarchical_allgather"};
  if (!params.IsMap()) return Status::InvalidArgument(source + ": params: expected a mapping");
  for (const auto& kv : params) {
    std::string key = kv.first.as<std::string>();
    std::string where = source + ": params." + key;
    if (!kParams.count(key)) return Status::InvalidArgument(where + ": unknown key");
    AUTOTUNE_RETURN_IF_ERROR(SetParam(kv.second, where, key, config));
  }
  return Status::Ok();
}

Status ParseAutotune(const YAML::Node& node, const std::string& source, ConfigFile* config) {
  if (!node.IsMap()) return Status::InvalidArgument(source + ": autotune: expected a mapping");
  TunerSettings& t = config->autotune;
  for (const auto& kv : node) {
    std::string key = kv.first.as<std::string>();
    std::string where = source + ": autotune." + key;
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
      if (t.gaussian_process_noise < 0) return Status::InvalidArgument(where + ": must be >= 0");
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
    std::string key = kv.first.as<std::string>();
    std::string where = source + ": autotune_extra." + key;
    if (key == "num_groups") {
      AUTOTUNE_RETURN_IF_ERROR(SetParam(kv.second, where, key, config));
    } else if (key == "nccl" || key == "mpi") {
      if (!kv.second.IsMap()) return Status::InvalidArgument(where + ": expected a mapping");
      for (const auto& sub : kv.second) {
        std::string sub_key = sub.first.as<std::string>();
        std::string knob = key + "_" + sub_key;
        std::string sub_where = where + "." + sub_key;
        bool known = (key == "nccl" && (sub_key == "algo" || sub_key == "proto" ||
                                        sub_key == "max_nchannels" || sub_key == "cross")) ||
                     (key == "mpi" && sub_key == "allreduce_algorithm");
        if (!known) return Status::InvalidArgument(sub_where + ": unknown key");
        AUTOTUNE_RETURN_IF_ERROR(SetParam(sub.second, sub_where, knob, config));
      }
    } else if (key == "provenance") {
      config->provenance_json = YamlToJson(kv.second).dump();
    } else {
      return Status::InvalidArgument(where + ": unknown key");
    }
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
                                   std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  ConfigFile config;
  if (root.IsNull()) {
    *out = config;
    return Status::Ok();
  }
  if (!root.IsMap()) return Status::InvalidArgument(source + ": expected a YAML mapping");
  try {
    for (const auto& kv : root) {
      std::string section = kv.first.as<std::string>();
      if (section == "params") {
        AUTOTUNE_RETURN_IF_ERROR(ParseParams(kv.second, source, &config));
      } else if (section == "autotune") {
        AUTOTUNE_RETURN_IF_ERROR(ParseAutotune(kv.second, source, &config));
      } else if (section == "autotune_extra") {
        AUTOTUNE_RETURN_IF_ERROR(ParseExtra(kv.second, source, &config));
      } else if (!kIgnoredSections.count(section)) {
        return Status::InvalidArgument(source + ": " + section + ": unknown section");
      }
    }
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(source + ": " + e.msg);
  }
  Status valid = config.knobs.Validate();
  if (!valid.ok()) return valid.WithPrefix(source);
  *out = std::move(config);
  return Status::Ok();
}

Status LoadConfigFile(const std::string& path, ConfigFile* out) {
  std::ifstream in(path);
  if (!in) return Status::IoError(path + ": cannot read config file");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return ParseConfigYaml(buffer.str(), path, out);
}

// Shortest decimal form that reads back as the same value, so files stay readable.
static std::string Number(double v) {
  std::ostringstream out;
  out.precision(15);
  out << v;
  return out.str();
}

std::string ConfigToYaml(const ConfigFile& config) {
  const Knobs& k = config.knobs;
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "params" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "fusion_threshold_mb" << YAML::Value << Number(k.fusion_threshold_mb);
  out << YAML::Key << "cycle_time_ms" << YAML::Value << Number(k.cycle_time_ms);
  out << YAML::Key << "cache_capacity" << YAML::Value << k.cache_capacity;
  out << YAML::Key << "hierarchical_allreduce" << YAML::Value << k.hierarchical_allreduce;
  out << YAML::Key << "hierarchical_allgather" << YAML::Value << k.hierarchical_allgather;
  out << YAML::EndMap;
  const TunerSettings& t = config.autotune;
  out << YAML::Key << "autotune" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "enabled" << YAML::Value << t.enabled;
  if (!t.log_file.empty()) out << YAML::Key << "log_file" << YAML::Value << t.log_file;
  out << YAML::Key << "warmup_samples" << YAML::Value << t.warmup_samples;
  out << YAML::Key << "steps_per_sample" << YAML::Value << t.steps_per_sample;
  out << YAML::Key << "bayes_opt_max_samples" << YAML::Value << t.bayes_opt_max_samples;
  out << YAML::Key << "gaussian_process_noise" << YAML::Value
      << Number(t.gaussian_process_noise);
  out << YAML::EndMap;
  out << YAML::Key << "autotune_extra" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "num_groups" << YAML::Value << k.num_groups;
  out << YAML::Key << "nccl" << YAML::Value << YAML::BeginMap;
  if (!k.nccl_algo.empty()) out << YAML::Key << "algo" << YAML::Value << k.nccl_algo;
  if (!k.nccl_proto.empty()) out << YAML::Key << "proto" << YAML::Value << k.nccl_proto;
  if (k.nccl_max_nchannels != 0) {
    out << YAML::Key << "max_nchannels" << YAML::Value << k.nccl_max_nchannels;
  }
  out << YAML::Key << "cross" << YAML::Value << k.nccl_cross;
  out << YAML::EndMap;
  if (k.mpi_allreduce_algorithm != 0) {
    out << YAML::Key << "mpi" << YAML::Value << YAML::BeginMap << YAML::Key
        << "allreduce_algorithm" << YAML::Value << k.mpi_allreduce_algorithm << YAML::EndMap;
  }
  nlohmann::json provenance = nlohmann::json::parse(config.provenance_json, nullptr, false);
  if (provenance.is_object() && !provenance.empty()) {
    out << YAML::Key << "provenance" << YAML::Value << YAML::BeginMap;
    for (const auto& [key, value] : provenance.items()) {
      out << YAML::Key << key << YAML::Value;
      if (value.is_string()) {
        out << value.get<std::string>();
      } else {
        out << value.dump();
      }
    }
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

Status SaveConfigFile(const std::string& path, const ConfigFile& config) {
  std::ofstream file(path, std::ios::trunc);
  if (!file) return Status::IoError(path + ": cannot write config file");
  file << ConfigToYaml(config);
  file.close();
  if (!file) return Status::IoError(path + ": write failed");
  return Status::Ok();
}

}  // namespace autotune
