// The search's decisions, as plain functions of what the model says: when to stop measuring,
// the mean of a setting's repeated measurements, which setting is written as the best, and
// whether it is shown to beat the default. tuner/search_loop.h applies them.
#pragma once

#include <vector>

#include "tuner/bayes_search.h"

namespace autotune::tuner {

// A gap between two posteriors counts as beyond noise when it exceeds this many standard
// deviations of their difference (the two taken as independent).
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

// The setting to write as the best among `settings` (each observed setting once, in
// observation order): the measured one with the highest posterior mean, unless one not
// measured is predicted higher beyond noise (then that one, a prediction); with nothing
// measured, the highest prediction. Ties go to the first. REQUIRES: !settings.empty().
const Reported& ChooseBest(const std::vector<Reported>& settings);

// Whether the best setting is shown to beat the default, or what evidence is missing.
enum class Verdict {
  kIsDefault,           // the best setting is the default
  kBestNotMeasured,     // the best is a prediction, never measured
  kDefaultNotMeasured,  // the default was never measured
  kWithinUncertainty,   // both measured, the gap is not beyond noise
  kBeatsDefault,        // both measured, the gap is beyond noise
};
// "is the default", "not shown: predicted, not measured yet", "not shown: the default was
// never measured", "not shown: within the model's uncertainty", "yes".
const char* VerdictText(Verdict verdict);
// The verdict on `best` against `default_setting`, in the order of the enum: a setting beats
// the default only when both were measured and BeyondNoise(best, default).
Verdict BeatsDefault(const Reported& best, const Reported& default_setting);

}  // namespace autotune::tuner
