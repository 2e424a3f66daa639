#include "tuner/step_statistics.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace autotune::tuner {
namespace {

double Mean(const std::vector<double>& v) {
  double sum = 0.0;
  for (double x : v) sum += x;
  return v.empty() ? 0.0 : sum / static_cast<double>(v.size());
}

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

 private:
  double relative_squares_ = 0.0;
  double degrees_ = 0.0;
};

StepSamples NonEmpty(const StepSamples& samples) {
  StepSamples out;
  for (const std::vector<double>& s : samples) {
    if (!s.empty()) out.push_back(s);
  }
  return out;
}

double PooledMean(const StepSamples& samples) {
  double sum = 0.0;
  double count = 0.0;
  for (const std::vector<double>& s : samples) {
    for (double x : s) sum += x;
    count += static_cast<double>(s.size());
  }
  return count > 0 ? sum / count : 0.0;
}

// One bootstrap draw of a side's pooled mean step time (two levels: samples, then steps).
double ResampledMean(const StepSamples& samples, double across_cv, std::mt19937_64& rng) {
  std::uniform_int_distribution<size_t> pick_sample(0, samples.size() - 1);
  double sum = 0.0;
  double count = 0.0;
  for (size_t draw = 0; draw < samples.size(); ++draw) {
    const std::vector<double>& s = samples.size() > 1 ? samples[pick_sample(rng)] : samples[0];
    std::uniform_int_distribution<size_t> pick_step(0, s.size() - 1);
    for (size_t i = 0; i < s.size(); ++i) sum += s[pick_step(rng)];
    count += static_cast<double>(s.size());
  }
  double mean = sum / count;
  if (samples.size() == 1 && across_cv > 0.0) {
    std::normal_distribution<double> z(0.0, 1.0);
    mean *= std::exp(across_cv * z(rng));
  }
  return mean;
}

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
  return noise;
}

SpeedupInterval BootstrapSpeedup(const StepSamples& reference, const StepSamples& candidate,
                                 const BootstrapOptions& options) {
  const StepSamples ref = NonEmpty(reference);
  const StepSamples cand = NonEmpty(candidate);
  SpeedupInterval out;
  out.confidence = options.confidence;
  if (ref.empty() || cand.empty()) return out;
  out.speedup = PooledMean(ref) / PooledMean(cand);
  std::mt19937_64 rng(options.seed);
  std::vector<double> ratios;
  ratios.reserve(static_cast<size_t>(std::max(1, options.resamples)));
  for (int i = 0; i < std::max(1, options.resamples); ++i) {
    const double r = ResampledMean(ref, options.across_cv, rng);
    const double c = ResampledMean(cand, options.across_cv, rng);
    ratios.push_back(r / c);
  }
  std::sort(ratios.begin(), ratios.end());
  const double tail = (1.0 - options.confidence) / 2.0;
  auto at = [&ratios](double q) {
    const size_t i = static_cast<size_t>(q * static_cast<double>(ratios.size() - 1) + 0.5);
    return ratios[std::min(i, ratios.size() - 1)];
  };
  out.low = at(tail);
  out.high = at(1.0 - tail);
  return out;
}

}  // namespace autotune::tuner
