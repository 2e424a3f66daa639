// The one "better" rule on synthetic step-time series whose answer is known by construction:
// hiccup steps, outlier runs, drift, equal settings.
#include "tuner/run_comparison.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace autotune::tuner {
namespace {

// `n` steps around `ms` with normal noise of coefficient of variation `cv`.
std::vector<double> Steps(double ms, double cv, int n, std::mt19937_64& rng) {
  std::normal_distribution<double> noise(0.0, cv * ms);
  std::vector<double> steps;
  for (int i = 0; i < n; ++i) steps.push_back(ms + noise(rng));
  return steps;
}

double Mean(const std::vector<double>& v) {
  double sum = 0.0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

// The contender is 10% faster (100 ms against 90.9 ms steps, 1% noise), measured D C C D; one
// of its steps is a 5x hiccup. The run medians ignore it and show the gain; the run means
// (what the rule used before) would call the contender slower. Runs of this job vary by 1%
// (given, as 20 degrees of freedom of repeats elsewhere would say).
TEST(RunComparisonTest, ATenPercentGainSurvivesAFiveTimesHiccupStep) {
  std::mt19937_64 rng(7);
  std::vector<double> hiccup_run = Steps(100.0 / 1.1, 0.01, 20, rng);
  hiccup_run[7] *= 5.0;
  const RealRuns def = {RealRun(Steps(100, 0.01, 20, rng), 0),
                        RealRun(Steps(100, 0.01, 20, rng), 3)};
  const RealRuns cand = {RealRun(hiccup_run, 1), RealRun(Steps(100.0 / 1.1, 0.01, 20, rng), 2)};
  CompareOptions options;
  options.across_cv = 0.01;
  options.across_degrees = 20;
  const RunComparison c = CompareRuns(def, cand, options);
  ASSERT_TRUE(c.valid);
  EXPECT_TRUE(c.run_to_run_known);
  EXPECT_EQ(c.remeasure, Remeasure::kNone);
  EXPECT_NEAR(c.speedup.speedup, 1.1, 0.01);
  EXPECT_GT(c.speedup.low, 1.05);
  EXPECT_TRUE(c.Faster());
  // The hiccup makes that run's mean 20% longer than the default's: a mean would not decide.
  EXPECT_GT(Mean(hiccup_run), Mean(def[0].step_ms));
  ASSERT_EQ(c.runs.size(), 4u);
  EXPECT_EQ(c.runs[1].role, RunRole::kCandidate);  // in sequence order: D C C D
  EXPECT_EQ(c.runs[3].role, RunRole::kDefault);
}

// Equal settings, every run 2% slower than the one before (a machine warming up), measured
// C D C D C D: each candidate run is compared with the default around it, so the drift does
// not decide. The plain medians of the two settings would show the candidate 2% faster. The
// first candidate run has no default run before it and is compared with the one after (2%
// slower): the geometric mean of the ratios 1.02, 1, 1 is 1.02^(1/3).
TEST(RunComparisonTest, EqualSettingsUnderDriftAreNotBetter) {
  std::mt19937_64 rng(11);
  RealRuns def, cand;
  for (int run = 0; run < 6; ++run) {
    const double ms = 100.0 * std::pow(1.02, run);
    (run % 2 == 0 ? cand : def).push_back(RealRun(Steps(ms, 0.002, 20, rng), run));
  }
  const RunComparison c = CompareRuns(def, cand);
  ASSERT_TRUE(c.valid);
  EXPECT_FALSE(c.Faster()) << c.speedup.low;
  EXPECT_LE(c.speedup.low, 1.0);
  EXPECT_NEAR(c.speedup.speedup, std::pow(1.02, 1.0 / 3.0), 0.002);
  // What a comparison blind to the order would see: the default's runs 2% later, so slower.
  std::vector<double> def_medians, cand_medians;
  for (const ComparedRun& r : c.runs) {
    (r.role == RunRole::kDefault ? def_medians : cand_medians).push_back(r.median_ms);
  }
  EXPECT_NEAR(Mean(def_medians) / Mean(cand_medians), 1.02, 0.003);
}

// Equal settings without drift, 3% step noise, three runs each alternated: not better.
TEST(RunComparisonTest, EqualSettingsAreNotBetter) {
  std::mt19937_64 rng(3);
  RealRuns def, cand;
  for (int run = 0; run < 6; ++run) {
    (run % 2 == 0 ? def : cand).push_back(RealRun(Steps(100, 0.03, 10, rng), run));
  }
  const RunComparison c = CompareRuns(def, cand);
  EXPECT_FALSE(c.Faster());
  EXPECT_TRUE(c.speedup.ContainsOne()) << c.speedup.low << " " << c.speedup.high;
}

// Three runs of the candidate, one of them (another job on the node) 40% slower: it is an
// outlier, left out, and a re-measure of the candidate is asked for before anything is
// decided. Two runs of one setting that disagree by more than 10% ask for a third.
TEST(RunComparisonTest, AnOutlierRunIsReMeasuredNotTrusted) {
  std::mt19937_64 rng(5);
  const RealRuns def = {RealRun(Steps(100, 0.01, 10, rng), 0),
                        RealRun(Steps(100, 0.01, 10, rng), 3),
                        RealRun(Steps(100, 0.01, 10, rng), 4)};
  const RealRuns cand = {RealRun(Steps(90, 0.01, 10, rng), 1, 11),
                         RealRun(Steps(126, 0.01, 10, rng), 2, 12),
                         RealRun(Steps(90, 0.01, 10, rng), 5, 15)};
  const RunComparison c = CompareRuns(def, cand);
  EXPECT_EQ(c.remeasure, Remeasure::kCandidate);
  EXPECT_FALSE(c.Faster());
  int outliers = 0;
  for (const ComparedRun& r : c.runs) {
    if (r.outlier) {
      ++outliers;
      EXPECT_EQ(r.run_id, 12);
    }
  }
  EXPECT_EQ(outliers, 1);
  EXPECT_GT(c.speedup.low, 1.0);  // without the outlier, the runs left do show a gain
  // The re-measure done (a fourth candidate run, three kept): the outlier is still left out,
  // and it no longer holds the verdict back.
  RealRuns remeasured = cand;
  remeasured.push_back(RealRun(Steps(90, 0.01, 10, rng), 6, 16));
  RealRuns def_after = def;
  def_after.push_back(RealRun(Steps(100, 0.01, 10, rng), 7));
  const RunComparison after = CompareRuns(def_after, remeasured);
  EXPECT_EQ(after.remeasure, Remeasure::kNone);
  EXPECT_TRUE(after.Faster()) << after.speedup.low;
  int left_out = 0;
  for (const ComparedRun& r : after.runs) left_out += r.outlier ? 1 : 0;
  EXPECT_EQ(left_out, 1);

  const RunComparison two = CompareRuns({RealRun(Steps(100, 0.01, 10, rng), 0)},
                                        {RealRun(Steps(90, 0.01, 10, rng), 1),
                                         RealRun(Steps(120, 0.01, 10, rng), 2)});
  EXPECT_EQ(two.remeasure, Remeasure::kCandidate);
  EXPECT_FALSE(two.Faster());
}

// The run medians of a real search (bench/ddp's held-out regnet_x_800mf, 2x2 at 1 Gbit/s): a
// default run of 1,056 ms among 868-921 ms ones is an outlier; once the default has three runs
// kept it no longer asks for another, and the candidate's two runs (702, 686 ms) decide.
// Steps at 0.2% noise, so each run's median is its figure.
TEST(RunComparisonTest, ADefaultOutlierReplacedNoLongerHoldsTheVerdict) {
  std::mt19937_64 rng(21);
  const double def_ms[] = {893, 1056, 911, 921, 914};
  const int64_t def_seq[] = {1, 3, 5, 6, 7};
  RealRuns def;
  for (int i = 0; i < 3; ++i) def.push_back(RealRun(Steps(def_ms[i], 0.002, 10, rng), def_seq[i]));
  const RealRuns cand = {RealRun(Steps(702, 0.002, 10, rng), 2),
                         RealRun(Steps(686, 0.002, 10, rng), 4)};
  // Three default runs, one of them the outlier: two kept, a re-measure asked for.
  const RunComparison waiting = CompareRuns(def, cand);
  EXPECT_EQ(waiting.remeasure, Remeasure::kDefault);
  EXPECT_FALSE(waiting.Faster());
  // One more default run: three kept, nothing asked. Each candidate run against the default
  // interpolated between the kept runs around it (893 at 1, 911 at 5): 897.5 / 702 and
  // 906.5 / 686, geometric mean 1.300, beyond noise.
  def.push_back(RealRun(Steps(def_ms[3], 0.002, 10, rng), def_seq[3]));
  const RunComparison decided = CompareRuns(def, cand);
  EXPECT_EQ(decided.remeasure, Remeasure::kNone);
  EXPECT_TRUE(decided.Faster()) << decided.speedup.low;
  EXPECT_NEAR(decided.speedup.speedup, 1.300, 0.03);
  for (const ComparedRun& r : decided.runs) {
    EXPECT_EQ(r.outlier, r.role == RunRole::kDefault && r.sequence == 3) << r.sequence;
  }
}

// The run-to-run noise a comparison of two runs a side takes from its own repeats, by hand:
// each pair's squared log difference over 2 (one degree each) pooled with the prior's 3
// degrees at 5%, over 5 degrees.
double OwnNoiseOfTwoPairs(double a1, double a2, double b1, double b2) {
  return std::sqrt((std::pow(std::log(a1 / a2), 2) / 2 + std::pow(std::log(b1 / b2), 2) / 2 +
                    3 * 0.05 * 0.05) /
                   5.0);
}

// Two default runs that disagree (the real MLP's search on 2x2 at 1 Gbit/s, bench/horovod:
// 633.5 and 562.6 ms, 12% apart) cannot say which is off, so the verdict is taken as if the
// one that favours the candidate, the slower, were: the candidate's runs (434.1 ms, the
// search's, and 445 ms) against 562.6 alone. One-step runs (no within-run noise); the noise
// is the comparison's own: the default's (ln(633.5 / 562.6))^2 / 2 and the candidate's
// (ln(445 / 434.1))^2 / 2 over 2 degrees, with the prior's 3 at 5%; both candidate runs
// against the one default run: a = 1, so the error is sigma * sqrt(1 + 1/2); t(0.975, 5) from
// a table is 2.5706. Faster beyond noise that way too: no third default run is asked for.
TEST(RunComparisonTest, TwoDisagreeingDefaultRunsDecideByTheCautiousReading) {
  const RealRuns def = {RealRun({633.5}, 0, 1), RealRun({562.6}, 2, 3)};
  const RealRuns cand = {RealRun({434.1}, 1, 2), RealRun({445.0}, 3, 4)};
  const RunComparison c = CompareRuns(def, cand);
  const double sigma = OwnNoiseOfTwoPairs(633.5, 562.6, 445.0, 434.1);
  const double mean = std::log(562.6) - (std::log(434.1) + std::log(445.0)) / 2;
  const double half = 2.5706 * sigma * std::sqrt(1.5);
  EXPECT_EQ(c.remeasure, Remeasure::kNone);
  EXPECT_TRUE(c.disagreement_set_aside);
  EXPECT_NEAR(c.speedup.speedup, std::exp(mean), 1e-12);
  EXPECT_NEAR(c.speedup.low, std::exp(mean - half), 1e-4);
  EXPECT_NEAR(c.speedup.high, std::exp(mean + half), 1e-4);
  EXPECT_TRUE(c.Faster()) << c.speedup.low;
  for (const ComparedRun& r : c.runs) {
    EXPECT_FALSE(r.outlier);
    EXPECT_EQ(r.set_aside, r.run_id == 1) << r.run_id;
  }

  // The candidate's runs faster than the slower default run only (560 and 555 ms): the
  // cautious reading is within noise, so the pair's third run is asked for as before, and
  // nothing is set aside.
  const RealRuns between = {RealRun({560.0}, 1, 2), RealRun({555.0}, 3, 4)};
  const RunComparison waits = CompareRuns(def, between);
  EXPECT_EQ(waits.remeasure, Remeasure::kDefault);
  EXPECT_FALSE(waits.disagreement_set_aside);
  EXPECT_FALSE(waits.Faster());
  for (const ComparedRun& r : waits.runs) EXPECT_FALSE(r.set_aside);
}

// The same for the candidate's two runs: D C D C at 100, 80, 101, 90 ms (the candidate's 12.5%
// apart), the noise given (2% over 10 degrees). The cautious reading keeps the slower, 90 ms,
// which ran after the last default run (a = 1): ln(101 / 90) -+ t(0.975, 10) * 2% * sqrt(1 + 1),
// t from a table 2.2281.
TEST(RunComparisonTest, TwoDisagreeingCandidateRunsDecideByTheSlower) {
  const RealRuns def = {RealRun({100.0}, 0, 1), RealRun({101.0}, 2, 3)};
  const RealRuns cand = {RealRun({80.0}, 1, 2), RealRun({90.0}, 3, 4)};
  CompareOptions options;
  options.across_cv = 0.02;
  options.across_degrees = 10;
  const RunComparison c = CompareRuns(def, cand, options);
  const double half = 2.2281 * 0.02 * std::sqrt(2.0);
  EXPECT_EQ(c.remeasure, Remeasure::kNone);
  EXPECT_NEAR(c.speedup.speedup, 101.0 / 90.0, 1e-12);
  EXPECT_NEAR(c.speedup.low, 101.0 / 90.0 * std::exp(-half), 1e-4);
  EXPECT_TRUE(c.Faster());
  for (const ComparedRun& r : c.runs) EXPECT_EQ(r.set_aside, r.run_id == 2) << r.run_id;
  // At the noise the runs themselves show, the slower run alone is within it: a third run.
  const RunComparison own = CompareRuns(def, cand);
  EXPECT_EQ(own.remeasure, Remeasure::kCandidate);
  EXPECT_FALSE(own.Faster());
}

// Drift under both settings is not a run that is off (rule 2): the real MLP's search on 2x2 at
// 1 Gbit/s (bench/horovod, /tmp/hvdS), D C D C at 724.9, 535.9, 624.6, 486.8 ms. The default's
// pair differs by ln(624.6 / 724.9) = -0.1489, the candidate's slope over its runs 2 apart is
// ln(486.8 / 535.9) / 2 per place, so over the default's 2 places -0.0961: the same way, more
// than half as much, and -0.0528 left, within ln 1.1. The candidate's pair likewise (+0.0528
// left of -0.0961 against the default's -0.1489). So nothing disagrees and rule 3 decides: the
// first candidate run against the default's two around it (a = 1/2 each), the second against
// the last (a = 1): a = (1/4, 3/4), the mean log ratio ln(724.9) / 4 + 3 ln(624.6) / 4 -
// (ln(535.9) + ln(486.8)) / 2; the noise the runs' own (each pair's squared difference over
// 2, 2 degrees, with the prior's 3 at 5%), the error sigma * sqrt(1/16 + 9/16 + 1/2), t(0.975,
// 5) 2.5706 from a table. The search read the default's pair as disagreeing and kept the
// default; its candidate was then confirmed 1.200x over four alternating pairs.
TEST(RunComparisonTest, DriftUnderBothSettingsIsNotADisagreement) {
  const RealRuns def = {RealRun({724.9}, 0, 1), RealRun({624.6}, 2, 3)};
  const RealRuns cand = {RealRun({535.9}, 1, 2), RealRun({486.8}, 3, 4)};
  const RunComparison c = CompareRuns(def, cand);
  const double sigma = OwnNoiseOfTwoPairs(724.9, 624.6, 535.9, 486.8);
  const double mean = std::log(724.9) / 4 + 3 * std::log(624.6) / 4 -
                      (std::log(535.9) + std::log(486.8)) / 2;
  const double half = 2.5706 * sigma * std::sqrt(1.0 / 16 + 9.0 / 16 + 0.5);
  EXPECT_TRUE(c.drift_explained);
  EXPECT_FALSE(c.disagreement_set_aside);
  EXPECT_EQ(c.remeasure, Remeasure::kNone);
  EXPECT_NEAR(c.speedup.speedup, std::exp(mean), 1e-12);
  EXPECT_NEAR(c.speedup.low, std::exp(mean - half), 1e-4);
  EXPECT_TRUE(c.Faster()) << c.speedup.low;
  for (const ComparedRun& r : c.runs) EXPECT_FALSE(r.outlier || r.set_aside);

  // The same default runs with the candidate flat (535.9 both times): the default's pair
  // differs by 14% after the candidate's drift of 0, so it disagrees, and the cautious reading
  // (624.6 alone against 535.9 twice, at the noise the pair shows) is within noise: a third
  // default run is asked for.
  const RealRuns flat = {RealRun({535.9}, 1, 2), RealRun({535.9}, 3, 4)};
  const RunComparison waits = CompareRuns(def, flat);
  EXPECT_FALSE(waits.drift_explained);
  EXPECT_EQ(waits.remeasure, Remeasure::kDefault);
  EXPECT_FALSE(waits.Faster());

  // A candidate that moved the same way, but by less than half as much as the default's pair,
  // does not explain it, even where what is left is within 10%: the default's pair moves by
  // -0.12 (724.9 to 642.9 ms), the candidate's drift over those 2 places is -0.05 (535.9 to
  // 509.8 ms); -0.07 would be left, yet the pair still disagrees: the verdict is the cautious
  // reading's (642.9 ms alone against both candidate runs), and the slower run is set aside.
  const RealRuns def_less = {RealRun({724.9}, 0, 1), RealRun({642.9}, 2, 3)};
  const RealRuns cand_less = {RealRun({535.9}, 1, 2), RealRun({509.8}, 3, 4)};
  const RunComparison less = CompareRuns(def_less, cand_less);
  EXPECT_FALSE(less.drift_explained);
  EXPECT_TRUE(less.disagreement_set_aside);
  for (const ComparedRun& r : less.runs) EXPECT_EQ(r.set_aside, r.run_id == 1) << r.run_id;

  // A candidate that moved the same way but ran entirely after the default's pair (D D C C) has
  // no run within the pair's stretch: its slope is not the drift the pair saw.
  const RealRuns def_first = {RealRun({724.9}, 0, 1), RealRun({624.6}, 1, 2)};
  const RealRuns after = {RealRun({535.9}, 2, 3), RealRun({486.8}, 3, 4)};
  const RunComparison later = CompareRuns(def_first, after);
  EXPECT_FALSE(later.drift_explained);
  EXPECT_EQ(later.remeasure, Remeasure::kDefault);
}

// One run each: the steps show a gain, but how much a whole run varies is unknown: not
// decided, even with the run-to-run noise measured elsewhere, while the default ran once (a
// single default run sets the level every candidate run is compared with). With two default
// runs and that noise (given here, as repeats elsewhere would), one candidate run decides.
TEST(RunComparisonTest, OneRunEachNeedsTheRunToRunNoise) {
  std::mt19937_64 rng(9);
  const RealRuns def = {RealRun(Steps(100, 0.01, 10, rng))};
  const RealRuns cand = {RealRun(Steps(80, 0.01, 10, rng))};
  const RunComparison unknown = CompareRuns(def, cand);
  EXPECT_FALSE(unknown.run_to_run_known);
  EXPECT_TRUE(unknown.speedup.Faster());
  EXPECT_FALSE(unknown.Faster());
  CompareOptions options;
  options.across_cv = 0.01;
  options.across_degrees = 10;
  EXPECT_FALSE(CompareRuns(def, cand, options).Faster());
  const RealRuns def_twice = {RealRun(Steps(100, 0.01, 10, rng), 1),
                              RealRun(Steps(100, 0.01, 10, rng), 3)};
  const RealRuns cand_between = {RealRun(Steps(80, 0.01, 10, rng), 2)};
  // One candidate run between two default runs: its interval is clear of 1, but one run that
  // came out fast as a whole cannot be told from a faster setting: no verdict.
  const RunComparison once = CompareRuns(def_twice, cand_between, options);
  EXPECT_TRUE(once.speedup.Faster());
  EXPECT_FALSE(once.run_to_run_known);
  EXPECT_FALSE(once.Faster());
  const RealRuns cand_twice = {RealRun(Steps(80, 0.01, 10, rng), 2),
                               RealRun(Steps(80, 0.01, 10, rng), 4)};
  EXPECT_TRUE(CompareRuns(def_twice, cand_twice, options).Faster());
  options.across_cv = 0.3;  // runs of one setting 30% apart: a 25% gain is within that
  EXPECT_FALSE(CompareRuns(def_twice, cand_twice, options).Faster());
}

// The default once, the candidate twice and its two runs 1% apart (bench/horovod, resnet50:
// 2253 ms against 2066 and 2050 ms traced, then 0.948x in production): the candidate's
// repeats do not show how far the one default run is off, so this is not decided. The
// interval counts that run's run-to-run noise too: the bootstrap before it said [1.026, 1.153].
TEST(RunComparisonTest, OneDefaultRunDoesNotDecide) {
  std::mt19937_64 rng(11);
  const RealRuns def = {RealRun(Steps(2253, 0.01, 10, rng), 1)};
  const RealRuns cand = {RealRun(Steps(2066, 0.01, 10, rng), 2),
                         RealRun(Steps(2050, 0.01, 10, rng), 3)};
  const RunComparison c = CompareRuns(def, cand);
  EXPECT_FALSE(c.speedup.Faster()) << c.speedup.low;
  EXPECT_FALSE(c.run_to_run_known);
  EXPECT_FALSE(c.Faster());
}

// Run medians 100 and 110 of one setting: the log spread sqrt((ln 1.1)^2 / 2) over 1 degree.
TEST(RunComparisonTest, RunToRunNoiseFromRepeatsOfAnySetting) {
  const RealRuns a = {RealRun({100, 100, 100}), RealRun({110, 110, 110})};
  const RealRuns single = {RealRun({50, 60, 70})};
  // Two runs, one degree of freedom: their spread s^2 = (ln 1.1)^2 / 2, pooled with the prior
  // (5% at 3 degrees of freedom): sqrt((s^2 + 3 * 0.05^2) / 4), at 4 degrees of freedom.
  const double s2 = std::log(1.1) * std::log(1.1) / 2.0;
  EXPECT_NEAR(RunToRun({a, single}).cv, std::sqrt((s2 + 3 * 0.0025) / 4.0), 1e-12);
  EXPECT_EQ(RunToRun({a, single}).degrees, 4.0);
  EXPECT_EQ(RunToRun({single}).cv, 0.0);
  // The MLP's two default runs that agreed (712 and 707.4 ms) are not a whole run's noise.
  const RealRuns agreeing = {RealRun({712.0}), RealRun({707.4})};
  const double d = std::log(712.0 / 707.4);
  EXPECT_NEAR(RunToRun({agreeing}).cv, std::sqrt((d * d / 2.0 + 3 * 0.0025) / 4.0), 1e-12);
  EXPECT_GT(RunToRun({agreeing}).cv, 0.04);
}

// The interval by hand. Steps all equal (no within-run noise), D C D at 100, 80, 100 ms: the
// log ratio ln 1.25; the candidate run sits halfway, so each default run weighs 1/2 and the
// standard error is sigma * sqrt(1/4 + 1/4 + 1). Given sigma 5% at 4 degrees of freedom, the
// t quantile (0.975, 4 dof) from a table is 2.7764: ln 1.25 -+ 2.7764 * 0.05 * sqrt(1.5).
TEST(RunComparisonTest, TheIntervalIsStudentsTOverTheRunToRunNoise) {
  const RealRuns def = {RealRun({100, 100, 100}, 0), RealRun({100, 100, 100}, 2)};
  const RealRuns cand = {RealRun({80, 80, 80}, 1)};
  CompareOptions options;
  options.across_cv = 0.05;
  options.across_degrees = 4;
  const RunComparison c = CompareRuns(def, cand, options);
  const double half = 2.7764 * 0.05 * std::sqrt(1.5);
  EXPECT_NEAR(c.speedup.speedup, 1.25, 1e-12);
  EXPECT_NEAR(c.speedup.low, 1.25 * std::exp(-half), 1e-4);
  EXPECT_NEAR(c.speedup.high, 1.25 * std::exp(half), 1e-4);
  EXPECT_TRUE(c.speedup.Faster());  // 1.0546
  EXPECT_FALSE(c.Faster());          // from one candidate run: no verdict

  // Its own repeats when none is given: D C D C at 100, 80, 110, 84. Pooled: the default's
  // (ln 1.1)^2 / 2 and the candidate's (ln 1.05)^2 / 2 over 2 degrees with the prior's 3 at 5%.
  // Weights: the first candidate run halfway (1/2, 1/2), the last after the last default run
  // (0, 1): a = (1/4, 3/4), so the error is sigma * sqrt(1/16 + 9/16 + 1/2); t(0.975, 5) from
  // a table is 2.5706. The log ratios: ln(sqrt(100 * 110) / 80) and ln(110 / 84).
  const RealRuns def2 = {RealRun({100.0}, 0), RealRun({110.0}, 2)};
  const RealRuns cand2 = {RealRun({80.0}, 1), RealRun({84.0}, 3)};
  const RunComparison own = CompareRuns(def2, cand2);
  const double sigma =
      std::sqrt((std::pow(std::log(1.1), 2) / 2 + std::pow(std::log(1.05), 2) / 2 + 3 * 0.0025) /
                5.0);
  const double mean = (std::log(std::sqrt(100.0 * 110.0) / 80.0) + std::log(110.0 / 84.0)) / 2;
  const double half2 = 2.5706 * sigma * std::sqrt(1.0 / 16 + 9.0 / 16 + 0.5);
  EXPECT_NEAR(own.speedup.speedup, std::exp(mean), 1e-12);
  EXPECT_NEAR(own.speedup.low, std::exp(mean - half2), 1e-4);
  EXPECT_NEAR(own.speedup.high, std::exp(mean + half2), 1e-4);
  EXPECT_TRUE(own.run_to_run_known);
}

// The variance factor a next run is chosen by is the interval's own: sum_j a_j^2 + 1/m, with
// a_j worked out by hand from rule 3's interpolation.
TEST(RunComparisonTest, TheRatioVarianceFactorIsTheIntervalsOwn) {
  constexpr RunRole D = RunRole::kDefault;
  constexpr RunRole C = RunRole::kCandidate;
  // D C D: the candidate halfway, a = (1/2, 1/2): 1/4 + 1/4 + 1.
  EXPECT_NEAR(RatioVarianceFactor({D, C, D}), 1.5, 1e-12);
  // D C D C, as in the test above: a = (1/4, 3/4).
  EXPECT_NEAR(RatioVarianceFactor({D, C, D, C}), 1.0 / 16 + 9.0 / 16 + 0.5, 1e-12);
  // D C D C D: both candidate runs bracketed, a = (1/4, 1/2, 1/4).
  EXPECT_NEAR(RatioVarianceFactor({D, C, D, C, D}), 1.0 / 16 + 1.0 / 4 + 1.0 / 16 + 0.5, 1e-12);
  // D C C D: the candidate runs a third and two thirds of the way, a = (1/2, 1/2).
  EXPECT_NEAR(RatioVarianceFactor({D, C, C, D}), 0.25 + 0.25 + 0.5, 1e-12);
  EXPECT_TRUE(std::isinf(RatioVarianceFactor({D, D})));
  EXPECT_TRUE(std::isinf(RatioVarianceFactor({C})));
  // And it is what the interval's width rests on: one-step runs (no within-run noise) at a
  // given run-to-run noise of 4% over 6 degrees: half-width = t(0.975, 6) * 4% * sqrt(factor),
  // t from a table: 2.4469.
  const RealRuns def = {RealRun({100.0}, 0), RealRun({104.0}, 2), RealRun({98.0}, 4)};
  const RealRuns cand = {RealRun({90.0}, 1), RealRun({91.0}, 3)};
  CompareOptions options;
  options.across_cv = 0.04;
  options.across_degrees = 6;
  const RunComparison c = CompareRuns(def, cand, options);
  const double half = 2.4469 * 0.04 * std::sqrt(RatioVarianceFactor({D, C, D, C, D}));
  EXPECT_NEAR(std::log(c.speedup.high / c.speedup.low) / 2, half, 1e-4);
}

}  // namespace
}  // namespace autotune::tuner
