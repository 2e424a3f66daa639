// The benchmarks' result line: exact text for met, missed, informational and failed
// figures, the ratio and verdict at the bound, one token per field, target round trips,
// size labels, and bench_figure printing the same line as the library.
#include "bench/common/result.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace autotune::bench {
namespace {

Figure Fused(double value, double anchor_value, Target target) {
  return {.bench = "executor.fused_allreduce_4MiB",
          .value = value,
          .unit = "GB/s",
          .anchor = "raw_MPI_Allreduce",
          .anchor_value = anchor_value,
          .target = target};
}

TEST(ResultTest, MetFigureIsOneLineInTheFixedFormat) {
  EXPECT_EQ(FormatFigure(Fused(2.5, 2.0, RatioAtLeast(0.9))),
            "bench=executor.fused_allreduce_4MiB value=2.5 unit=GB/s anchor=raw_MPI_Allreduce "
            "anchor_value=2 ratio=1.25 target=ratio>=0.9 met=yes");
}

TEST(ResultTest, MissedFigureSaysNo) {
  // 1.7 / 2 = 0.85 < 0.9.
  EXPECT_EQ(FormatFigure(Fused(1.7, 2.0, RatioAtLeast(0.9))),
            "bench=executor.fused_allreduce_4MiB value=1.7 unit=GB/s anchor=raw_MPI_Allreduce "
            "anchor_value=2 ratio=0.85 target=ratio>=0.9 met=no");
  EXPECT_EQ(Judge(Fused(1.7, 2.0, RatioAtLeast(0.9))), Verdict::kMissed);
}

TEST(ResultTest, FigureWithoutTargetIsInformation) {
  const Figure f = Fused(1.0, 4.0, NoTarget());
  EXPECT_EQ(FormatFigure(f),
            "bench=executor.fused_allreduce_4MiB value=1 unit=GB/s anchor=raw_MPI_Allreduce "
            "anchor_value=4 ratio=0.25 target=none met=n/a");
  EXPECT_EQ(Judge(f), Verdict::kNoTarget);
}

TEST(ResultTest, EachComparisonAtItsBound) {
  // ratio = 4 / 8 = 0.5 exactly.
  EXPECT_EQ(Judge(Fused(4, 8, RatioAtMost(0.5))), Verdict::kMet);
  EXPECT_EQ(Judge(Fused(4, 8, RatioBelow(0.5))), Verdict::kMissed);
  EXPECT_EQ(Judge(Fused(4, 8, RatioAtLeast(0.5))), Verdict::kMet);
  EXPECT_EQ(Judge(Fused(4, 8, RatioAbove(0.5))), Verdict::kMissed);
  EXPECT_EQ(Judge(Fused(3, 8, RatioBelow(0.5))), Verdict::kMet);
  EXPECT_EQ(Judge(Fused(5, 8, RatioAbove(0.5))), Verdict::kMet);
}

TEST(ResultTest, FailedMeasurementIsNeverMet) {
  Figure f = Fused(2.5, 2.0, RatioAtLeast(0.9));
  f.valid = false;
  EXPECT_EQ(Judge(f), Verdict::kMissed);
  EXPECT_EQ(FormatFigure(f).substr(FormatFigure(f).rfind(' ') + 1), "met=no");
  f.target = NoTarget();
  EXPECT_EQ(Judge(f), Verdict::kMissed);
}

TEST(ResultTest, ZeroOrNonFiniteAnchorHasNoRatio) {
  const Figure zero = Fused(3.0, 0.0, RatioAtLeast(0.85));
  EXPECT_TRUE(std::isnan(Ratio(zero)));
  EXPECT_EQ(FormatFigure(zero),
            "bench=executor.fused_allreduce_4MiB value=3 unit=GB/s anchor=raw_MPI_Allreduce "
            "anchor_value=0 ratio=n/a target=ratio>=0.85 met=no");
  EXPECT_EQ(Judge(Fused(3.0, 0.0, NoTarget())), Verdict::kNoTarget);
  EXPECT_EQ(Judge(Fused(std::numeric_limits<double>::quiet_NaN(), 1.0, RatioAtMost(1))),
            Verdict::kMissed);
  EXPECT_EQ(Judge(Fused(std::numeric_limits<double>::infinity(), 1.0, RatioAbove(1))),
            Verdict::kMissed);
}

TEST(ResultTest, EveryFieldIsOneToken) {
  Figure f = Fused(123456789.0, 0.001234567, RatioBelow(1));
  f.bench = "a b\tc";
  f.unit = "";
  f.anchor = "random search";
  std::istringstream line(FormatFigure(f));
  std::vector<std::string> fields;
  for (std::string field; line >> field;) fields.push_back(field);
  const std::vector<std::string> expected = {"bench=a_b_c",
                                             "value=1.23457e+08",
                                             "unit=-",
                                             "anchor=random_search",
                                             "anchor_value=0.00123457",
                                             "ratio=1e+11",
                                             "target=ratio<1",
                                             "met=no"};
  EXPECT_EQ(fields, expected);
}

TEST(ResultTest, TargetsRoundTripAndJunkIsRefused) {
  for (const Target& t : {NoTarget(), RatioBelow(1), RatioAtMost(0.5), RatioAtLeast(0.9),
                          RatioAbove(1e4), RatioAtMost(0.125)}) {
    Target parsed = RatioAbove(-7);
    ASSERT_TRUE(ParseTarget(FormatTarget(t), &parsed)) << FormatTarget(t);
    EXPECT_EQ(parsed.comparison, t.comparison) << FormatTarget(t);
    EXPECT_EQ(parsed.bound, t.bound) << FormatTarget(t);
  }
  EXPECT_EQ(FormatTarget(RatioAtMost(0.5)), "ratio<=0.5");
  EXPECT_EQ(FormatTarget(RatioAbove(10000)), "ratio>10000");
  for (const char* junk : {"", "ratio", "ratio<", "ratio=<1", "ratio<1x", ">=1", "Ratio>=1",
                           "<= 10% (goal 5%)", "ratio>=nan"}) {
    Target t = RatioAtLeast(0.9);
    EXPECT_FALSE(ParseTarget(junk, &t)) << junk;
    EXPECT_EQ(t.comparison, Comparison::kAtLeast) << junk;
  }
}

TEST(ResultTest, SizeLabels) {
  EXPECT_EQ(SizeLabel(int64_t{4} << 20), "4MiB");
  EXPECT_EQ(SizeLabel(int64_t{256} << 20), "256MiB");
  EXPECT_EQ(SizeLabel(65536), "64KiB");
  EXPECT_EQ(SizeLabel(int64_t{1536} << 10), "1536KiB");
  EXPECT_EQ(SizeLabel(1000), "1000B");
}

// Runs bench_figure with args; its stdout, and its exit code in *code.
std::string RunBenchFigure(const std::string& args, int* code) {
  const std::string command = std::string(BENCH_FIGURE_BINARY) + " " + args + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  std::string out;
  char buf[256];
  while (pipe != nullptr && fgets(buf, sizeof(buf), pipe) != nullptr) out += buf;
  const int status = pipe == nullptr ? -1 : pclose(pipe);
  *code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

TEST(ResultTest, BenchFigurePrintsTheLibrarysLine) {
  int code = -1;
  const std::string out = RunBenchFigure(
      "--bench simulator_accuracy.resnet50_mape --value 4.4 --unit % --anchor target "
      "--anchor-value 10 --target 'ratio<=1'",
      &code);
  EXPECT_EQ(code, 0);
  EXPECT_EQ(out,
            "bench=simulator_accuracy.resnet50_mape value=4.4 unit=% anchor=target "
            "anchor_value=10 ratio=0.44 target=ratio<=1 met=yes\n");
  const std::string invalid =
      RunBenchFigure("--bench x --value 1 --unit 1 --anchor y --anchor-value 1 --invalid", &code);
  EXPECT_EQ(code, 0);
  EXPECT_EQ(invalid, "bench=x value=1 unit=1 anchor=y anchor_value=1 ratio=1 target=none met=no\n");
}

TEST(ResultTest, BenchFigureRefusesBadUsageWithOneLine) {
  int code = -1;
  for (const char* args : {"--bench x --value 1 --unit 1 --anchor y",
                           "--bench x --value one --unit 1 --anchor y --anchor-value 1",
                           "--bench x --value 1 --unit 1 --anchor y --anchor-value 1 "
                           "--target '>= 0.9'",
                           "--bench x --value 1 --unit 1 --anchor y --anchor-value 1 --colour"}) {
    const std::string out = RunBenchFigure(args, &code);
    EXPECT_EQ(code, 2) << args;
    EXPECT_EQ(out.rfind("bench_figure: ", 0), 0u) << out;
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  }
}

}  // namespace
}  // namespace autotune::bench
