#include "tuner/step_statistics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace autotune::tuner {
namespace {

// `n` step times around `mean_ms` with normal noise of coefficient of variation `cv`.
std::vector<double> NoisySteps(double mean_ms, double cv, int n, std::mt19937_64& rng) {
  std::normal_distribution<double> noise(0.0, cv * mean_ms);
  std::vector<double> steps;
  for (int i = 0; i < n; ++i) steps.push_back(mean_ms + noise(rng));
  return steps;
}

TEST(StepStatisticsTest, NoiseWithinSamplesAndAcrossRepeats) {
  // {1, 2, 3}: squared deviations 2, mean 2 -> relative 2 / 4 over 2 degrees: cv 0.5.
  StepNoise noise = MeasureNoise({{{1, 2, 3}}});
  EXPECT_EQ(noise.samples, 1);
  EXPECT_EQ(noise.steps, 3);
  EXPECT_DOUBLE_EQ(noise.within_cv, 0.5);
  EXPECT_DOUBLE_EQ(noise.across_cv, 0.0);  // one repeat: unknown
  // Repeats with means 2 and 4: squared deviations 2 around 3 -> sqrt(2 / 9 / 1).
  noise = MeasureNoise({{{2, 2}, {4, 4}}});
  EXPECT_DOUBLE_EQ(noise.within_cv, 0.0);
  EXPECT_DOUBLE_EQ(noise.across_cv, std::sqrt(2.0 / 9.0));
  EXPECT_DOUBLE_EQ(noise.cv(), std::sqrt(2.0 / 9.0));
  // Pooled over settings: {1,3} (relative 2/4, 1 degree) and {10, 20, 30} (200/400, 2).
  noise = MeasureNoise({{{1, 3}}, {{10, 20, 30}}, {{}}});
  EXPECT_EQ(noise.samples, 2);
  EXPECT_DOUBLE_EQ(noise.within_cv, std::sqrt((0.5 + 0.5) / 3.0));
}

// Ten steps a sample (autotune's default), 5% step-to-step noise: the 95% interval's half
// width is about 1.96 * sqrt(2) * 5% / sqrt(10) = 4.4%, so a true 10% gain is found and a
// true 2% gain is not claimed.
TEST(StepStatisticsTest, TenPercentFoundTwoPercentNotClaimedUnderFivePercentNoise) {
  std::mt19937_64 rng(7);
  const StepSamples reference = {NoisySteps(100.0, 0.05, 10, rng)};
  const StepSamples ten = {NoisySteps(100.0 / 1.10, 0.05, 10, rng)};
  const StepSamples two = {NoisySteps(100.0 / 1.02, 0.05, 10, rng)};
  const SpeedupInterval found = BootstrapSpeedup(reference, ten);
  EXPECT_TRUE(found.Faster()) << found.low << " " << found.high;
  EXPECT_GT(found.speedup, 1.05);
  EXPECT_LT(found.speedup, 1.15);
  const SpeedupInterval unclaimed = BootstrapSpeedup(reference, two);
  EXPECT_FALSE(unclaimed.Faster()) << unclaimed.low << " " << unclaimed.high;
  EXPECT_TRUE(unclaimed.ContainsOne());
  EXPECT_DOUBLE_EQ(unclaimed.confidence, 0.95);
  const double half_width = (unclaimed.high - unclaimed.low) / 2.0 / unclaimed.speedup;
  EXPECT_GT(half_width, 0.03);
  EXPECT_LT(half_width, 0.06);
  // The same inputs and seed give the same interval.
  const SpeedupInterval again = BootstrapSpeedup(reference, two);
  EXPECT_EQ(again.low, unclaimed.low);
  EXPECT_EQ(again.high, unclaimed.high);
}

// Repeats pool their steps; the run-to-run spread (5% between repeats, 1% inside each) widens
// the interval through the resampled repeats, so a 2% gain with three repeats a side is not
// claimed although every sample alone is quiet.
TEST(StepStatisticsTest, RepeatsCarryTheRunToRunSpread) {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> run_offset(0.0, 0.05);
  auto repeats = [&](double mean_ms) {
    StepSamples samples;
    for (int r = 0; r < 3; ++r) {
      samples.push_back(NoisySteps(mean_ms * (1.0 + run_offset(rng)), 0.01, 10, rng));
    }
    return samples;
  };
  const StepSamples reference = repeats(100.0);
  const StepSamples two = repeats(100.0 / 1.02);
  const SpeedupInterval interval = BootstrapSpeedup(reference, two);
  EXPECT_FALSE(interval.Faster()) << interval.low << " " << interval.high;
  const StepNoise noise = MeasureNoise({reference, two});
  EXPECT_EQ(noise.samples, 6);
  EXPECT_EQ(noise.steps, 60);
  EXPECT_NEAR(noise.within_cv, 0.01, 0.004);
  EXPECT_GT(noise.across_cv, noise.within_cv);
  // The pooled mean is the mean of every step.
  auto sum = [](const StepSamples& samples) {
    double total = 0.0;
    for (const std::vector<double>& s : samples) {
      for (double x : s) total += x;
    }
    return total;
  };
  EXPECT_NEAR(interval.speedup, sum(reference) / sum(two), 1e-12);  // 30 steps a side
}

// A side of one sample cannot show its run-to-run spread: given one, it widens the interval.
TEST(StepStatisticsTest, AGivenRunToRunSpreadWidensSingleSamples) {
  std::mt19937_64 rng(3);
  const StepSamples reference = {NoisySteps(100.0, 0.01, 10, rng)};
  const StepSamples candidate = {NoisySteps(97.0, 0.01, 10, rng)};
  const SpeedupInterval quiet = BootstrapSpeedup(reference, candidate);
  EXPECT_TRUE(quiet.Faster()) << quiet.low;
  BootstrapOptions options;
  options.across_cv = 0.05;
  const SpeedupInterval spread = BootstrapSpeedup(reference, candidate, options);
  EXPECT_FALSE(spread.Faster()) << spread.low;
  EXPECT_GT(spread.high - spread.low, 3 * (quiet.high - quiet.low));
}

}  // namespace
}  // namespace autotune::tuner
