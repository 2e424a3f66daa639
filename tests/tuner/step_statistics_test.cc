#include "tuner/step_statistics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace autotune::tuner {
namespace {

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
  EXPECT_DOUBLE_EQ(noise.across_degrees, 1.0);
  EXPECT_DOUBLE_EQ(noise.cv(), std::sqrt(2.0 / 9.0));
  // Pooled over settings: {1,3} (relative 2/4, 1 degree) and {10, 20, 30} (200/400, 2).
  noise = MeasureNoise({{{1, 3}}, {{10, 20, 30}}, {{}}});
  EXPECT_EQ(noise.samples, 2);
  EXPECT_DOUBLE_EQ(noise.within_cv, std::sqrt((0.5 + 0.5) / 3.0));
}

}  // namespace
}  // namespace autotune::tuner
