// Knob flags shared by every subcommand that takes a knob setting (record, simulate,
// search): the same names, units and defaults everywhere.
#pragma once

#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "formats/config_file.h"
#include "traces/knobs.h"

namespace autotune::cli {

class KnobFlags {
 public:
  // Adds every knob's flag from the knob table (a boolean as --x and --no-x; help text with
  // its range and default) and, when with_config_file, --config-file.
  void Add(CLI::App* app, bool with_config_file = true);

  // Knobs = defaults, overridden by --config-file, overridden by flags given. Validates.
  // constants (optional) receives the names of the knobs set by the file or a flag.
  Status Resolve(Knobs* knobs, std::set<std::string>* constants = nullptr,
                 ConfigFile* config = nullptr) const;

  const std::string& config_file() const { return config_file_; }

 private:
  Knobs values_;
  std::string config_file_;
  std::vector<std::pair<std::string, CLI::Option*>> options_;  // knob name -> its flag
};

}  // namespace autotune::cli
