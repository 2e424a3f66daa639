#include "traces/knob_table.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "traces/files.h"
#include "traces/knobs.h"

namespace autotune {
namespace {

// NCCL's own spellings of the NCCL_ALGO / NCCL_PROTO values (it rejects "collnet"; one
// knob value may name several of its algorithms).
const std::vector<std::pair<std::string, std::string>>& NcclAlgoSpellings() {
  static const std::vector<std::pair<std::string, std::string>> k = {
      {"ring", "Ring"},
      {"tree", "Tree"},
      {"collnet", "CollNetDirect,CollNetChain"},
      {"collnetdirect", "CollNetDirect"},
      {"collnetchain", "CollNetChain"},
      {"nvls", "NVLS"},
      {"nvlstree", "NVLSTree"},
      {"pat", "PAT"}};
  return k;
}

const std::vector<std::pair<std::string, std::string>>& NcclProtoSpellings() {
  static const std::vector<std::pair<std::string, std::string>> k = {
      {"simple", "Simple"}, {"ll", "LL"}, {"ll128", "LL128"}};
  return k;
}

std::string Spelled(const std::vector<std::pair<std::string, std::string>>& spellings,
                    const std::string& value) {
  if (value.empty()) return "";
  for (const auto& [knob, library] : spellings) {
    if (knob == value) return library;
  }
  return value;  // not a value ValidateKnob accepts: passed on for the library to judge
}

constexpr int kSignificantDigits = 6;  // of a real knob's text

std::string Number(double v) {
  std::ostringstream out;
  out.precision(kSignificantDigits);
  out << v;
  return out.str();
}

std::vector<EnvVar> HorovodThreshold(const Knobs& k) {
  return {{"HOROVOD_FUSION_THRESHOLD", std::to_string(k.threshold_bytes())}};
}
std::vector<EnvVar> HorovodCycle(const Knobs& k) {
  return {{"HOROVOD_CYCLE_TIME", Number(k.cycle_time_ms)}};
}
std::vector<EnvVar> HorovodCache(const Knobs& k) {
  return {{"HOROVOD_CACHE_CAPACITY", std::to_string(k.cache_capacity)}};
}
std::vector<EnvVar> HorovodHierAllreduce(const Knobs& k) {
  return {{"HOROVOD_HIERARCHICAL_ALLREDUCE", k.hierarchical_allreduce ? "1" : "0"}};
}
std::vector<EnvVar> HorovodHierAllgather(const Knobs& k) {
  return {{"HOROVOD_HIERARCHICAL_ALLGATHER", k.hierarchical_allgather ? "1" : "0"}};
}
std::vector<EnvVar> DdpBucketCap(const Knobs& k) {
  return {{"AUTOTUNE_DDP_BUCKET_CAP_MB", Number(k.ddp_bucket_cap_mb)}};
}
std::vector<EnvVar> DdpFirstBucket(const Knobs& k) {
  return {{"AUTOTUNE_DDP_FIRST_BUCKET_MB", Number(k.ddp_first_bucket_mb)}};
}
std::vector<EnvVar> DdpBucketView(const Knobs& k) {
  return {{"AUTOTUNE_DDP_GRADIENT_AS_BUCKET_VIEW", k.ddp_gradient_as_bucket_view ? "1" : "0"}};
}
std::vector<EnvVar> NcclAlgo(const Knobs& k) {
  return {{"NCCL_ALGO", Spelled(NcclAlgoSpellings(), k.nccl_algo)}};
}
std::vector<EnvVar> NcclProto(const Knobs& k) {
  return {{"NCCL_PROTO", Spelled(NcclProtoSpellings(), k.nccl_proto)}};
}
std::vector<EnvVar> NcclChannels(const Knobs& k) {
  return {{"NCCL_MAX_NCHANNELS",
           k.nccl_max_nchannels > 0 ? std::to_string(k.nccl_max_nchannels) : ""}};
}
std::vector<EnvVar> MpiAllreduceAlgorithm(const Knobs& k) {
  const bool set = k.mpi_allreduce_algorithm > 0;
  return {{"OMPI_MCA_coll_tuned_use_dynamic_rules", set ? "1" : ""},
          {"OMPI_MCA_coll_tuned_allreduce_algorithm",
           set ? std::to_string(k.mpi_allreduce_algorithm) : ""}};
}
std::vector<EnvVar> MpiTcpEagerLimit(const Knobs& k) {
  return {{"OMPI_MCA_btl_tcp_eager_limit",
           k.mpi_tcp_eager_limit > 0 ? std::to_string(k.mpi_tcp_eager_limit) : ""}};
}

// The rows, in three groups: Horovod's knobs, DDP's, then the collective libraries' own. Field order is KnobSpec's (designated initializers); unset fields take its defaults.
std::vector<KnobSpec> HorovodKnobRows() {
  using enum KnobType;
  using enum KnobLifetime;
  return {
      {.name = "fusion_threshold_mb",
       .type = kReal,
       .field = &Knobs::fusion_threshold_mb,
       .unit = "MB",
       .min = 0,
       .max = 512,
       .flag = "--fusion-threshold-mb",
       .help = "Tensor fusion buffer size in MB (1 MB = 1048576 bytes); 0 = no fusion.",
       .yaml_section = "params",
       .yaml_key = "fusion_threshold_mb",
       .framework = KnobFrameworkScope::kHorovod,
       .library = KnobLibrary::kHorovod,
       .environment = HorovodThreshold,
       .environment_help = "bytes: 32 MB -> 33554432",
       .summary_label = "threshold",
       .summary_unit = "MB",
       .horovod_log_column = 5,
       .horovod_log_name = "tensor_fusion_threshold",
       .scale = KnobScale::kLog1p,
       .grid_values = {"0", "1", "4", "16", "32", "64", "128", "256"}},
      {.name = "cycle_time_ms",
       .type = kReal,
       .field = &Knobs::cycle_time_ms,
       .unit = "ms",
       .min = 0.1,
       .max = 100,
       .flag = "--cycle-time-ms",
       .help = "Background cycle period in ms.",
       .yaml_section = "params",
       .yaml_key = "cycle_time_ms",
       .framework = KnobFrameworkScope::kHorovod,
       .library = KnobLibrary::kHorovod,
       .environment = HorovodCycle,
       .environment_help = "ms",
       .summary_label = "cycle",
       .summary_unit = "ms",
       .horovod_log_column = 4,
       .horovod_log_name = "cycle_time_ms",
       .scale = KnobScale::kLog,
       .grid_values = {"0.5", "1", "2.5", "5", "10"}},
      {.name = "cache_capacity",
       .type = kInteger,
       .field = &Knobs::cache_capacity,
       .unit = "entries",
       .min = 0,
       .max = 4096,
       .flag = "--cache-capacity",
       .help = "Response cache capacity in entries; 0 = off.",
       .yaml_section = "params",
       .yaml_key = "cache_capacity",
       .framework = KnobFrameworkScope::kHorovod,
       .library = KnobLibrary::kHorovod,
       .environment = HorovodCache,
       .environment_help = "entries",
       .summary_label = "cache",
       .horovod_log_column = 3,
       .horovod_log_name = "cache_enabled",
       .horovod_log_as_enabled = true,
       .scale = KnobScale::kLog1p,
       .grid_values = {"0", "1024"}},
      {.name = "hierarchical_allreduce",
       .type = kBool,
       .field = &Knobs::hierarchical_allreduce,
       .flag = "--hierarchical-allreduce",
       .help = "Hierarchical allreduce (intra reduce-scatter, cross allreduce, intra allgather).",
       .yaml_section = "params",
       .yaml_key = "hierarchical_allreduce",
       .framework = KnobFrameworkScope::kHorovod,
       .library = KnobLibrary::kHorovod,
       .environment = HorovodHierAllreduce,
       .environment_help = "1/0",
       .summary_label = "hier_ar",
       .horovod_log_column = 0,
       .horovod_log_name = "hierarchical_allreduce",
       .grid_values = {"false", "true"},
       .needs_hierarchy = true},
      {.name = "hierarchical_allgather",
       .type = kBool,
       .field = &Knobs::hierarchical_allgather,
       .flag = "--hierarchical-allgather",
       .help = "Hierarchical allgather (intra gather, cross allgather, intra broadcast).",
       .yaml_section = "params",
       .yaml_key = "hierarchical_allgather",
       .framework = KnobFrameworkScope::kHorovod,
       .library = KnobLibrary::kHorovod,
       .environment = HorovodHierAllgather,
       .environment_help = "1/0",
       .summary_label = "hier_ag",
       .horovod_log_column = 1,
       .horovod_log_name = "hierarchical_allgather",
       .grid_values = {"false", "true"},
       .needs_hierarchy = true,
       .needs_allgather = true},
      // A training-script argument (hvd.DistributedOptimizer(num_groups=...)): per launch.
      {.name = "num_groups",
       .type = kInteger,
       .field = &Knobs::num_groups,
       .min = 0,
       .max = 64,
       .lifetime = kPerLaunch,
       .flag = "--num-groups",
       .help = "Fusion groups, set in the training script; 0 = greedy fusion of all ready "
               "tensors.",
       .yaml_section = "autotune_extra",
       .yaml_key = "num_groups",
       .framework = KnobFrameworkScope::kHorovod,
       .script_call = "hvd.DistributedOptimizer",
       .script_keyword = "num_groups",
       .summary_label = "groups",
       .scale = KnobScale::kLog1p,
       .searched = KnobSearched::kOnRequest},
  };
}

// DDP's constructor arguments. A real DDP job reads them once, when the model is wrapped
// (`apply` sets them at launch); autotune's executor can change them between samples of one
// run, so they are runtime knobs for record --autotune.
std::vector<KnobSpec> DdpKnobRows() {
  using enum KnobType;
  using enum KnobLifetime;
  return {
      {.name = "ddp_bucket_cap_mb",
       .type = kReal,
       .field = &Knobs::ddp_bucket_cap_mb,
       .unit = "MB",
       .min = 0.25,
       .max = 1024,
       .flag = "--ddp-bucket-cap-mb",
       .help = "DDP's bucket_cap_mb: gradients are allreduced in buckets of about this size "
               "(a parameter is never split).",
       .yaml_section = "ddp",
       .yaml_key = "bucket_cap_mb",
       .framework = KnobFrameworkScope::kDdp,
       .library = KnobLibrary::kTorch,
       .environment = DdpBucketCap,
       .environment_help = "MB, DDP's bucket_cap_mb",
       .script_keyword = "bucket_cap_mb",
       .hf_trainer_argument = "ddp_bucket_cap_mb",
       .summary_label = "bucket_cap",
       .summary_unit = "MB",
       .scale = KnobScale::kLog,
       .grid_values = {"1", "5", "10", "25", "50", "100"}},
      {.name = "ddp_first_bucket_mb",
       .type = kReal,
       .field = &Knobs::ddp_first_bucket_mb,
       .unit = "MB",
       .min = 0.25,
       .max = 64,
       .flag = "--ddp-first-bucket-mb",
       .help = "DDP's first bucket (the gradients ready first), MB "
               "(torch.distributed._DEFAULT_FIRST_BUCKET_BYTES).",
       .yaml_section = "ddp",
       .yaml_key = "first_bucket_mb",
       .framework = KnobFrameworkScope::kDdp,
       .library = KnobLibrary::kTorch,
       .environment = DdpFirstBucket,
       .environment_help = "MB",
       .summary_label = "first_bucket",
       .summary_unit = "MB",
       .scale = KnobScale::kLog},
      {.name = "ddp_gradient_as_bucket_view",
       .type = kBool,
       .field = &Knobs::ddp_gradient_as_bucket_view,
       .flag = "--ddp-gradient-as-bucket-view",
       .help = "DDP's gradient_as_bucket_view: gradients live in the buckets (no copy in or "
               "out).",
       .yaml_section = "ddp",
       .yaml_key = "gradient_as_bucket_view",
       .framework = KnobFrameworkScope::kDdp,
       .library = KnobLibrary::kTorch,
       .environment = DdpBucketView,
       .environment_help = "1/0",
       .script_keyword = "gradient_as_bucket_view",
       .summary_label = "bucket_view",
       .grid_values = {"false", "true"}},
  };
}

std::vector<KnobSpec> BackendKnobRows() {
  using enum KnobType;
  using enum KnobLifetime;
  return {
      {.name = "nccl_algo", .type = kChoice, .field = &Knobs::nccl_algo,
       .choices = {"", "ring", "tree", "collnet", "collnetdirect", "collnetchain", "nvls",
                   "nvlstree", "pat"},
       .unset_value = "", .lifetime = kPerLaunch, .scope = KnobBackendScope::kNccl,
       .flag = "--nccl-algo", .help = "NCCL_ALGO, NCCL's algorithm.",
       .flag_group = "Backend knobs",
       .yaml_section = "autotune_extra.nccl", .yaml_key = "algo",
       .library = KnobLibrary::kNccl, .environment = NcclAlgo,
       .environment_help = "NCCL's spelling: ring -> Ring, collnet -> CollNetDirect,CollNetChain",
       .summary_label = "nccl_algo", .search_choices = {"", "ring", "tree"}},
      {.name = "nccl_proto", .type = kChoice, .field = &Knobs::nccl_proto,
       .choices = {"", "simple", "ll", "ll128"},
       .unset_value = "", .lifetime = kPerLaunch, .scope = KnobBackendScope::kNccl,
       .flag = "--nccl-proto", .help = "NCCL_PROTO, NCCL's protocol.",
       .flag_group = "Backend knobs",
       .yaml_section = "autotune_extra.nccl", .yaml_key = "proto",
       .library = KnobLibrary::kNccl, .environment = NcclProto,
       .environment_help = "NCCL's spelling: ll128 -> LL128", .summary_label = "nccl_proto"},
      {.name = "nccl_max_nchannels", .type = kInteger, .field = &Knobs::nccl_max_nchannels,
       .unit = "channels", .min = 0, .max = 64,
       .unset_value = "0", .lifetime = kPerLaunch, .scope = KnobBackendScope::kNccl,
       .flag = "--nccl-max-nchannels", .help = "NCCL_MAX_NCHANNELS; 0 = NCCL's default.",
       .flag_group = "Backend knobs",
       .yaml_section = "autotune_extra.nccl", .yaml_key = "max_nchannels",
       .library = KnobLibrary::kNccl, .environment = NcclChannels,
       .environment_help = "channels", .summary_label = "nccl_max_nchannels",
       .scale = KnobScale::kLog1p},
      // At its default ("nccl") not written: a CPU job's file (Horovod on MPI, DDP on gloo)
      // would otherwise carry a GPU-only setting of autotune's own executor.
      {.name = "nccl_cross", .type = kChoice, .field = &Knobs::nccl_cross,
       .choices = {"nccl", "mpi"}, .unset_value = "nccl", .lifetime = kPerLaunch,
       .scope = KnobBackendScope::kNccl,
       .flag = "--nccl-cross",
       .help = "Hierarchical cross-node step on GPUs: nccl, or mpi with host staging.",
       .flag_group = "Backend knobs",
       .yaml_section = "autotune_extra.nccl", .yaml_key = "cross"},
      {.name = "mpi_allreduce_algorithm", .type = kInteger,
       .field = &Knobs::mpi_allreduce_algorithm, .min = 0, .max = 6,
       .unset_value = "0", .lifetime = kPerLaunch, .scope = KnobBackendScope::kMpi,
       .flag = "--mpi-allreduce-algorithm",
       .help = "Open MPI coll_tuned allreduce algorithm id 1-6; 0 = Open MPI decides.",
       .flag_group = "Backend knobs",
       .yaml_section = "autotune_extra.mpi", .yaml_key = "allreduce_algorithm",
       .library = KnobLibrary::kOpenMpi, .environment = MpiAllreduceAlgorithm,
       .environment_help = "with OMPI_MCA_coll_tuned_use_dynamic_rules=1",
       .summary_label = "mpi_ar_alg", .scale = KnobScale::kCategorical},
      // A message larger than this, header included, goes by rendezvous: a handshake before
      // the data, which stalls when ranks share cores (bench/executor, allreduce_spread). A
      // search sets it with small buffers (tuner::WithCompanionKnobs), never searches it.
      {.name = "mpi_tcp_eager_limit", .type = kInteger, .field = &Knobs::mpi_tcp_eager_limit,
       .unit = "bytes", .min = 0, .max = 16 << 20,
       .unset_value = "0", .lifetime = kPerLaunch, .scope = KnobBackendScope::kMpi,
       .flag = "--mpi-tcp-eager-limit",
       .help = "Open MPI's TCP BTL eager limit in bytes, header included (larger messages "
               "go by rendezvous); 0 = Open MPI's default (65536).",
       .flag_group = "Backend knobs",
       .yaml_section = "autotune_extra.mpi", .yaml_key = "tcp_eager_limit",
       .library = KnobLibrary::kOpenMpi, .environment = MpiTcpEagerLimit,
       .environment_help = "bytes: 128 KiB -> 131072",
       .summary_label = "mpi_eager", .summary_unit = "B", .set_with_others = true},
  };
}

std::vector<KnobSpec> MakeTable() {
  std::vector<KnobSpec> table = HorovodKnobRows();
  for (KnobSpec& row : DdpKnobRows()) table.push_back(std::move(row));
  for (KnobSpec& row : BackendKnobRows()) table.push_back(std::move(row));
  return table;
}

Status ParseNumber(const KnobSpec& spec, const std::string& text, double* out) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v)) {
    return Status::InvalidArgument("knob " + std::string(spec.name) + ": \"" + text +
                                   "\" is not a number");
  }
  *out = v;
  return Status::Ok();
}

