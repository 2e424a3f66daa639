#include "traces/knobs.h"

#include <cmath>
#include <cstdlib>
#include <sstream>

namespace autotune {
namespace {

Status OutOfRange(const std::string& name, const std::string& value, const std::string& range) {
  return Status::InvalidArgument("knob " + name + " = " + value + " is out of range " + range);
}

std::string FormatNumber(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

Status ParseDouble(const std::string& name, const std::string& text, double* out) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v)) {
    return Status::InvalidArgument("knob " + name + ": \"" + text + "\" is not a number");
  }
  *out = v;
  return Status::Ok();
}

Status ParseInt(const std::string& name, const std::string& text, int* out) {
  char* end = nullptr;
  long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || end != text.c_str() + text.size()) {
    return Status::InvalidArgument("knob " + name + ": \"" + text + "\" is not an integer");
  }
  *out = static_cast<int>(v);
  return Status::Ok();
}

Status ParseBool(const std::string& name, const std::string& text, bool* out) {
  if (text == "1" || text == "true" || text == "True" || text == "on" || text == "yes") {
    *out = true;
  } else if (text == "0" || text == "false" || text == "False" || text == "off" || text == "no") {
    *out = false;
  } else {
    return Status::InvalidArgument("knob " + name + ": \"" + text + "\" is not a boolean");
  }
  return Status::Ok();
}

bool OneOf(const std::string& v, std::initializer_list<const char*> allowed) {
  for (const char* a : allowed) {
    if (v == a) return true;
  }
  return false;
}

}  // namespace

int64_t Knobs::threshold_bytes() const {
  return static_cast<int64_t>(std::llround(fusion_threshold_mb * 1024.0 * 1024.0));
}

Status Knobs::Validate() const {
  if (!(fusion_threshold_mb >= 0 && fusion_threshold_mb <= 512)) {
    return OutOfRange("fusion_threshold_mb", FormatNumber(fusion_threshold_mb), "[0, 512] MB");
  }
  if (!(cycle_time_ms >= 0.1 && cycle_time_ms <= 100)) {
    return OutOfRange("cycle_time_ms", FormatNumber(cycle_time_ms), "[0.1, 100] ms");
  }
  if (cache_capacity < 0 || cache_capacity > 4096) {
    return OutOfRange("cache_capacity", std::to_string(cache_capacity), "[0, 4096]");
  }
  if (num_groups < 0 || num_groups > 64) {
    return OutOfRange("num_groups", std::to_string(num_groups), "[0, 64]");
  }
  if (!OneOf(nccl_algo, {"", "ring", "tree", "collnet", "collnetdirect", "collnetchain", "nvls",
                         "nvlstree", "pat"})) {
    return OutOfRange("nccl_algo", nccl_algo, "{ring, tree, collnet, nvls, nvlstree, pat}");
  }
  if (!OneOf(nccl_proto, {"", "simple", "ll", "ll128"})) {
    return OutOfRange("nccl_proto", nccl_proto, "{simple, ll, ll128}");
  }
  if (nccl_max_nchannels < 0 || nccl_max_nchannels > 64) {
    return OutOfRange("nccl_max_nchannels", std::to_string(nccl_max_nchannels), "[0, 64]");
  }
  if (!OneOf(nccl_cross, {"nccl", "mpi"})) {
    return OutOfRange("nccl_cross", nccl_cross, "{nccl, mpi}");
  }
  if (mpi_allreduce_algorithm < 0 || mpi_allreduce_algorithm > 6) {
    return OutOfRange("mpi_allreduce_algorithm", std::to_string(mpi_allreduce_algorithm),
                      "[0, 6]");
  }
  return Status::Ok();
}

const std::vector<std::string>& KnobNames() {
  static const std::vector<std::string> kNames = {
      "fusion_threshold_mb", "cycle_time_ms", "cache_capacity", "hierarchical_allreduce",
      "hierarchical_allgather", "num_groups", "nccl_algo", "nccl_proto", "nccl_max_nchannels",
      "nccl_cross", "mpi_allreduce_algorithm"};
  return kNames;
}

