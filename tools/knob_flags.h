// Knob flags shared by every subcommand that takes a knob setting (record, simulate,
// search): the same names, units and defaults everywhere.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "formats/config_file.h"
#include "traces/knob_table.h"
#include "traces/knobs.h"

namespace autotune::cli {

// What a knob flag's help says about the default of the knob: the text after its range.
using KnobDefaultHelp = std::function<std::string(const KnobSpec& spec)>;

class KnobFlags {
 public:
  // Adds every knob's flag from the knob table (a boolean as --x and --no-x; help text with
  // its range and default) and, when with_config_file, --config-file. default_help (null: the
  // table's KnobDefaultText) says what a knob not given is.
  void Add(CLI::App* app, bool with_config_file = true, const KnobDefaultHelp& default_help = {});

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