Status ParseInteger(const KnobSpec& spec, const std::string& text, int* out) {
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || end != text.c_str() + text.size() || v < INT32_MIN || v > INT32_MAX) {
    return Status::InvalidArgument("knob " + std::string(spec.name) + ": \"" + text +
                                   "\" is not an integer");
  }
  *out = static_cast<int>(v);
  return Status::Ok();
}

Status ParseBool(const KnobSpec& spec, const std::string& text, bool* out) {
  if (ParseBoolText(text, out)) return Status::Ok();
  return Status::InvalidArgument("knob " + std::string(spec.name) + ": \"" + text +
                                 "\" is not a boolean");
}

std::string JoinChoices(const std::vector<std::string>& choices) {
  std::string out;
  for (const std::string& c : choices) {
    if (c.empty()) continue;
    out += (out.empty() ? "" : ", ") + c;
  }
  return out;
}

}  // namespace

std::span<const KnobSpec> KnobTable() {
  static const std::vector<KnobSpec> kTable = MakeTable();
  return kTable;
}

const KnobSpec* FindKnob(const std::string& name) {
  for (const KnobSpec& spec : KnobTable()) {
    if (name == spec.name) return &spec;
  }
  return nullptr;
}

bool KnobSearchedOnRequest(const KnobSpec& spec) {
  return spec.searched == KnobSearched::kOnRequest;
}

