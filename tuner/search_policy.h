// The search's decisions, as plain functions: when to stop measuring, the mean of a setting's
// repeated measurements, which setting the model thinks best, and whether measurements show
// it beating the default (only measured step times decide that, never the model's
// predictions). tuner/search_loop.h applies them.
#pragma once

#include <vector>

#include "tuner/bayes_search.h"
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
  kRunToRunUnknown,     // faster within their runs, but each was run once and no repeats
                        // anywhere measured how much a whole run varies
  kWithinNoise,         // the speedup interval does not exclude 1 from below
  kBeatsDefault,        // the speedup interval's lower bound is above 1
};
// "is the default", "not shown: predicted, not measured yet", "not shown: the default was
// never measured", "not shown: no step times measured", "not shown: one run each, run-to-run
// noise not measured yet", "not shown: within noise", "yes".
const char* VerdictText(Verdict verdict);

// The measured evidence on the candidate against the default.
struct Decision {
  Verdict verdict = Verdict::kIsDefault;
  bool has_speedup = false;
  SpeedupInterval speedup;  // of the candidate over the default; valid when has_speedup
  StepNoise noise;          // of the step times of every measured setting
  // True when repeats may settle the verdict: the speedup interval contains 1, or the run-to-
  // run noise it needs is not measured yet.
  bool HangsOnNoise() const {
    return has_speedup && (speedup.ContainsOne() || verdict == Verdict::kRunToRunUnknown);
  }
};

// The verdict on `candidate` against `default_setting`, checked in the order of the enum;
// predictions never enter it. With both measured and both step series known, the speedup is
// BootstrapSpeedup(default_steps, candidate_steps) with noise.across_cv applied to a side of
// one sample, and the candidate beats the default only when its lower bound exceeds 1 and the
// run-to-run noise is measured (noise.across_cv > 0, or either side has repeats): steps of one
// run each show only step-to-step noise, and a whole run can be off by more (real Horovod:
// 1.22x from one run each, 1.09x over three alternating runs).
// `confidence` is the two-sided level of the interval.
Decision Decide(const Reported& candidate, const Reported& default_setting,
                const StepSamples& candidate_steps, const StepSamples& default_steps,
                const StepNoise& noise, double confidence = 0.95);

// When the model's candidate is not shown to beat the default, a measured setting may still
// be: among `measured` (settings other than the default, each with its step samples), the one
// whose speedup interval over the default has the highest lower bound, each judged by Decide
// at confidence 1 - 0.05 / measured.size() (Bonferroni: m looks at the data do not add up to
// more false claims than one). Returns its index when it beats the default (and *decision),
// else -1.
int MostConvincinglyFaster(const std::vector<Reported>& measured,
                           const std::vector<StepSamples>& measured_steps,
                           const Reported& default_setting, const StepSamples& default_steps,
                           const StepNoise& noise, Decision* decision);

// Repeats of each of the candidate and the default after which a verdict that still hangs on
// noise is taken as final (the difference, if any, is too small to matter).
inline constexpr int kMaxRepeatsToDecide = 3;
// True when the next measurements should repeat the candidate and the default rather than
// explore: the decision hangs on noise, the budget is not spent, and one of the two has
// fewer than kMaxRepeatsToDecide measured samples.
bool RemeasureToDecide(const StopRule& rule, int measured, const Decision& decision,
                       const Reported& candidate, const Reported& default_setting);

}  // namespace autotune::tuner
