// The search's decisions, as plain functions: when to stop measuring, the mean of a setting's
// repeated measurements, which setting the model thinks best, and whether measurements show
// it beating the default (only measured step times decide that, never the model's
// predictions). tuner/search_loop.h applies them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tuner/bayes_search.h"
#include "tuner/run_comparison.h"
#include "tuner/step_statistics.h"

namespace autotune::tuner {

// A gap between two posteriors counts as beyond the model's uncertainty when it exceeds this
// many standard deviations of their difference (the two taken as independent). It ranks
// predictions (ChooseBest); it never decides a verdict against the default.
inline constexpr double kBeyondNoiseStddevs = 2.0;

// True when better.mean - worse.mean > kBeyondNoiseStddevs * sqrt(better.variance +
// worse.variance).
bool BeyondNoise(const Prediction& better, const Prediction& worse);

// True when `measured` measured samples spend the rule's budget (measured >= max).
bool BudgetSpent(const StopRule& rule, int measured);
// True when the expected-improvement stop applies to `next` at all: the rule has a positive
// ratio, at least max(1, min_measured_before_stop) measured samples exist, and next was picked
// by expected improvement (an initial-design or simulated-optimum pick has no EI to judge).
bool ImprovementStopApplies(const StopRule& rule, int measured, const Suggestion& next);
// True when next.expected_improvement < ratio * |incumbent_mean|: not worth measuring.
bool ImprovementTooSmall(const StopRule& rule, const Suggestion& next, double incumbent_mean);

// The repeated observations of one setting at one fidelity.
struct Repeats {
  int count = 0;
  double mean = 0.0;  // mean of their scores; 0 when count == 0
};
// The observations of `fidelity` at exactly `point`, and their mean score.
Repeats MeanOfRepeats(const std::vector<Observation>& observations, const Point& point,
                      Fidelity fidelity = Fidelity::kMeasured);

// One setting as a search reports it: the measured fidelity's posterior there and what was
// measured there.
struct Reported {
  Point point;
  Prediction prediction;
  Repeats measured;
};

// The measured setting among `settings` with the highest posterior mean (ties: the first);
// nullptr when none was measured.
const Reported* BestMeasured(const std::vector<Reported>& settings);

// The search's best guess among `settings` (each observed setting once, in observation order):
// the measured one with the highest posterior mean, unless one not measured is predicted
// higher beyond noise (then that one, a prediction); with nothing measured, the highest
// prediction. Ties go to the first. A guess only: what is written as the best is decided by
// Decide. REQUIRES: !settings.empty().
const Reported& ChooseBest(const std::vector<Reported>& settings);

// The setting judged against the default: `best` when it was measured; else the best measured
// setting (`best_measured`, nullptr when none) unless that is the default; else `best`.
const Reported& Candidate(const Reported& best, const Reported* best_measured,
                          const Point& default_point);

// Whether the candidate is shown, by measured step times, to beat the default, or what
// evidence is missing.
enum class Verdict {
  kIsDefault,           // the candidate is the default
  kBestNotMeasured,     // the candidate is a prediction, never measured
  kDefaultNotMeasured,  // the default was never measured
  kNoStepTimes,         // both measured, but the step times of one of them are not known
  kRunToRunUnknown,     // faster within their runs, but the default or the candidate ran
                        // once: a run off as a whole cannot be told from the setting
  kWithinNoise,         // the speedup interval does not exclude 1 from below
  kRunsDisagree,        // faster, but a run is an outlier among its setting's repeats (or two
                        // repeats disagree): a re-measure of that setting decides
  kBeatsDefault,        // the speedup interval's lower bound is above 1
};
// "is the default", "not shown: predicted, not measured yet", "not shown: the default was
// never measured", "not shown: no step times measured", "not shown: one run each, run-to-run
// noise not measured yet", "not shown: within noise", "not shown: a run disagrees with its
// repeats", "yes".
const char* VerdictText(Verdict verdict);
// A stable identifier of a verdict, as stored: "is_default", "best_not_measured",
// "default_not_measured", "no_step_times", "run_to_run_unknown", "within_noise",
// "runs_disagree", "beats_default".
const char* VerdictName(Verdict verdict);
// Inverse of VerdictName; false for any other text.
bool ParseVerdictName(const std::string& name, Verdict* verdict);

// The measured evidence on the candidate against the default.
struct Decision {
  Verdict verdict = Verdict::kIsDefault;
  bool has_speedup = false;
  SpeedupInterval speedup;  // of the candidate over the default; valid when has_speedup
  StepNoise noise;          // of the step times of every measured setting
  RunComparison comparison;  // the runs behind the speedup (tuner/run_comparison.h)
  // True when more real runs may settle the verdict: the speedup interval contains 1, the
  // run-to-run noise it needs is not measured yet, or a run disagrees with its repeats.
  bool HangsOnNoise() const {
    return has_speedup && (speedup.ContainsOne() || verdict == Verdict::kRunToRunUnknown ||
                           verdict == Verdict::kRunsDisagree);
  }
};

// THE rule deciding "better" (for search, search --live and record --autotune alike): the
// verdict on `candidate` against `default_setting`, checked in the order of the enum;
// predictions never enter it. With both measured and both with step times, the speedup is
// CompareRuns(default_runs, candidate_runs) (tuner/run_comparison.h: run medians, outlier
// runs left out, drift cancelled by comparing each candidate run with the default runs around
// it, a Student-t interval) with noise.across_cv (at noise.across_degrees) as the run-to-run
// noise of a run; the candidate beats the default only when the interval's lower bound exceeds
// 1, no run asks for a re-measure, and each side has two kept runs (one run of either can be
// off as a whole). `confidence`: the interval's two-sided level.
Decision Decide(const Reported& candidate, const Reported& default_setting,
                const RealRuns& candidate_runs, const RealRuns& default_runs,
                const StepNoise& noise, double confidence = 0.95);

// When the model's candidate is not shown to beat the default, a measured setting may still
// be: among `measured` (settings other than the default, each with its real runs), the one
// whose speedup interval over the default has the highest lower bound, each judged by Decide
// at confidence 1 - 0.05 / measured.size() (Bonferroni: m looks at the data do not add up to
// more false claims than one). Returns its index when it beats the default (and *decision),
// else -1.
int MostConvincinglyFaster(const std::vector<Reported>& measured,
                           const std::vector<RealRuns>& measured_runs,
                           const Reported& default_setting, const RealRuns& default_runs,
                           const StepNoise& noise, Decision* decision);

// A predicted gain over the default (score ratio - 1) below which the model's best pick is not
// worth a real run before the default has two (SearchLoop::Conclude): the run-to-run noise of a
// whole run of a real job before its repeats say (tuner/run_comparison.h).
inline constexpr double kPredictedGainWorthARun = kRunToRunCvPrior;
// The most a setting may be predicted slower than the default (its score's predicted mean below
// the default's by at most this fraction, however wide its standard deviation) and still be
// run as the uncertainty probe (SearchLoop::Conclude): a probe is measured for what it teaches
// the model, not at the cost of a run the model expects to be clearly harmful to the real job
// (issue 22: bench/horovod's held-out convnet, whose long cycles are 1.26-1.40x slower, had a
// probe of 0 MB / 19.6 ms predicted at 1.16x the step run and measured 1.19x; with the bound
// on mean + 2 sd, one of 0 MB / 14.4 ms predicted 25% lower but unsure ran at 1.18x). The
// run-to-run prior, on the prediction's mean.
inline constexpr double kProbePredictedSlowerAtMost = kRunToRunCvPrior;

// A predicted gain at or above which, with one run of the default and two or three real runs
// left, the model's pick runs around the default's second run (D C D, then the pick again: the
// fewest runs the rule can call it better with, tuner/run_comparison.h) in place of beside the
// probe (D C P D leaves the pick one run, whose interval at the prior noise spans about +-15%;
// D C P leaves the default one run, and the rule calls nothing better before it has two):
// three times the run-to-run prior. The probe waits for a larger budget.
inline constexpr double kPredictedGainDecisive = 3 * kRunToRunCvPrior;

// Real runs of each of the candidate and the default after which a verdict that still hangs
// on noise is taken as final (the difference, if any, is too small to matter); one more is
// allowed to re-measure an outlier.
inline constexpr int kMaxRepeatsToDecide = 3;
// True when the next measurements should repeat the candidate and/or the default rather than
// explore: the decision hangs on noise or lacks step times of one of them (kNoStepTimes: the
// runs that decide, production ones once any exist, are missing), the budget is not spent,
// and a setting RemeasureOrder names has fewer real runs than the limit above.
bool RemeasureToDecide(const StopRule& rule, int measured, const Decision& decision,
                       const Reported& candidate, const Reported& default_setting);
// Which settings to measure again, in order, when RemeasureToDecide: the side an outlier or
// a disagreeing pair asks for alone (but where a pair disagrees and the other side ran once,
// that side first: a verdict needs its second run whichever run of the pair is off); else
// both, the one whose next run narrows the speedup's interval more first
// (tuner/run_comparison.h's RatioVarianceFactor: D C D C -> D, D C C D -> C, D C D C D -> C),
// and where both narrow it alike the side with fewer runs, else D C C D (after two runs of
// one setting the other, after a change the one just run). Taken one at a
// time, as record --autotune does, the first of each answer. Every candidate run but the last
// then has default runs on both sides of it, where a linear drift cancels.
std::vector<RunRole> RemeasureOrder(const Decision& decision);

// A "faster" verdict holds the rest of the budget: while the candidate beats the default, the
// next real run repeats one of the two, in the alternating pattern, instead of exploring. The
// verdict is looked at after every round, so a first "faster" from a few runs can be a run
// that came out fast as a whole; more runs of the two settle it either way, where a run of
// another setting would widen the family it is judged in (MostConvincinglyFaster) or hand the
// model's candidate to a setting run once (bench/tuner: tuner.search_claims, a synthetic job
// whose truth is known). The role to measure next, or none when `decision` does not beat the
// default.
std::optional<RunRole> ConfirmOrder(const Decision& decision);

// A lead worth the rest of the budget: the candidate's measured speedup over the default (the
// interval's point) at which a verdict still hanging on noise is pursued rather than left for
// a pick the model cannot tell from the candidate (PursueLeadOrder): the run-to-run prior.
inline constexpr double kLeadWorthPursuing = kRunToRunCvPrior;
// A lead the model cannot overtake is pursued: while the candidate leads the default by
// kLeadWorthPursuing or more and its verdict hangs on noise, and the model's next pick
// (`next_pick`, the measured fidelity's posterior there) is predicted faster than the
// candidate's posterior (`candidate`) by less than one run's run-to-run noise (the decision's
// across_cv, else kRunToRunCvPrior), the next real run repeats the candidate or the default
// (RemeasureOrder's first: the side an outlier asks for, else the alternating pattern) instead
// of the pick. A pick within noise of the candidate, if it is faster at all, is faster by less
// than its own runs can show in what is left of a budget, and its runs split the evidence that
// would show the candidate (bench/ddp's mobilenet_v2 search, /tmp/ddp23: four runs of 2 MB
// buckets at 1.10x and two more of the same cap with a larger first bucket at 1.14x, neither
// shown, the default kept). The role to measure next, or none.
std::optional<RunRole> PursueLeadOrder(const Decision& decision, const Prediction& candidate,
                                       const Prediction& next_pick);

}  // namespace autotune::tuner
