// What `autotune search` says about a verdict (tools/search/round_files.h): the verdict line and
// --json's evidence carry how the decision rule read two runs of one setting far apart
// (tuner/run_comparison.h, rule 2), with the rule's own comparison of real runs as input.
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "tools/search/round_files.h"
#include "tuner/run_comparison.h"
#include "tuner/search_policy.h"

namespace autotune::cli {
namespace {

using tuner::CompareRuns;
using tuner::RealRun;
using tuner::RealRuns;
using tuner::RunComparison;

// A round whose candidate (no fusion, a 25 ms cycle) was judged by `comparison`: the verdict
// the comparison supports, and a measured noise of 5% across repeats.
RoundReport RoundJudgedBy(const RunComparison& comparison) {
  RoundReport report;
  report.out = "best.yaml";
  report.best_knobs.fusion_threshold_mb = 0.0;
  report.best_knobs.cycle_time_ms = 25.0;
  tuner::Decision& d = report.conclusion.decision;
  d.verdict = comparison.Faster() ? tuner::Verdict::kBeatsDefault : tuner::Verdict::kWithinNoise;
  d.has_speedup = true;
  d.speedup = comparison.speedup;
  d.comparison = comparison;
  d.noise.samples = 4;
  d.noise.across_cv = 0.05;
  return report;
}

// "speedup S, 95% interval [L, H]" as the line prints it, from the comparison's own figures.
std::string IntervalText(const RunComparison& c) {
  char text[96];
  std::snprintf(text, sizeof(text), "speedup %.3f, 95%% interval [%.3f, %.3f]", c.speedup.speedup,
                c.speedup.low, c.speedup.high);
  return text;
}

const char kDriftPhrase[] = "both settings' runs drifted alike";

// The real MLP search's runs of bench/horovod (/tmp/hvdS): D C D C at 724.9, 535.9, 624.6,
// 486.8 ms. Both settings sped up alike (the default's pair 16% apart, the candidate's 10%), so
// rule 2 reads drift, the candidate is faster beyond noise, and the line says why two default
// runs that far apart did not hold the verdict back; --json says the same.
TEST(RoundFilesTest, AVerdictReachedThroughDriftSaysSo) {
  const RealRuns def = {RealRun({724.9}, 0, 1), RealRun({624.6}, 2, 3)};
  const RealRuns cand = {RealRun({535.9}, 1, 2), RealRun({486.8}, 3, 4)};
  const RunComparison c = CompareRuns(def, cand);
  ASSERT_TRUE(c.Faster());
  const RoundReport report = RoundJudgedBy(c);

  const std::string line = RoundVerdictLine(report);
  EXPECT_EQ(line.rfind("best: ", 0), 0u) << line;
  EXPECT_NE(line.find("beats the default"), std::string::npos) << line;
  EXPECT_NE(line.find(IntervalText(c)), std::string::npos) << line;
  EXPECT_NE(line.find(kDriftPhrase), std::string::npos) << line;
  EXPECT_NE(line.find("noise ±5%"), std::string::npos) << line;

  const nlohmann::json json = SearchJson(report);
  const nlohmann::json& speedup = json.at("evidence").at("speedup");
  EXPECT_TRUE(speedup.at("drift_explained").get<bool>());
  EXPECT_FALSE(speedup.at("disagreement_set_aside").get<bool>());
  EXPECT_DOUBLE_EQ(speedup.at("low").get<double>(), c.speedup.low);
  EXPECT_EQ(json.at("verdict").get<std::string>(), line);
}

// The same default runs with a candidate that moved the same way by less than half as much
// (535.9 then 509.8 ms): not drift. The default's pair disagrees and the rule's cautious
// reading decides (the slower default run set aside); the line does not claim drift, and
// --json names the reading that was used.
TEST(RoundFilesTest, ACautiousReadingIsNotCalledDrift) {
  const RealRuns def = {RealRun({724.9}, 0, 1), RealRun({642.9}, 2, 3)};
  const RealRuns cand = {RealRun({535.9}, 1, 2), RealRun({509.8}, 3, 4)};
  const RunComparison c = CompareRuns(def, cand);
  ASSERT_FALSE(c.drift_explained);
  ASSERT_TRUE(c.disagreement_set_aside);
  const RoundReport report = RoundJudgedBy(c);

  const std::string line = RoundVerdictLine(report);
  EXPECT_EQ(line.find(kDriftPhrase), std::string::npos) << line;
  const nlohmann::json speedup = SearchJson(report).at("evidence").at("speedup");
  EXPECT_FALSE(speedup.at("drift_explained").get<bool>());
  EXPECT_TRUE(speedup.at("disagreement_set_aside").get<bool>());
}

// A verdict that keeps the default says so whatever the runs' reading.
TEST(RoundFilesTest, KeepingTheDefaultNamesTheNoise) {
  const RealRuns def = {RealRun({724.9}, 0, 1), RealRun({624.6}, 2, 3)};
  const RealRuns flat = {RealRun({535.9}, 1, 2), RealRun({535.9}, 3, 4)};
  const RunComparison c = CompareRuns(def, flat);
  ASSERT_FALSE(c.Faster());
  const std::string line = RoundVerdictLine(RoundJudgedBy(c));
  EXPECT_EQ(line, "no setting beats the default beyond noise (±5%); keeping the defaults");
}

}  // namespace
}  // namespace autotune::cli
