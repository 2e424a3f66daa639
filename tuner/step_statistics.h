// Statistics of measured step times: how noisy a setting's measurements are, and the speedup
// interval type (tuner/run_comparison.h computes it from real runs). Plain functions of vectors
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
  double across_degrees = 0.0;  // the degrees of freedom behind across_cv
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
  double low = 0.0;      // the interval's bounds
  double high = 0.0;
  double confidence = 0.0;  // e.g. 0.95
  // True when the interval excludes 1 from below: the candidate is faster beyond noise.
  bool Faster() const { return low > 1.0; }
  // True when the interval contains 1: the data cannot tell the two apart.
  bool ContainsOne() const { return low <= 1.0 && high >= 1.0; }
};

}  // namespace autotune::tuner
