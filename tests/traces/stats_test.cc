#include "traces/stats.h"

#include <gtest/gtest.h>

#include "traces/trace.h"

namespace autotune {
namespace {

TEST(Stats, MedianAndNearestRankPercentile) {
  EXPECT_DOUBLE_EQ(Median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(Median({4, 1, 2, 3}), 2.5);
  EXPECT_DOUBLE_EQ(Percentile({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 95), 10);
  EXPECT_DOUBLE_EQ(Percentile({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 50), 5);
  EXPECT_DOUBLE_EQ(Median({}), 0);
}

TEST(Stats, BootstrapSeparatesClearlyDifferentRuns) {
  std::vector<double> slow, fast;
  for (int i = 0; i < 30; ++i) {
    slow.push_back(20 + (i % 5) * 0.1);
    fast.push_back(10 + (i % 5) * 0.1);
  }
  RatioInterval r = BootstrapMedianRatio(slow, fast);
  EXPECT_NEAR(r.ratio, 20.2 / 10.2, 1e-9);
  EXPECT_GT(r.low, 1.5);
  EXPECT_LE(r.low, r.ratio);
  EXPECT_GE(r.high, r.ratio);
}

TEST(Stats, BootstrapIntervalCoversOneForSameDistribution) {
  std::vector<double> a, b;
  for (int i = 0; i < 40; ++i) {
    a.push_back(10 + (i * 7 % 11));
    b.push_back(10 + (i * 5 % 11));
  }
  RatioInterval r = BootstrapMedianRatio(a, b);
  EXPECT_LE(r.low, 1.0);
  EXPECT_GE(r.high, 1.0);
  // Deterministic for a seed.
  RatioInterval again = BootstrapMedianRatio(a, b);
  EXPECT_EQ(r.low, again.low);
  EXPECT_EQ(r.high, again.high);
}

}  // namespace
}  // namespace autotune