const KnobSpec& KnobOfField(KnobField field) {
  for (const KnobSpec& spec : KnobTable()) {
    if (spec.field == field) return spec;
  }
  std::abort();  // a Knobs field without a row: a defect of the table
}

bool KnobInFramework(const KnobSpec& spec, Framework framework) {
  switch (spec.framework) {
    case KnobFrameworkScope::kAll: return true;
    case KnobFrameworkScope::kHorovod: return framework == Framework::kHorovod;
    case KnobFrameworkScope::kDdp: return framework == Framework::kDdp;
  }
  return true;
}

Status SetKnobText(const KnobSpec& spec, const std::string& text, Knobs* knobs) {
  return std::visit(
      [&](auto member) -> Status {
        auto& value = knobs->*member;
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, double>) {
          return ParseNumber(spec, text, &value);
        } else if constexpr (std::is_same_v<T, int>) {
          return ParseInteger(spec, text, &value);
        } else if constexpr (std::is_same_v<T, bool>) {
          return ParseBool(spec, text, &value);
        } else {
          value = text;
          return Status::Ok();
        }
      },
      spec.field);
}

bool ParseBoolText(const std::string& text, bool* value) {
  static const std::array<const char*, 5> kTrue = {"1", "true", "True", "on", "yes"};
  static const std::array<const char*, 5> kFalse = {"0", "false", "False", "off", "no"};
  for (const bool spelled : {true, false}) {
    for (const char* spelling : spelled ? kTrue : kFalse) {
      if (text == spelling) {
        *value = spelled;
        return true;
      }
    }
  }
  return false;
}

