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

const Reported* BestMeasured(const std::vector<Reported>& settings) {
  const Reported* best = nullptr;
  for (const Reported& r : settings) {
    if (r.measured.count > 0 && (best == nullptr || r.prediction.mean > best->prediction.mean)) {
      best = &r;
    }
  }
  return best;
}

const Reported& ChooseBest(const std::vector<Reported>& settings) {
  const Reported* best_measured = BestMeasured(settings);
  const Reported* best_predicted = nullptr;
  for (const Reported& r : settings) {
    if (r.measured.count > 0) continue;
    if (best_predicted == nullptr || r.prediction.mean > best_predicted->prediction.mean) {
      best_predicted = &r;
    }
  }
  if (best_measured == nullptr) return *best_predicted;
  if (best_predicted != nullptr &&
      BeyondNoise(best_predicted->prediction, best_measured->prediction)) {
    return *best_predicted;
  }
  return *best_measured;
}

const Reported& Candidate(const Reported& best, const Reported* best_measured,
                          const Point& default_point) {
  if (best.measured.count > 0) return best;
  if (best_measured != nullptr && best_measured->point != default_point) return *best_measured;
  return best;
}

const char* VerdictText(Verdict verdict) {
  switch (verdict) {
    case Verdict::kIsDefault:
      return "is the default";
    case Verdict::kBestNotMeasured:
      return "not shown: predicted, not measured yet";
    case Verdict::kDefaultNotMeasured:
      return "not shown: the default was never measured";
    case Verdict::kNoStepTimes:
      return "not shown: no step times measured";
    case Verdict::kRunToRunUnknown:
      return "not shown: one run each, run-to-run noise not measured yet";
    case Verdict::kWithinNoise:
      return "not shown: within noise";
    case Verdict::kBeatsDefault:
      return "yes";
  }
  return "unknown";
}

namespace {

bool HasSteps(const StepSamples& samples) {
  for (const std::vector<double>& s : samples) {
    if (!s.empty()) return true;
  }
  return false;
}

}  // namespace

Decision Decide(const Reported& candidate, const Reported& default_setting,
                const StepSamples& candidate_steps, const StepSamples& default_steps,
                const StepNoise& noise, double confidence) {
  Decision decision;
  decision.noise = noise;
  if (candidate.point == default_setting.point) {
    decision.verdict = Verdict::kIsDefault;
  } else if (candidate.measured.count == 0) {
    decision.verdict = Verdict::kBestNotMeasured;
  } else if (default_setting.measured.count == 0) {
    decision.verdict = Verdict::kDefaultNotMeasured;
  } else if (!HasSteps(candidate_steps) || !HasSteps(default_steps)) {
    decision.verdict = Verdict::kNoStepTimes;
  } else {
    BootstrapOptions options;
    options.across_cv = noise.across_cv;
    options.confidence = confidence;
    decision.speedup = BootstrapSpeedup(default_steps, candidate_steps, options);
    decision.has_speedup = true;
    const bool run_to_run_known =
        noise.across_cv > 0.0 || candidate_steps.size() >= 2 || default_steps.size() >= 2;
    decision.verdict = !decision.speedup.Faster() ? Verdict::kWithinNoise
                       : run_to_run_known         ? Verdict::kBeatsDefault
                                                  : Verdict::kRunToRunUnknown;
  }
  return decision;
}

int MostConvincinglyFaster(const std::vector<Reported>& measured,
                           const std::vector<StepSamples>& measured_steps,
                           const Reported& default_setting, const StepSamples& default_steps,
                           const StepNoise& noise, Decision* decision) {
  if (measured.empty()) return -1;
  const double confidence = 1.0 - 0.05 / static_cast<double>(measured.size());
  int chosen = -1;
  for (size_t i = 0; i < measured.size(); ++i) {
    const Decision d = Decide(measured[i], default_setting, measured_steps[i], default_steps,
                              noise, confidence);
    if (d.verdict != Verdict::kBeatsDefault) continue;
    if (chosen < 0 || d.speedup.low > decision->speedup.low) {
      chosen = static_cast<int>(i);
      *decision = d;
    }
  }
  return chosen;
}

bool RemeasureToDecide(const StopRule& rule, int measured, const Decision& decision,
                       const Reported& candidate, const Reported& default_setting) {
  return decision.HangsOnNoise() && !BudgetSpent(rule, measured) &&
         std::min(candidate.measured.count, default_setting.measured.count) <
             kMaxRepeatsToDecide;
}

}  // namespace autotune::tuner
