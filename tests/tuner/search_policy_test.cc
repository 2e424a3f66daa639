#include "tuner/search_policy.h"

#include <gtest/gtest.h>

#include <vector>

namespace autotune::tuner {
namespace {

Suggestion Pick(SuggestionOrigin origin, double expected_improvement) {
  Suggestion s;
  s.origin = origin;
  s.expected_improvement = expected_improvement;
  return s;
}

Reported Setting(double x, double mean, double variance, int measured_count) {
  Reported r;
  r.point = {x};
  r.prediction = {mean, variance};
  r.measured.count = measured_count;
  return r;
}

// Two standard deviations of the difference: sqrt(4 + 0) = 2, so the bar is a gap of 4.
TEST(SearchPolicyTest, BeyondNoiseIsAGapOfMoreThanTwoStandardDeviations) {
  EXPECT_TRUE(BeyondNoise({10.0, 4.0}, {5.0, 0.0}));   // gap 5 > 4
  EXPECT_FALSE(BeyondNoise({9.0, 4.0}, {5.0, 0.0}));   // gap 4, not more
  EXPECT_FALSE(BeyondNoise({5.0, 0.0}, {10.0, 4.0}));  // the other way round
  // Variances add: sqrt(1.5 + 2.5) = 2, bar 4 again.
  EXPECT_TRUE(BeyondNoise({4.5, 1.5}, {0.0, 2.5}));
  EXPECT_FALSE(BeyondNoise({3.5, 1.5}, {0.0, 2.5}));
}

TEST(SearchPolicyTest, BudgetIsSpentAtTheMaximum) {
  StopRule rule;
  rule.max_measured_samples = 3;
  EXPECT_FALSE(BudgetSpent(rule, 2));
  EXPECT_TRUE(BudgetSpent(rule, 3));
  EXPECT_TRUE(BudgetSpent(rule, 4));
}

TEST(SearchPolicyTest, ImprovementStopNeedsAThresholdThreeMeasuredSamplesAndAnEIPick) {
  StopRule rule;
  rule.min_expected_improvement_ratio = 0.01;
  const Suggestion ei = Pick(SuggestionOrigin::kExpectedImprovement, 0.0);
  EXPECT_EQ(rule.min_measured_before_stop, 3);
  EXPECT_FALSE(ImprovementStopApplies(rule, 2, ei));
  EXPECT_TRUE(ImprovementStopApplies(rule, 3, ei));
  EXPECT_FALSE(ImprovementStopApplies(rule, 3, Pick(SuggestionOrigin::kInitialDesign, 0.0)));
  EXPECT_FALSE(ImprovementStopApplies(rule, 3, Pick(SuggestionOrigin::kSimulatedOptimum, 0.0)));
  rule.min_measured_before_stop = 0;  // still needs one measured sample for an incumbent
  EXPECT_FALSE(ImprovementStopApplies(rule, 0, ei));
  EXPECT_TRUE(ImprovementStopApplies(rule, 1, ei));
  rule.min_expected_improvement_ratio = 0.0;  // budget only
  EXPECT_FALSE(ImprovementStopApplies(rule, 10, ei));
}

// Threshold: 0.01 * |-200| = 2 (the incumbent's sign does not matter).
TEST(SearchPolicyTest, ImprovementIsTooSmallBelowTheRatioOfTheIncumbent) {
  StopRule rule;
  rule.min_expected_improvement_ratio = 0.01;
  auto ei = [](double value) { return Pick(SuggestionOrigin::kExpectedImprovement, value); };
  EXPECT_TRUE(ImprovementTooSmall(rule, ei(1.9), -200.0));
  EXPECT_FALSE(ImprovementTooSmall(rule, ei(2.0), -200.0));
  EXPECT_FALSE(ImprovementTooSmall(rule, ei(2.1), 200.0));
}

TEST(SearchPolicyTest, MeanOfRepeatsCountsOneSettingAtOneFidelity) {
  const std::vector<Observation> observations = {{{1.0}, Fidelity::kMeasured, 10.0},
                                                 {{1.0}, Fidelity::kMeasured, 14.0},
                                                 {{1.0}, Fidelity::kSimulated, 100.0},
                                                 {{2.0}, Fidelity::kMeasured, 7.0},
                                                 {{1.0}, Fidelity::kMeasured, 12.0}};
  const Repeats measured = MeanOfRepeats(observations, {1.0});
  EXPECT_EQ(measured.count, 3);
  EXPECT_DOUBLE_EQ(measured.mean, 12.0);  // (10 + 14 + 12) / 3
  const Repeats simulated = MeanOfRepeats(observations, {1.0}, Fidelity::kSimulated);
  EXPECT_EQ(simulated.count, 1);
  EXPECT_DOUBLE_EQ(simulated.mean, 100.0);
  const Repeats none = MeanOfRepeats(observations, {3.0});
  EXPECT_EQ(none.count, 0);
  EXPECT_DOUBLE_EQ(none.mean, 0.0);
}

TEST(SearchPolicyTest, BestIsTheBestMeasuredUnlessAPredictionBeatsItBeyondNoise) {
  // Measured 10 and 12; predicted-only 13, a gap of 1 < 2 sqrt(1 + 1): the measured 12.
  std::vector<Reported> settings = {Setting(1, 10, 1, 2), Setting(2, 12, 1, 1),
                                    Setting(3, 13, 1, 0)};
  EXPECT_EQ(ChooseBest(settings).point, (Point{2}));
  // Predicted 20: a gap of 8 > 2.83: the prediction.
  settings[2].prediction.mean = 20;
  EXPECT_EQ(ChooseBest(settings).point, (Point{3}));
  // Nothing measured: the best prediction.
  EXPECT_EQ(ChooseBest({Setting(4, 5, 1, 0), Setting(5, 7, 1, 0)}).point, (Point{5}));
  // Ties go to the first.
  EXPECT_EQ(ChooseBest({Setting(6, 10, 1, 1), Setting(7, 10, 1, 1)}).point, (Point{6}));
}

TEST(SearchPolicyTest, CandidateIsTheBestMeasuredUnlessOnlyTheDefaultWas) {
  const Point default_point = {0};
  const Reported measured_best = Setting(1, 12, 1, 2);
  const Reported predicted = Setting(2, 20, 1, 0);
  const Reported def = Setting(0, 10, 1, 1);
  EXPECT_EQ(Candidate(measured_best, &measured_best, default_point).point, (Point{1}));
  EXPECT_EQ(Candidate(predicted, &measured_best, default_point).point, (Point{1}));
  EXPECT_EQ(Candidate(predicted, &def, default_point).point, (Point{2}));
  EXPECT_EQ(Candidate(predicted, nullptr, default_point).point, (Point{2}));
}

// Step times: `n` values alternating mean +- spread.
std::vector<double> Alternating(double mean, double spread, int n) {
  std::vector<double> steps;
  for (int i = 0; i < n; ++i) steps.push_back(mean + (i % 2 == 0 ? spread : -spread));
  return steps;
}

TEST(SearchPolicyTest, OnlyMeasuredStepTimesDecideTheVerdict) {
  const Reported def = Setting(0, 10, 1, 1);
  const RealRuns slow = {Alternating(100, 1, 10)};
  const RealRuns fast = {Alternating(80, 1, 10)};
  const StepNoise noise;
  EXPECT_EQ(Decide(def, def, slow, slow, noise).verdict, Verdict::kIsDefault);
  // A prediction far above the default is still not shown.
  EXPECT_EQ(Decide(Setting(1, 50, 1, 0), def, {}, slow, noise).verdict,
            Verdict::kBestNotMeasured);
  EXPECT_EQ(Decide(Setting(1, 50, 1, 2), Setting(0, 10, 1, 0), fast, {}, noise).verdict,
            Verdict::kDefaultNotMeasured);
  EXPECT_EQ(Decide(Setting(1, 50, 1, 2), def, {}, slow, noise).verdict, Verdict::kNoStepTimes);
  // Without comparable step times it re-measures, the default first, however many samples
  // (say 3 traced runs each, none of them production) either has; the budget alone stops it.
  const Decision no_steps = Decide(Setting(1, 50, 1, 3), Setting(0, 10, 1, 3), {}, slow, noise);
  StopRule budget;
  budget.max_measured_samples = 8;
  EXPECT_TRUE(RemeasureToDecide(budget, 6, no_steps, Setting(1, 50, 1, 3), Setting(0, 10, 1, 3)));
  EXPECT_EQ(RemeasureOrder(no_steps).front(), RunRole::kDefault);
  EXPECT_FALSE(RemeasureToDecide(budget, 8, no_steps, Setting(1, 50, 1, 3), Setting(0, 10, 1, 3)));
  // 20% shorter steps with a 1% spread, one run each: faster within the runs, but how much a
  // whole run varies was never measured: not shown, and repeats may settle it.
  Decision d = Decide(Setting(1, 9, 1, 1), def, fast, slow, noise);
  EXPECT_EQ(d.verdict, Verdict::kRunToRunUnknown);
  EXPECT_TRUE(d.has_speedup);
  EXPECT_NEAR(d.speedup.speedup, 100.0 / 80.0, 1e-9);
  EXPECT_TRUE(d.HangsOnNoise());
  // Two runs of the candidate, both 20% shorter, against one of the default: how far that
  // one run is off is not known yet. With two of the default: shown, whatever the model
  // predicts.
  const RealRuns fast_twice = {Alternating(80, 1, 10), Alternating(80, 1, 10)};
  d = Decide(Setting(1, 9, 1, 2), def, fast_twice, slow, noise);
  EXPECT_EQ(d.verdict, Verdict::kRunToRunUnknown);
  EXPECT_TRUE(d.HangsOnNoise());
  const RealRuns slow_twice = {Alternating(100, 1, 10), Alternating(100, 1, 10)};
  d = Decide(Setting(1, 9, 1, 2), Setting(0, 10, 1, 2), fast_twice, slow_twice, noise);
  EXPECT_EQ(d.verdict, Verdict::kBeatsDefault);
  EXPECT_FALSE(d.HangsOnNoise());
  // The same steps on both sides: within noise, and it hangs on it.
  d = Decide(Setting(1, 50, 1, 1), def, slow, slow, noise);
  EXPECT_EQ(d.verdict, Verdict::kWithinNoise);
  EXPECT_TRUE(d.HangsOnNoise());
  // Steps 10% shorter with a 1% spread, one candidate run between two of the default, a
  // run-to-run spread of 0.1% measured elsewhere: that one run may be off as a whole, so not
  // shown. Two runs of it: shown; with a spread of 20%: within noise.
  const RealRuns ten_percent = {Alternating(90, 1, 10)};
  StepNoise run_to_run;
  run_to_run.across_cv = 0.001;
  EXPECT_EQ(Decide(Setting(1, 9, 1, 1), Setting(0, 10, 1, 2), ten_percent, slow_twice,
                   run_to_run)
                .verdict,
            Verdict::kRunToRunUnknown);
  const RealRuns ten_percent_twice = {Alternating(90, 1, 10), Alternating(90, 1, 10)};
  EXPECT_EQ(Decide(Setting(1, 9, 1, 2), Setting(0, 10, 1, 2), ten_percent_twice, slow_twice,
                   run_to_run)
                .verdict,
            Verdict::kBeatsDefault);
  run_to_run.across_cv = 0.2;
  EXPECT_EQ(Decide(Setting(1, 9, 1, 2), Setting(0, 10, 1, 2), ten_percent_twice, slow_twice,
                   run_to_run)
                .verdict,
            Verdict::kWithinNoise);
  // The texts `search` writes into best.yaml and its summaries.
  EXPECT_STREQ(VerdictText(Verdict::kIsDefault), "is the default");
  EXPECT_STREQ(VerdictText(Verdict::kBestNotMeasured), "not shown: predicted, not measured yet");
  EXPECT_STREQ(VerdictText(Verdict::kDefaultNotMeasured),
               "not shown: the default was never measured");
  EXPECT_STREQ(VerdictText(Verdict::kNoStepTimes), "not shown: no step times measured");
  EXPECT_STREQ(VerdictText(Verdict::kRunToRunUnknown),
               "not shown: run-to-run noise not measured yet (it takes two runs of the default "
               "and two of the candidate: one run of either can be off as a whole)");
  EXPECT_STREQ(VerdictText(Verdict::kWithinNoise), "not shown: within noise");
  EXPECT_STREQ(VerdictText(Verdict::kRunsDisagree), "not shown: a run disagrees with its repeats");
  EXPECT_STREQ(VerdictText(Verdict::kBeatsDefault), "yes");
}

// When the model's candidate is within noise, the measured setting whose speedup's lower bound
// is highest is judged instead, at a Bonferroni-adjusted level; none faster: -1.
TEST(SearchPolicyTest, MostConvincinglyFasterMeasuredSettingBeatsTheDefault) {
  const Reported def = Setting(0, 10, 1, 2);
  const RealRuns slow = {Alternating(100, 1, 10), Alternating(100, 1, 10)};
  const std::vector<Reported> measured = {Setting(1, 10, 1, 2), Setting(2, 9, 1, 2),
                                          Setting(3, 9, 1, 2)};
  // Same as the default; 12% shorter but spread +-8; 10% shorter with a 1% spread (two runs
  // each).
  const std::vector<RealRuns> steps = {{Alternating(100, 1, 10), Alternating(100, 1, 10)},
                                       {Alternating(88, 8, 10), Alternating(88, 8, 10)},
                                       {Alternating(90, 1, 10), Alternating(90, 1, 10)}};
  StepNoise noise;
  noise.across_cv = 0.001;  // run-to-run spread measured elsewhere (20 degrees), small: each
  noise.across_degrees = 20;  // run then varies by its own steps' noise (0.59% to 5.4% here)
  Decision d;
  EXPECT_EQ(MostConvincinglyFaster(measured, steps, def, slow, noise, &d), 2);
  EXPECT_EQ(d.verdict, Verdict::kBeatsDefault);
  EXPECT_NEAR(d.speedup.speedup, 100.0 / 90.0, 1e-9);
  EXPECT_NEAR(d.speedup.confidence, 1.0 - 0.05 / 3.0, 1e-12);
  const std::vector<Reported> same = {Setting(1, 10, 1, 1)};
  EXPECT_EQ(MostConvincinglyFaster(same, {slow}, def, slow, StepNoise(), &d), -1);
  EXPECT_EQ(MostConvincinglyFaster({}, {}, def, slow, StepNoise(), &d), -1);
}

TEST(SearchPolicyTest, RemeasureWhileTheVerdictHangsOnNoiseAndBudgetAndRepeatsRemain) {
  const RealRuns slow = {Alternating(100, 5, 10)};
  const Decision hangs = Decide(Setting(1, 9, 1, 1), Setting(0, 10, 1, 1), slow, slow, {});
  ASSERT_TRUE(hangs.HangsOnNoise());
  StopRule rule;
  rule.max_measured_samples = 5;
  EXPECT_TRUE(RemeasureToDecide(rule, 2, hangs, Setting(1, 9, 1, 1), Setting(0, 10, 1, 1)));
  EXPECT_FALSE(RemeasureToDecide(rule, 5, hangs, Setting(1, 9, 1, 1), Setting(0, 10, 1, 1)));
  EXPECT_TRUE(RemeasureToDecide(rule, 4, hangs, Setting(1, 9, 1, 3), Setting(0, 10, 1, 2)));
  EXPECT_FALSE(RemeasureToDecide(rule, 4, hangs, Setting(1, 9, 1, 3), Setting(0, 10, 1, 3)));
  // Faster within one run each: repeat them; shown with the run-to-run spread known: don't.
  const Decision one_run_each =
      Decide(Setting(1, 9, 1, 1), Setting(0, 10, 1, 1), {Alternating(80, 1, 10)}, slow, {});
  EXPECT_TRUE(
      RemeasureToDecide(rule, 2, one_run_each, Setting(1, 9, 1, 1), Setting(0, 10, 1, 1)));
  // One candidate run between two of the default, with the run-to-run spread known: it may be
  // off as a whole, so the candidate runs again; after its second run: shown, don't.
  StepNoise known;
  known.across_cv = 0.001;
  known.across_degrees = 20;
  const RealRuns slow_twice = {RealRun(Alternating(100, 5, 10), 1),
                               RealRun(Alternating(100, 5, 10), 3)};
  const Decision once =
      Decide(Setting(1, 9, 1, 1), Setting(0, 10, 1, 2), {RealRun(Alternating(80, 1, 10), 2)},
             slow_twice, known);
  EXPECT_EQ(once.verdict, Verdict::kRunToRunUnknown);
  EXPECT_TRUE(RemeasureToDecide(rule, 3, once, Setting(1, 9, 1, 1), Setting(0, 10, 1, 2)));
  EXPECT_EQ(RemeasureOrder(once).front(), RunRole::kCandidate);
  const Decision shown = Decide(
      Setting(1, 9, 1, 2), Setting(0, 10, 1, 2),
      {RealRun(Alternating(80, 1, 10), 2), RealRun(Alternating(80, 1, 10), 4)}, slow_twice, known);
  EXPECT_EQ(shown.verdict, Verdict::kBeatsDefault);
  EXPECT_FALSE(RemeasureToDecide(rule, 4, shown, Setting(1, 9, 1, 2), Setting(0, 10, 1, 2)));
}

// A candidate run that is an outlier among its repeats does not decide: the candidate is
// measured again (alone), whatever the other runs show.
TEST(SearchPolicyTest, AnOutlierRunAsksForARemeasureOfItsSetting) {
  const RealRuns def = {RealRun(Alternating(100, 1, 10), 0), RealRun(Alternating(100, 1, 10), 3),
                        RealRun(Alternating(100, 1, 10), 4)};
  // Runs 1, 2 and 5: 20% shorter twice, then a run 50% longer than those.
  const RealRuns cand = {RealRun(Alternating(80, 1, 10), 1), RealRun(Alternating(80, 1, 10), 2),
                         RealRun(Alternating(120, 1, 10), 5)};
  const Decision d = Decide(Setting(1, 9, 1, 3), Setting(0, 10, 1, 3), cand, def, {});
  EXPECT_EQ(d.verdict, Verdict::kRunsDisagree);
  EXPECT_TRUE(d.HangsOnNoise());
  EXPECT_EQ(RemeasureOrder(d), std::vector<RunRole>{RunRole::kCandidate});
  StopRule rule;
  rule.max_measured_samples = 10;
  // Three runs each is the limit for noise; an outlier gets one more.
  EXPECT_TRUE(RemeasureToDecide(rule, 6, d, Setting(1, 9, 1, 3), Setting(0, 10, 1, 3)));
  EXPECT_FALSE(RemeasureToDecide(rule, 7, d, Setting(1, 9, 1, 4), Setting(0, 10, 1, 3)));
  // The outlier left out, the other two runs show the speedup.
  EXPECT_NEAR(d.speedup.speedup, 100.0 / 80.0, 1e-9);
}

// Re-measures of a verdict hanging on noise go first to the side whose next run narrows the
// interval more; where both narrow it alike, to the side with fewer runs, else D C C D; but
// while the default has one run, the default first (no verdict can be reached without its
// second).
TEST(SearchPolicyTest, RemeasuresGoWhereTheyNarrowTheIntervalMore) {
  Decision d;
  d.comparison.runs = {{RunRole::kDefault, 0, 0, 10, 100.0, false},
                       {RunRole::kCandidate, 0, 1, 10, 99.0, false}};
  EXPECT_EQ(RemeasureOrder(d), (std::vector<RunRole>{RunRole::kDefault, RunRole::kCandidate}));
  // D D C: the default has two; from here the pattern.
  d.comparison.runs = {{RunRole::kDefault, 0, 0, 10, 100.0, false},
                       {RunRole::kDefault, 0, 1, 10, 100.0, false},
                       {RunRole::kCandidate, 0, 2, 10, 99.0, false}};
  EXPECT_EQ(RemeasureOrder(d), (std::vector<RunRole>{RunRole::kCandidate, RunRole::kDefault}));
  d.comparison.runs = {{RunRole::kDefault, 0, 0, 10, 100.0, false},
                       {RunRole::kCandidate, 0, 1, 10, 99.0, false}};
  // One at a time (record --autotune). D C C -> D: the two candidate runs bracketed, the
  // default's level 1/2 and 1/2 on its two runs: sum a^2 + 1/m = 0.5 + 0.5 = 1, where a third
  // candidate run leans on one default run alone: 1 + 1/3.
  d.comparison.runs.push_back({RunRole::kCandidate, 0, 2, 10, 99.0, false});
  EXPECT_EQ(RemeasureOrder(d).front(), RunRole::kDefault);
  // D C C D -> C: a third default run after the last would carry no weight (1 again); a third
  // candidate run leaves a = (1/3, 2/3): 1/9 + 4/9 + 1/3 = 0.889.
  d.comparison.runs.push_back({RunRole::kDefault, 0, 3, 10, 100.0, false});
  EXPECT_EQ(RemeasureOrder(d), (std::vector<RunRole>{RunRole::kCandidate, RunRole::kDefault}));
  // An outlier of the default is no run to weigh: D C C D* is D C C, and the default again.
  d.comparison.runs.back().outlier = true;
  EXPECT_EQ(RemeasureOrder(d).front(), RunRole::kDefault);
  d.comparison.runs.back().outlier = false;
  // D C C D D -> C: a = (1/3, 1/3, 1/3), 1/3 + 1/3, against 1 for a fourth default run.
  d.comparison.runs.push_back({RunRole::kDefault, 0, 4, 10, 100.0, false});
  EXPECT_EQ(RemeasureOrder(d).front(), RunRole::kCandidate);
  // D C D C -> D: it brackets the last candidate run and spreads the default's level over
  // three runs, a = (1/4, 1/2, 1/4): 0.375 + 1/2 = 0.875, against a third candidate run's
  // a = (1/6, 5/6): 0.722 + 1/3 = 1.056. Then D C D C D -> C: a = (1/6, 1/3, 1/2), 0.722,
  // against 0.875 for a fourth default run.
  d.comparison.runs = {{RunRole::kDefault, 0, 0, 10, 100.0, false},
                       {RunRole::kCandidate, 0, 1, 10, 80.0, false},
                       {RunRole::kDefault, 0, 2, 10, 100.0, false},
                       {RunRole::kCandidate, 0, 3, 10, 80.0, false}};
  EXPECT_EQ(RemeasureOrder(d), (std::vector<RunRole>{RunRole::kDefault, RunRole::kCandidate}));
  d.comparison.runs.push_back({RunRole::kDefault, 0, 4, 10, 100.0, false});
  EXPECT_EQ(RemeasureOrder(d), (std::vector<RunRole>{RunRole::kCandidate, RunRole::kDefault}));
  // D C D (the search's first round around a decisive pick): the candidate, which has one run.
  d.comparison.runs = {{RunRole::kDefault, 0, 0, 10, 100.0, false},
                       {RunRole::kCandidate, 0, 1, 10, 80.0, false},
                       {RunRole::kDefault, 0, 2, 10, 100.0, false}};
  EXPECT_EQ(RemeasureOrder(d), (std::vector<RunRole>{RunRole::kCandidate, RunRole::kDefault}));
}

// A "faster" verdict is re-checked with the rest of the budget: one run at a time, in the
// alternating pattern (after D C D C the default, after D C C D the candidate); any other
// verdict asks for no confirmation.
TEST(SearchPolicyTest, AFasterVerdictIsConfirmedInTheAlternatingPattern) {
  Decision d;
  d.verdict = Verdict::kBeatsDefault;
  d.comparison.runs = {{RunRole::kDefault, 0, 0, 10, 100.0, false},
                       {RunRole::kCandidate, 0, 1, 10, 80.0, false},
                       {RunRole::kDefault, 0, 2, 10, 100.0, false},
                       {RunRole::kCandidate, 0, 3, 10, 80.0, false}};
  EXPECT_EQ(ConfirmOrder(d), RunRole::kDefault);
  d.comparison.runs = {{RunRole::kDefault, 0, 0, 10, 100.0, false},
                       {RunRole::kCandidate, 0, 1, 10, 80.0, false},
                       {RunRole::kCandidate, 0, 2, 10, 80.0, false},
                       {RunRole::kDefault, 0, 3, 10, 100.0, false}};
  EXPECT_EQ(ConfirmOrder(d), RunRole::kCandidate);
  for (Verdict v : {Verdict::kWithinNoise, Verdict::kRunToRunUnknown, Verdict::kRunsDisagree,
                    Verdict::kIsDefault, Verdict::kBestNotMeasured}) {
    d.verdict = v;
    EXPECT_FALSE(ConfirmOrder(d).has_value()) << VerdictText(v);
  }
}

// A lead not yet shown is pursued while the model's pick is within one run's run-to-run noise
// of the candidate: the candidate at 100 (score), the noise 5.8%, so a pick at 105 does not
// take the run and one at 107 does; a lead under 5%, a shown verdict (ConfirmOrder's) or a
// verdict that does not hang on noise pursue nothing; without a measured run-to-run noise the
// prior's 5% decides.
TEST(SearchPolicyTest, ALeadThePickCannotOvertakeIsPursuedInTheAlternatingPattern) {
  Decision d;
  d.verdict = Verdict::kWithinNoise;
  d.has_speedup = true;
  d.speedup = {1.10, 0.98, 1.23, 0.95};
  d.noise.across_cv = 0.058;
  d.comparison.runs = {{RunRole::kDefault, 0, 0, 10, 100.0, false},
                       {RunRole::kCandidate, 0, 1, 10, 91.0, false},
                       {RunRole::kDefault, 0, 2, 10, 100.0, false},
                       {RunRole::kCandidate, 0, 3, 10, 91.0, false}};
  Prediction candidate;
  candidate.mean = 100.0;
  Prediction pick;
  pick.mean = 105.0;
  EXPECT_EQ(PursueLeadOrder(d, candidate, pick), RunRole::kDefault);  // after D C D C
  d.comparison.runs = {{RunRole::kDefault, 0, 0, 10, 100.0, false},
                       {RunRole::kCandidate, 0, 1, 10, 91.0, false},
                       {RunRole::kCandidate, 0, 2, 10, 91.0, false},
                       {RunRole::kDefault, 0, 3, 10, 100.0, false}};
  EXPECT_EQ(PursueLeadOrder(d, candidate, pick), RunRole::kCandidate);  // after D C C D
  d.comparison.runs[1].outlier = true;
  d.comparison.remeasure = Remeasure::kCandidate;
  EXPECT_EQ(PursueLeadOrder(d, candidate, pick), RunRole::kCandidate);
  d.comparison.runs[3].outlier = true;
  d.comparison.runs[1].outlier = false;
  d.comparison.remeasure = Remeasure::kDefault;
  EXPECT_EQ(PursueLeadOrder(d, candidate, pick), RunRole::kDefault);
  pick.mean = 107.0;  // 7% over the candidate: beyond one run's noise, the pick is run
  EXPECT_FALSE(PursueLeadOrder(d, candidate, pick).has_value());
  pick.mean = 105.0;
  d.speedup = {1.04, 0.95, 1.14, 0.95};  // a lead under 5%
  EXPECT_FALSE(PursueLeadOrder(d, candidate, pick).has_value());
  d.speedup = {1.20, 1.05, 1.37, 0.95};  // shown: ConfirmOrder's, not a lead's
  d.verdict = Verdict::kBeatsDefault;
  EXPECT_FALSE(PursueLeadOrder(d, candidate, pick).has_value());
  d.verdict = Verdict::kWithinNoise;
  d.speedup = {1.10, 0.98, 1.23, 0.95};
  d.has_speedup = false;  // no speedup measured: nothing hangs on noise
  EXPECT_FALSE(PursueLeadOrder(d, candidate, pick).has_value());
  d.has_speedup = true;
  d.noise.across_cv = 0.0;  // unknown: the prior's 5%
  pick.mean = 104.9;
  EXPECT_TRUE(PursueLeadOrder(d, candidate, pick).has_value());
  pick.mean = 105.1;
  EXPECT_FALSE(PursueLeadOrder(d, candidate, pick).has_value());
}

// The real MLP's search (bench/horovod): D 633.5, C 434.1, D 562.6 ms, the default's two runs
// 12% apart, its budget one run from spent. A third default run could not decide (the
// candidate has one run, and a verdict needs two); the candidate's second can (the cautious
// reading, tuner/run_comparison.h), so the candidate goes next, whether the cautious reading
// already clears 1 at the runs' own noise (as here: the search's noise was the default pair's
// with the prior, 6%) or not yet (at 7.9% over 4 degrees: the pair asks for a re-measure,
// which waits). Mirrored: two disagreeing candidate runs and one of the default ask for the
// default's second.
TEST(SearchPolicyTest, ADisagreeingPairWaitsForTheOtherSidesSecondRun) {
  const RealRuns def = {RealRun({633.5}, 0), RealRun({562.6}, 2)};
  const RealRuns once = {RealRun({434.1}, 1)};
  const Decision d = Decide(Setting(1, 9, 1, 1), Setting(0, 10, 1, 2), once, def, {});
  EXPECT_EQ(d.comparison.remeasure, Remeasure::kNone);
  EXPECT_TRUE(d.comparison.disagreement_set_aside);
  EXPECT_EQ(d.verdict, Verdict::kRunToRunUnknown);
  EXPECT_EQ(RemeasureOrder(d).front(), RunRole::kCandidate);
  StopRule rule;
  rule.max_measured_samples = 4;
  EXPECT_TRUE(RemeasureToDecide(rule, 3, d, Setting(1, 9, 1, 1), Setting(0, 10, 1, 2)));
  StepNoise wider;
  wider.across_cv = 0.079;
  wider.across_degrees = 4;
  const Decision pending = Decide(Setting(1, 9, 1, 1), Setting(0, 10, 1, 2), once, def, wider);
  EXPECT_EQ(pending.comparison.remeasure, Remeasure::kDefault);
  EXPECT_EQ(pending.verdict, Verdict::kRunsDisagree);
  EXPECT_EQ(RemeasureOrder(pending), std::vector<RunRole>{RunRole::kCandidate});
  EXPECT_TRUE(RemeasureToDecide(rule, 3, pending, Setting(1, 9, 1, 1), Setting(0, 10, 1, 2)));
  const Decision decided =
      Decide(Setting(1, 9, 1, 2), Setting(0, 10, 1, 2),
             {RealRun({434.1}, 1), RealRun({445.0}, 3)}, def, {});
  EXPECT_EQ(decided.verdict, Verdict::kBeatsDefault);
  const Decision mirrored = Decide(Setting(1, 9, 1, 2), Setting(0, 10, 1, 1),
                                   {RealRun({80.0}, 1), RealRun({95.0}, 2)},
                                   {RealRun({100.0}, 0)}, {});
  EXPECT_EQ(mirrored.comparison.remeasure, Remeasure::kCandidate);
  EXPECT_EQ(RemeasureOrder(mirrored), std::vector<RunRole>{RunRole::kDefault});
}

// Of three runs the MAD is the smaller distance of the other two to the middle one: two runs
// that agree to 0.1% do not make a third 4% off an outlier (the floor, kMinRunSpread), while a
// third 10% off still is one.
TEST(SearchPolicyTest, TwoRunsThatAgreeByChanceDoNotMakeAnOrdinaryThirdAnOutlier) {
  const RealRuns def = {RealRun(Alternating(100, 1, 10), 0), RealRun(Alternating(100, 1, 10), 2),
                        RealRun(Alternating(100, 1, 10), 4)};
  const RealRuns ordinary = {RealRun(Alternating(80, 1, 10), 1),
                             RealRun(Alternating(80.08, 1, 10), 3),
                             RealRun(Alternating(83.2, 1, 10), 5)};
  Decision d = Decide(Setting(1, 9, 1, 3), Setting(0, 10, 1, 3), ordinary, def, {});
  EXPECT_EQ(d.comparison.remeasure, Remeasure::kNone);
  EXPECT_EQ(d.verdict, Verdict::kBeatsDefault);
  const RealRuns off = {RealRun(Alternating(80, 1, 10), 1), RealRun(Alternating(80.08, 1, 10), 3),
                        RealRun(Alternating(88, 1, 10), 5)};
  d = Decide(Setting(1, 9, 1, 3), Setting(0, 10, 1, 3), off, def, {});
  EXPECT_EQ(d.comparison.remeasure, Remeasure::kCandidate);
  EXPECT_EQ(d.verdict, Verdict::kRunsDisagree);
}

TEST(SearchPolicyTest, VerdictNamesRoundTrip) {
  for (Verdict v : {Verdict::kIsDefault, Verdict::kBestNotMeasured, Verdict::kDefaultNotMeasured,
                    Verdict::kNoStepTimes, Verdict::kRunToRunUnknown, Verdict::kWithinNoise,
                    Verdict::kRunsDisagree, Verdict::kBeatsDefault}) {
    Verdict back = Verdict::kIsDefault;
    ASSERT_TRUE(ParseVerdictName(VerdictName(v), &back)) << VerdictName(v);
    EXPECT_EQ(back, v);
  }
  EXPECT_STREQ(VerdictName(Verdict::kBeatsDefault), "beats_default");
  Verdict v;
  EXPECT_FALSE(ParseVerdictName("yes", &v));
}

TEST(SearchPolicyTest, OriginAndStopNamesAreTheTextsTheOutputsCarry) {
  EXPECT_STREQ(SuggestionOriginName(SuggestionOrigin::kInitialDesign), "initial design");
  EXPECT_STREQ(SuggestionOriginName(SuggestionOrigin::kExpectedImprovement),
               "expected improvement");
  EXPECT_STREQ(SuggestionOriginName(SuggestionOrigin::kSimulatedOptimum), "simulated optimum");
  EXPECT_STREQ(SuggestionOriginName(SuggestionOrigin::kDefaultNeverMeasured),
               "default, never measured");
  EXPECT_STREQ(SuggestionOriginName(SuggestionOrigin::kRemeasure),
               "re-measure: the verdict hangs on noise");
  EXPECT_STREQ(SuggestionOriginName(SuggestionOrigin::kConfirm),
               "confirm: a faster verdict re-checked with the rest of the budget");
  EXPECT_STREQ(SuggestionOriginName(SuggestionOrigin::kPursueLead),
               "pursue: the candidate leads the default, and the model's pick is within noise of "
               "it");
  EXPECT_STREQ(StopReasonName(StopReason::kBudgetSpent), "budget spent");
  EXPECT_STREQ(StopReasonName(StopReason::kExpectedImprovementBelowThreshold),
               "expected improvement below threshold");
}

}  // namespace
}  // namespace autotune::tuner