double RoundToKnobPrecision(double value) {
  if (value == 0.0 || !std::isfinite(value)) return value;
  // Scaled to an integer of kSignificantDigits digits, rounded, and scaled back by an exact
  // power of ten, so the result is the double nearest the rounded decimal.
  const int exponent =
      kSignificantDigits - 1 - static_cast<int>(std::floor(std::log10(std::fabs(value))));
  if (exponent >= 0) {
    const double scale = std::pow(10.0, exponent);
    return std::round(value * scale) / scale;
  }
  const double scale = std::pow(10.0, -exponent);
  return std::round(value / scale) * scale;
}

void SetKnobNumber(const KnobSpec& spec, double value, Knobs* knobs) {
  std::visit(
      [&](auto member) {
        auto& field = knobs->*member;
        using T = std::decay_t<decltype(field)>;
        if constexpr (std::is_same_v<T, double>) {
          field = value;
        } else if constexpr (std::is_same_v<T, int>) {
          field = static_cast<int>(std::llround(value));
        } else if constexpr (std::is_same_v<T, bool>) {
          field = value != 0.0;
        } else {
          field = spec.choices.at(static_cast<size_t>(value));
        }
      },
      spec.field);
}

std::string KnobText(const KnobSpec& spec, const Knobs& knobs) {
  return std::visit(
      [&](auto member) -> std::string {
        const auto& value = knobs.*member;
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, double>) {
          return Number(value);
        } else if constexpr (std::is_same_v<T, int>) {
          return std::to_string(value);
        } else if constexpr (std::is_same_v<T, bool>) {
          return value ? "true" : "false";
        } else {
          return value;
        }
      },
      spec.field);
}