Status SetKnob(Knobs* k, const std::string& name, const std::string& value) {
  if (name == "fusion_threshold_mb") return ParseDouble(name, value, &k->fusion_threshold_mb);
  if (name == "cycle_time_ms") return ParseDouble(name, value, &k->cycle_time_ms);
  if (name == "cache_capacity") return ParseInt(name, value, &k->cache_capacity);
  if (name == "hierarchical_allreduce") return ParseBool(name, value, &k->hierarchical_allreduce);
  if (name == "hierarchical_allgather") return ParseBool(name, value, &k->hierarchical_allgather);
  if (name == "num_groups") return ParseInt(name, value, &k->num_groups);
  if (name == "nccl_algo") { k->nccl_algo = value; return Status::Ok(); }
  if (name == "nccl_proto") { k->nccl_proto = value; return Status::Ok(); }
  if (name == "nccl_max_nchannels") return ParseInt(name, value, &k->nccl_max_nchannels);
  if (name == "nccl_cross") { k->nccl_cross = value; return Status::Ok(); }
  if (name == "mpi_allreduce_algorithm") return ParseInt(name, value, &k->mpi_allreduce_algorithm);
  return Status::InvalidArgument("unknown knob \"" + name + "\"");
}

std::string KnobValue(const Knobs& k, const std::string& name) {
  if (name == "fusion_threshold_mb") return FormatNumber(k.fusion_threshold_mb);
  if (name == "cycle_time_ms") return FormatNumber(k.cycle_time_ms);
  if (name == "cache_capacity") return std::to_string(k.cache_capacity);
  if (name == "hierarchical_allreduce") return k.hierarchical_allreduce ? "true" : "false";
  if (name == "hierarchical_allgather") return k.hierarchical_allgather ? "true" : "false";
  if (name == "num_groups") return std::to_string(k.num_groups);
  if (name == "nccl_algo") return k.nccl_algo;
  if (name == "nccl_proto") return k.nccl_proto;
  if (name == "nccl_max_nchannels") return std::to_string(k.nccl_max_nchannels);
  if (name == "nccl_cross") return k.nccl_cross;
  if (name == "mpi_allreduce_algorithm") return std::to_string(k.mpi_allreduce_algorithm);
  return "";
}

nlohmann::json KnobsToJson(const Knobs& k) {
  return nlohmann::json{{"fusion_threshold_mb", k.fusion_threshold_mb},
                        {"cycle_time_ms", k.cycle_time_ms},
                        {"cache_capacity", k.cache_capacity},
                        {"hierarchical_allreduce", k.hierarchical_allreduce},
                        {"hierarchical_allgather", k.hierarchical_allgather},
                        {"num_groups", k.num_groups},
                        {"nccl_algo", k.nccl_algo},
                        {"nccl_proto", k.nccl_proto},
                        {"nccl_max_nchannels", k.nccl_max_nchannels},
                        {"nccl_cross", k.nccl_cross},
                        {"mpi_allreduce_algorithm", k.mpi_allreduce_algorithm}};
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
      text = FormatNumber(value.get<double>());
    } else {
      return Status::InvalidArgument("knobs: \"" + name + "\" has a value of the wrong type");
    }
    AUTOTUNE_RETURN_IF_ERROR(SetKnob(&k, name, text));
  }
  AUTOTUNE_RETURN_IF_ERROR(k.Validate());
  *out = k;
  return Status::Ok();
}

std::string KnobsShort(const Knobs& k) {
  std::ostringstream out;
  out << "threshold=" << k.fusion_threshold_mb << "MB cycle=" << k.cycle_time_ms
      << "ms cache=" << k.cache_capacity << " hier_ar=" << (k.hierarchical_allreduce ? 1 : 0)
      << " hier_ag=" << (k.hierarchical_allgather ? 1 : 0) << " groups=" << k.num_groups;
  if (!k.nccl_algo.empty()) out << " nccl_algo=" << k.nccl_algo;
  if (!k.nccl_proto.empty()) out << " nccl_proto=" << k.nccl_proto;
  if (k.nccl_max_nchannels != 0) out << " nccl_max_nchannels=" << k.nccl_max_nchannels;
  if (k.mpi_allreduce_algorithm != 0) out << " mpi_ar_alg=" << k.mpi_allreduce_algorithm;
  return out.str();
}

}  // namespace autotune
