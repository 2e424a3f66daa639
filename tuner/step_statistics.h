// Statistics of measured step times: how noisy a setting's measurements are, and a bootstrap
// confidence interval of the speedup of one setting over another. Plain functions of vectors
// of step times (milliseconds); the caller fetches them (tools/ from the store).
#pragma once

#include <cstdint>
#include <vector>

namespace autotune::tuner {

// The measured step times of one setting: one vector per measured sample (a repeat: one run
// of the setting), in step order, milliseconds.
using StepSamples = std::vector<std::vector<double>>;

// The spread of measured step times, as coefficients of variation (stddev / mean).
struct StepNoise {
  int samples = 0;         // measured samples with at least one step
  int steps = 0;           // their steps
  double within_cv = 0.0;  // step to step inside a sample, pooled over samples; 0: unknown
  double across_cv = 0.0;  // between the mean step times of repeats of one setting, pooled
                           // over settings with at least 2 repeats; 0: unknown (no repeats)
  // The larger of the two, the noise a verdict is stated against.
  double cv() const { return within_cv > across_cv ? within_cv : across_cv; }
};

// The noise of `settings` (each one setting's samples). within_cv pools every sample of >= 2
// steps (variances weighted by steps - 1, divided by the squared sample mean); across_cv
// pools every setting of >= 2 samples the same way over their samples' mean step times.
StepNoise MeasureNoise(const std::vector<StepSamples>& settings);

// A speedup and its confidence interval: > 1 means the candidate's steps are shorter.
struct SpeedupInterval {
  double speedup = 0.0;  // mean step time of the reference / mean step time of the candidate
  double low = 0.0;      // percentile bounds of the bootstrap distribution
  double high = 0.0;
  double confidence = 0.0;  // e.g. 0.95
  // True when the interval excludes 1 from below: the candidate is faster beyond noise.
  bool Faster() const { return low > 1.0; }
  // True when the interval contains 1: the data cannot tell the two apart.
  bool ContainsOne() const { return low <= 1.0 && high >= 1.0; }
};

struct BootstrapOptions {
  double confidence = 0.95;  // two-sided
  int resamples = 2000;
  uint64_t seed = 1;  // fixed, so a verdict is reproducible
  // Run-to-run spread to apply to a side with a single sample (which cannot show its own):
  // its resampled mean is scaled by exp(across_cv * z), z standard normal. 0: none.
  double across_cv = 0.0;
};

// Percentile bootstrap of mean(reference steps) / mean(candidate steps), each side resampled
// on its own, in two levels: its samples with replacement (when it has two or more), then
// each drawn sample's steps with replacement; the drawn steps pool into one mean. The ratio
// of MEANS, because training time is the sum of step times. Deterministic for a given seed.
// REQUIRES: each side has a sample with a step; step times positive.
SpeedupInterval BootstrapSpeedup(const StepSamples& reference, const StepSamples& candidate,
                                 const BootstrapOptions& options = {});

}  // namespace autotune::tuner
