#include "traces/score.h"

#include <cassert>

namespace autotune {

double ScoreBytesPerSecond(double total_bytes, double total_seconds) {
  return total_seconds > 0.0 ? total_bytes / total_seconds : 0.0;
}

double ScoreBytesPerSecond(std::span<const int64_t> step_bytes, std::span<const double> step_ms) {
  assert(step_bytes.size() == step_ms.size());
  int64_t total_bytes = 0;
  double total_ms = 0.0;
  for (size_t i = 0; i < step_bytes.size(); ++i) {
    total_bytes += step_bytes[i];
    total_ms += step_ms[i];
  }
  return ScoreBytesPerSecond(static_cast<double>(total_bytes), total_ms / 1000.0);
}

}  // namespace autotune