double KnobNumber(const KnobSpec& spec, const Knobs& knobs) {
  return std::visit(
      [&](auto member) -> double {
        const auto& value = knobs.*member;
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, std::string>) {
          auto it = std::find(spec.choices.begin(), spec.choices.end(), value);
          return static_cast<double>(it - spec.choices.begin());
        } else {
          return static_cast<double>(value);
        }
      },
      spec.field);
}

bool KnobIsUnset(const KnobSpec& spec, const Knobs& knobs) {
  return spec.unset_value != nullptr && KnobText(spec, knobs) == spec.unset_value;
}

Status ValidateKnob(const KnobSpec& spec, const Knobs& knobs) {
  const std::string text = KnobText(spec, knobs);
  bool ok = true;
  std::string range;
  if (spec.type == KnobType::kChoice) {
    ok = std::find(spec.choices.begin(), spec.choices.end(), text) != spec.choices.end();
    range = "{" + JoinChoices(spec.choices) + "}";
  } else if (spec.type != KnobType::kBool) {
    const double v = KnobNumber(spec, knobs);
    ok = v >= spec.min && v <= spec.max;
    range = "[" + Number(spec.min) + ", " + Number(spec.max) + "]";
    if (*spec.unit) range += std::string(" ") + spec.unit;
  }
  if (ok) return Status::Ok();
  // The value may come from a file (a multi-line YAML scalar): escaped, the line stays one.
  return Status::InvalidArgument("knob " + std::string(spec.name) + " = " +
                                 EscapeForTerminal(text) + " is out of range " + range);
}

