#include "tuner/search_policy.h"

#include <algorithm>
#include <cmath>

namespace autotune::tuner {

bool BeyondNoise(const Prediction& better, const Prediction& worse) {
  const double gap = better.mean - worse.mean;
  return gap > kBeyondNoiseStddevs * std::sqrt(better.variance + worse.variance);
}

bool BudgetSpent(const StopRule& rule, int measured) {
  return measured >= rule.max_measured_samples;
}

bool ImprovementStopApplies(const StopRule& rule, int measured, const Suggestion& next) {
  return rule.min_expected_improvement_ratio > 0.0 &&
         measured >= std::max(1, rule.min_measured_before_stop) &&
         next.origin == SuggestionOrigin::kExpectedImprovement;
}

bool ImprovementTooSmall(const StopRule& rule, const Suggestion& next, double incumbent_mean) {
  return next.expected_improvement <
         rule.min_expected_improvement_ratio * std::fabs(incumbent_mean);
}

Repeats MeanOfRepeats(const std::vector<Observation>& observations, const Point& point,
                      Fidelity fidelity) {
  Repeats repeats;
  for (const Observation& o : observations) {
    if (o.fidelity != fidelity || o.point != point) continue;
    repeats.mean += o.score;
    ++repeats.count;
  }
  if (repeats.count > 0) repeats.mean /= repeats.count;
  return repeats;
}

const Reported& ChooseBest(const std::vector<Reported>& settings) {
  const Reported* best_measured = nullptr;
  const Reported* best_predicted = nullptr;
  for (const Reported& r : settings) {
    const Reported*& slot = r.measured.count > 0 ? best_measured : best_predicted;
    if (slot == nullptr || r.prediction.mean > slot->prediction.mean) slot = &r;
  }
  if (best_measured == nullptr) return *best_predicted;
  if (best_predicted != nullptr &&
      BeyondNoise(best_predicted->prediction, best_measured->prediction)) {
    return *best_predicted;
  }
  return *best_measured;
}

const char* VerdictText(Verdict verdict) {
  switch (verdict) {
    case Verdict::kIsDefault:
      return "is the default";
    case Verdict::kBestNotMeasured:
      return "not shown: predicted, not measured yet";
    case Verdict::kDefaultNotMeasured:
      return "not shown: the default was never measured";
    case Verdict::kWithinUncertainty:
      return "not shown: within the model's uncertainty";
    case Verdict::kBeatsDefault:
      return "yes";
  }
  return "unknown";
}

Verdict BeatsDefault(const Reported& best, const Reported& default_setting) {
  if (best.point == default_setting.point) return Verdict::kIsDefault;
  if (best.measured.count == 0) return Verdict::kBestNotMeasured;
  if (default_setting.measured.count == 0) return Verdict::kDefaultNotMeasured;
  return BeyondNoise(best.prediction, default_setting.prediction) ? Verdict::kBeatsDefault
                                                                  : Verdict::kWithinUncertainty;
}

}  // namespace autotune::tuner
