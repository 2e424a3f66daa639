#include "tools/stall_flags.h"

namespace autotune::cli {

void StallFlags::Add(CLI::App* app) {
  check_ =
      app->add_option("--stall-check-s", values_.check_s,
                      "Warn (one line on stderr, naming the ranks holding the job up and the first "
                      "tensors they hold) when no rank has progressed for this many seconds; 0 = "
                      "off. Without the flag: HOROVOD_STALL_CHECK_TIME_SECONDS / "
                      "HOROVOD_STALL_CHECK_DISABLE=1, or the config file's stall_check section, "
                      "else the default.")
          ->capture_default_str();
  shutdown_ =
      app->add_option("--stall-shutdown-s", values_.shutdown_s,
                      "End the whole job when a stall lasts this many seconds (>= "
                      "--stall-check-s): the completed steps are kept, the run marked incomplete "
                      "with the reason, exit status 3; 0 = never. Without the flag: "
                      "HOROVOD_STALL_SHUTDOWN_TIME_SECONDS, or the config file, else the default.")
          ->capture_default_str();
}

Status StallFlags::Resolve(const ConfigFile* config, StallSettings* out) const {
  StallSettings s;
  AUTOTUNE_RETURN_IF_ERROR(ApplyStallEnvironment(&s));
  if (config != nullptr) ApplyStallSection(config->stall_check, &s);
  if (check_ != nullptr && check_->count() > 0) s.check_s = values_.check_s;
  if (shutdown_ != nullptr && shutdown_->count() > 0) s.shutdown_s = values_.shutdown_s;
  AUTOTUNE_RETURN_IF_ERROR(ValidateStallSettings(s));
  *out = s;
  return Status::Ok();
}

}  // namespace autotune::cli
