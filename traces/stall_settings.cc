#include "traces/stall_settings.h"

#include <cmath>
#include <cstdlib>
#include <string>

namespace autotune {
namespace {

// The variable's value as seconds >= 0; unset or empty leaves *out alone.
Status ReadSeconds(const char* name, double* out) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return Status::Ok();
  char* end = nullptr;
  const double value = std::strtod(text, &end);
  if (end == text || *end != '\0' || !std::isfinite(value) || value < 0) {
    return Status::InvalidArgument(std::string(name) + "=" + text +
                                   ": must be a number of seconds >= 0");
  }
  *out = value;
  return Status::Ok();
}

std::string Seconds(double s) {
  std::string text = std::to_string(s);
  text.erase(text.find_last_not_of('0') + 1);
  if (!text.empty() && text.back() == '.') text.pop_back();
  return text;
}

}  // namespace

Status ApplyStallEnvironment(StallSettings* settings) {
  AUTOTUNE_RETURN_IF_ERROR(ReadSeconds("HOROVOD_STALL_CHECK_TIME_SECONDS", &settings->check_s));
  AUTOTUNE_RETURN_IF_ERROR(
      ReadSeconds("HOROVOD_STALL_SHUTDOWN_TIME_SECONDS", &settings->shutdown_s));
  const char* disable = std::getenv("HOROVOD_STALL_CHECK_DISABLE");
  if (disable != nullptr && *disable != '\0') {
    const std::string value = disable;
    if (value != "0" && value != "1") {
      return Status::InvalidArgument("HOROVOD_STALL_CHECK_DISABLE=" + value + ": must be 0 or 1");
    }
    if (value == "1") settings->check_s = 0.0;
  }
  return Status::Ok();
}

void ApplyStallSection(const StallCheckSection& section, StallSettings* settings) {
  if (section.warning_time_s) settings->check_s = *section.warning_time_s;
  if (section.shutdown_time_s) settings->shutdown_s = *section.shutdown_time_s;
  if (section.enabled && !*section.enabled) settings->check_s = 0.0;
}

Status ValidateStallSettings(const StallSettings& settings) {
  if (!std::isfinite(settings.check_s) || settings.check_s < 0) {
    return Status::InvalidArgument("--stall-check-s " + std::to_string(settings.check_s) +
                                   ": must be >= 0 (0 = off)");
  }
  if (!std::isfinite(settings.shutdown_s) || settings.shutdown_s < 0) {
    return Status::InvalidArgument("--stall-shutdown-s " + std::to_string(settings.shutdown_s) +
                                   ": must be >= 0 (0 = never)");
  }
  if (settings.shutdown_s > 0 && settings.check_s == 0) {
    return Status::InvalidArgument("--stall-shutdown-s " + Seconds(settings.shutdown_s) +
                                   " needs the stall check on (--stall-check-s > 0)");
  }
  if (settings.shutdown_s > 0 && settings.shutdown_s < settings.check_s) {
    return Status::InvalidArgument(
        "--stall-shutdown-s " + Seconds(settings.shutdown_s) + " is less than --stall-check-s " +
        Seconds(settings.check_s) + " (Horovod would never shut down): give 0 or at least " +
        Seconds(settings.check_s));
  }
  return Status::Ok();
}

}  // namespace autotune
