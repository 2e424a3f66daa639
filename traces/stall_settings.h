// Stall check settings: Horovod's HOROVOD_STALL_CHECK_* semantics and names, shared by the
// flags (--stall-check-s, --stall-shutdown-s), horovodrun's config-file section
// (stall_check: enabled, warning_time_seconds, shutdown_time_seconds) and the environment.
// Precedence, lowest first: defaults, environment, config file, flags.
#pragma once

#include <optional>
#include <string>

#include "traces/status.h"

namespace autotune {

struct StallSettings {
  double check_s = 60.0;    // warn after this long without progress; 0 = no stall check
  double shutdown_s = 0.0;  // then end the job after this long without progress; 0 = never
};

// horovodrun's `stall_check:` section as given (every key optional).
struct StallCheckSection {
  std::optional<bool> enabled;               // false: check off
  std::optional<double> warning_time_s;      // warning_time_seconds
  std::optional<double> shutdown_time_s;     // shutdown_time_seconds
};

// Overrides *settings with HOROVOD_STALL_CHECK_DISABLE (1: off),
// HOROVOD_STALL_CHECK_TIME_SECONDS and HOROVOD_STALL_SHUTDOWN_TIME_SECONDS where set; a value
// that is not a number >= 0 is an error naming the variable.
Status ApplyStallEnvironment(StallSettings* settings);

// Overrides *settings with the keys the section sets.
void ApplyStallSection(const StallCheckSection& section, StallSettings* settings);

// Both values finite and >= 0, and a shutdown (when on) not earlier than the warning:
// Horovod silently never shuts down then; here it is an error naming both values.
Status ValidateStallSettings(const StallSettings& settings);

}  // namespace autotune
