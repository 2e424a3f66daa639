// Config file: the YAML of DESIGN.md, a superset of horovodrun's --config-file.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "traces/framework.h"
#include "traces/knobs.h"
#include "traces/stall_settings.h"
#include "traces/status.h"

namespace autotune {

struct TunerSettings {  // horovodrun's `autotune:` section, same keys
  bool enabled = false;
  std::string log_file;                 // log_file
  int warmup_samples = 3;               // warmup_samples
  int steps_per_sample = 10;            // steps_per_sample
  int bayes_opt_max_samples = 20;       // bayes_opt_max_samples
  double gaussian_process_noise = 0.8;  // gaussian_process_noise
};

struct ConfigFile {
  // The framework the file is for: kDdp when it has a `ddp:` section (then no `params:`).
  Framework framework = Framework::kHorovod;
  Knobs knobs;                      // defaults for knobs the file does not set
  std::set<std::string> set_knobs;  // names of the knobs the file sets (constants)
  TunerSettings autotune;
  StallCheckSection stall_check;  // horovodrun's stall_check section, as given
  // autotune_extra.provenance, kept as given (JSON).
  std::string provenance_json = "{}";
};

// Parses YAML text. Accepts horovodrun's own keys (params.fusion_threshold_mb,
// cycle_time_ms, cache_capacity, hierarchical_allreduce, hierarchical_allgather, autotune.*,
// stall_check.*, and the other horovodrun sections, which are ignored) and ours
// (autotune_extra, and ddp: PyTorch DDP's knobs, which makes the file a DDP file).
// An unknown key in params/autotune_extra, a wrong type or an out-of-range value is an
// error naming `source`, the key and the value.
Status ParseConfigYaml(const std::string& text, const std::string& source, ConfigFile* out);
// The largest config file read (a folder, a device or a larger file is refused, one line).
inline constexpr int64_t kMaxConfigFileBytes = int64_t{1} << 20;
Status LoadConfigFile(const std::string& path, ConfigFile* out);
// Writes the YAML form: params, autotune, autotune_extra for Horovod; ddp, autotune_extra
// for DDP.
std::string ConfigToYaml(const ConfigFile& config);
Status SaveConfigFile(const std::string& path, const ConfigFile& config);

}  // namespace autotune