std::string KnobLimitsText(const KnobSpec& spec) {
  std::string out;
  if (spec.type == KnobType::kChoice) {
    out = "One of " + JoinChoices(spec.choices) + ".";
  } else if (spec.type != KnobType::kBool) {
    out = "Range " + Number(spec.min) + "-" + Number(spec.max) + ".";
  }
  if (spec.lifetime == KnobLifetime::kPerLaunch) {
    out += std::string(out.empty() ? "" : " ") + "Per launch.";
  }
  return out;
}

std::string KnobDefaultText(const KnobSpec& spec) {
  const std::string default_text = KnobText(spec, Knobs{});
  if (spec.type == KnobType::kBool) return default_text == "true" ? "Default on" : "Default off";
  if (spec.unset_value != nullptr && default_text == spec.unset_value) {
    return "Default: the library's";
  }
  return "Default " + default_text;
}

std::vector<EnvVar> KnobEnvironment(const Knobs& knobs, KnobLibrary library) {
  std::vector<EnvVar> out;
  for (const KnobSpec& spec : KnobTable()) {
    if (spec.environment == nullptr) continue;
    if (library != KnobLibrary::kNone && spec.library != library) continue;
    for (EnvVar& var : spec.environment(knobs)) out.push_back(std::move(var));
  }
  return out;
}

std::vector<double> EncodeRuntimeKnobs(const Knobs& knobs) {
  std::vector<double> out;
  for (const KnobSpec& spec : KnobTable()) {
    if (spec.lifetime == KnobLifetime::kRuntime) out.push_back(KnobNumber(spec, knobs));
  }
  return out;
}

Knobs DecodeRuntimeKnobs(std::span<const double> values, const Knobs& base) {
  Knobs out = base;
  size_t i = 0;
  for (const KnobSpec& spec : KnobTable()) {
    if (spec.lifetime != KnobLifetime::kRuntime) continue;
    SetKnobNumber(spec, values[i++], &out);
  }
  return out;
}

bool SameExceptRuntimeKnobs(const Knobs& a, const Knobs& b) {
  return DecodeRuntimeKnobs(EncodeRuntimeKnobs(a), b) == a;
}

}  // namespace autotune
