// ParseGlooCalibration: the helper's JSON line as world allreduce points, every way it can be
// wrong refused in one line.
#include "formats/gloo_calibration.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace autotune {
namespace {

const std::vector<int64_t> kSizes = {1024, 2048};

Status Parse(const std::string& text, std::vector<CalibrationPoint>* points,
             std::string* torch) {
  return ParseGlooCalibration(text, 4, kSizes, points, torch);
}

TEST(GlooCalibrationTest, ThePointsAreTheWorldAllreducesOfTheJob) {
  std::vector<CalibrationPoint> points;
  std::string torch;
  const Status s = Parse(R"({"torch": "1.13.1", "world_size": 4, "points": )"
                         R"([[1024, 5100.5, 4900, 6000.25, 5], [2048, 5300, 5200, 5400, 5]]})",
                         &points, &torch);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(torch, "1.13.1");
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0].op, Op::kAllreduce);
  EXPECT_EQ(points[0].scope, Scope::kWorld);
  EXPECT_EQ(points[0].ranks, 4);
  EXPECT_EQ(points[0].bytes, 1024);
  EXPECT_DOUBLE_EQ(points[0].median_us, 5100.5);
  EXPECT_DOUBLE_EQ(points[0].min_us, 4900);
  EXPECT_DOUBLE_EQ(points[0].max_us, 6000.25);
  EXPECT_EQ(points[0].repetitions, 5);
  EXPECT_EQ(points[1].bytes, 2048);
  EXPECT_DOUBLE_EQ(points[1].median_us, 5300);
}

TEST(GlooCalibrationTest, WhatIsNotTheHelpersLineIsRefused) {
  const std::string head = R"({"torch": "1.13.1", "world_size": 4, "points": )";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"not json", "not one JSON object"},
      {R"({"world_size": 4, "points": []})", "no \"torch\" version"},
      {R"({"torch": "1", "world_size": 2, "points": []})", "is not the job's 4 ranks"},
      {head + "[[1024, 1, 1, 1, 5]]}", "is not a list of 2 sizes"},
      {head + R"([[1024, 1, 1, 1, 5], [2048, 1, 1, 1]]})", "point 2 is not [bytes, median_us"},
      {head + "[[1024, 1, 1, 1, 5], [4096, 1, 1, 1, 5]]}", "point 2 measured 4096 bytes, not "
                                                          "the 2048 asked for"},
      {head + "[[1024, 1, 2, 3, 5], [2048, 1, 1, 1, 5]]}", "point 1 (1024 bytes) has times"},
      {head + "[[1024, 0, 0, 0, 5], [2048, 1, 1, 1, 5]]}", "point 1 (1024 bytes) has times"},
      {head + "[[1024, 1, 1, 1, 0], [2048, 1, 1, 1, 5]]}", "point 1 (1024 bytes) has times"},
  };
  for (const auto& [text, message] : cases) {
    std::vector<CalibrationPoint> points = {CalibrationPoint{}};
    std::string torch = "kept";
    const Status s = Parse(text, &points, &torch);
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << text;
    EXPECT_EQ(s.message().rfind("gloo calibration helper's output: ", 0), 0u) << s.message();
    EXPECT_NE(s.message().find(message), std::string::npos) << text << ": " << s.message();
    EXPECT_EQ(points.size(), 1u) << "untouched on error";
    EXPECT_EQ(torch, "kept");
  }
}

}  // namespace
}  // namespace autotune
