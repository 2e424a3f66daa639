// --stall-check-s and --stall-shutdown-s, shared by the commands that run an MPI job
// (record, calibrate), with Horovod's environment variables and horovodrun's config-file
// section under them (traces/stall_settings.h).
#pragma once

#include <CLI/CLI.hpp>

#include "formats/config_file.h"
#include "traces/stall_settings.h"

namespace autotune::cli {

class StallFlags {
 public:
  // Adds both flags to app, their defaults (StallSettings' initializers) captured for the help
  // (tools/help_defaults.h).
  void Add(CLI::App* app);
  // Defaults, then HOROVOD_STALL_* from the environment, then config's stall_check section
  // (null: none), then the flags given. Validated.
  Status Resolve(const ConfigFile* config, StallSettings* out) const;

 private:
  StallSettings values_;
  CLI::Option* check_ = nullptr;
  CLI::Option* shutdown_ = nullptr;
};

}  // namespace autotune::cli
