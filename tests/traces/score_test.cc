#include "traces/score.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace autotune {
namespace {

TEST(ScoreTest, BytesOverSeconds) {
  EXPECT_DOUBLE_EQ(ScoreBytesPerSecond(3e6, 0.5), 6e6);
  EXPECT_EQ(ScoreBytesPerSecond(3e6, 0.0), 0.0);
  EXPECT_EQ(ScoreBytesPerSecond(3e6, -1.0), 0.0);
}

TEST(ScoreTest, SeriesIsTotalBytesOverTotalTimeNotAMedianOfRatios) {
  const std::vector<int64_t> bytes = {1000, 1000, 4000};
  const std::vector<double> step_ms = {10.0, 10.0, 40.0};
  // 6000 bytes in 60 ms; the per-step ratios are 100000, 100000 and 100000 B/s here...
  EXPECT_DOUBLE_EQ(ScoreBytesPerSecond(bytes, step_ms), 6000 / 0.060);
  // ... and differ when the long step moves few bytes: 3000 bytes in 60 ms, not the median
  // ratio of 100000 B/s.
  const std::vector<int64_t> few = {1000, 1000, 1000};
  EXPECT_DOUBLE_EQ(ScoreBytesPerSecond(few, step_ms), 3000 / 0.060);
}

TEST(ScoreTest, EmptySeriesScoresZero) {
  EXPECT_EQ(ScoreBytesPerSecond(std::vector<int64_t>{}, std::vector<double>{}), 0.0);
  EXPECT_EQ(ScoreBytesPerSecond(std::vector<int64_t>{100}, std::vector<double>{0.0}), 0.0);
}

}  // namespace
}  // namespace autotune
