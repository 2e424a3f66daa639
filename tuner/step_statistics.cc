#include "tuner/step_statistics.h"

#include <cmath>

#include "traces/trace.h"

namespace autotune::tuner {
namespace {

// Sum of squared deviations from the mean.
double SumSquares(const std::vector<double>& v, double mean) {
  double sum = 0.0;
  for (double x : v) sum += (x - mean) * (x - mean);
  return sum;
}

// Pools the relative variances of groups: sum of (squared deviations / mean^2) over sum of
// (size - 1), over the groups of two or more values; the square root of that.
class PooledCv {
 public:
  void Add(const std::vector<double>& values) {
    if (values.size() < 2) return;
    const double mean = Mean(values);
    if (!(mean > 0.0)) return;
    relative_squares_ += SumSquares(values, mean) / (mean * mean);
    degrees_ += static_cast<double>(values.size() - 1);
  }
  double cv() const { return degrees_ > 0 ? std::sqrt(relative_squares_ / degrees_) : 0.0; }
  double degrees() const { return degrees_; }

 private:
  double relative_squares_ = 0.0;
  double degrees_ = 0.0;
};

}  // namespace

StepNoise MeasureNoise(const std::vector<StepSamples>& settings) {
  StepNoise noise;
  PooledCv within;
  PooledCv across;
  for (const StepSamples& setting : settings) {
    std::vector<double> sample_means;
    for (const std::vector<double>& sample : setting) {
      if (sample.empty()) continue;
      ++noise.samples;
      noise.steps += static_cast<int>(sample.size());
      within.Add(sample);
      sample_means.push_back(Mean(sample));
    }
    across.Add(sample_means);
  }
  noise.within_cv = within.cv();
  noise.across_cv = across.cv();
  noise.across_degrees = across.degrees();
  return noise;
}

}  // namespace autotune::tuner
