#include "tuner/search_policy.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

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

namespace {

struct VerdictRow {
  Verdict verdict;
  const char* name;
  const char* text;
};
constexpr VerdictRow kVerdicts[] = {
    {Verdict::kIsDefault, "is_default", "is the default"},
    {Verdict::kBestNotMeasured, "best_not_measured", "not shown: predicted, not measured yet"},
    {Verdict::kDefaultNotMeasured, "default_not_measured",
     "not shown: the default was never measured"},
    {Verdict::kNoStepTimes, "no_step_times", "not shown: no step times measured"},
    {Verdict::kRunToRunUnknown, "run_to_run_unknown",
     "not shown: run-to-run noise not measured yet (it takes two runs of the default and two "
     "of the candidate: one run of either can be off as a whole)"},
    {Verdict::kWithinNoise, "within_noise", "not shown: within noise"},
    {Verdict::kRunsDisagree, "runs_disagree", "not shown: a run disagrees with its repeats"},
    {Verdict::kBeatsDefault, "beats_default", "yes"},
};

bool HasSteps(const RealRuns& runs) {
  for (const RealRun& r : runs) {
    if (!r.step_ms.empty()) return true;
  }
  return false;
}

// The role of the next run: the one that narrows the interval more (tuner/run_comparison.h's
// RatioVarianceFactor over the kept runs, the next one run last): after D C D C the default,
// which brackets the last candidate run and spreads the weight of the default's level over
// three runs (0.875 against 1.056 for a third candidate run). Where both narrow it alike
// (D C, D D C), the pattern: the side with fewer runs; with as many, after two runs of one
// setting the other, after a change the setting just run again. Without runs: the candidate.
RunRole NextInPattern(const RunComparison& comparison) {
  const std::vector<ComparedRun>& runs = comparison.runs;  // in sequence order
  const size_t n = runs.size();
  if (n == 0) return RunRole::kCandidate;
  std::vector<RunRole> kept;
  for (const ComparedRun& r : runs) {
    if (!r.outlier) kept.push_back(r.role);
  }
  auto factor_after = [&kept](RunRole next) {
    std::vector<RunRole> roles = kept;
    roles.push_back(next);
    return RatioVarianceFactor(roles);
  };
  const double after_default = factor_after(RunRole::kDefault);
  const double after_candidate = factor_after(RunRole::kCandidate);
  constexpr double kAlike = 1e-9;
  if (after_default < after_candidate - kAlike) return RunRole::kDefault;
  if (after_candidate < after_default - kAlike) return RunRole::kCandidate;
  const size_t defaults = static_cast<size_t>(std::count_if(
      runs.begin(), runs.end(), [](const ComparedRun& r) { return r.role == RunRole::kDefault; }));
  const size_t candidates = n - defaults;
  if (defaults != candidates) return defaults < candidates ? RunRole::kDefault : RunRole::kCandidate;
  const RunRole last = runs[n - 1].role;
  const RunRole other = last == RunRole::kDefault ? RunRole::kCandidate : RunRole::kDefault;
  if (n >= 2 && runs[n - 2].role == last) return other;
  return last;
}

}  // namespace

const char* VerdictText(Verdict verdict) {
  for (const VerdictRow& row : kVerdicts) {
    if (row.verdict == verdict) return row.text;
  }
  return "unknown";
}

const char* VerdictName(Verdict verdict) {
  for (const VerdictRow& row : kVerdicts) {
    if (row.verdict == verdict) return row.name;
  }
  return "unknown";
}

bool ParseVerdictName(const std::string& name, Verdict* verdict) {
  for (const VerdictRow& row : kVerdicts) {
    if (name == row.name) {
      *verdict = row.verdict;
      return true;
    }
  }
  return false;
}

Decision Decide(const Reported& candidate, const Reported& default_setting,
                const RealRuns& candidate_runs, const RealRuns& default_runs,
                const StepNoise& noise, double confidence) {
  Decision decision;
  decision.noise = noise;
  if (candidate.point == default_setting.point) {
    decision.verdict = Verdict::kIsDefault;
  } else if (candidate.measured.count == 0) {
    decision.verdict = Verdict::kBestNotMeasured;
  } else if (default_setting.measured.count == 0) {
    decision.verdict = Verdict::kDefaultNotMeasured;
  } else if (!HasSteps(candidate_runs) || !HasSteps(default_runs)) {
    decision.verdict = Verdict::kNoStepTimes;
  } else {
    CompareOptions options;
    options.across_cv = noise.across_cv;
    options.across_degrees = noise.across_degrees;
    options.confidence = confidence;
    decision.comparison = CompareRuns(default_runs, candidate_runs, options);
    const RunComparison& c = decision.comparison;
    decision.has_speedup = c.valid;
    decision.speedup = c.speedup;
    if (!c.valid || !c.speedup.Faster()) {
      decision.verdict = c.remeasure != Remeasure::kNone ? Verdict::kRunsDisagree
                                                         : Verdict::kWithinNoise;
      if (!c.valid) decision.has_speedup = true;  // the re-measure may settle it
    } else if (c.remeasure != Remeasure::kNone) {
      decision.verdict = Verdict::kRunsDisagree;
    } else if (!c.run_to_run_known) {
      decision.verdict = Verdict::kRunToRunUnknown;
    } else {
      decision.verdict = Verdict::kBeatsDefault;
    }
  }
  return decision;
}

int MostConvincinglyFaster(const std::vector<Reported>& measured,
                           const std::vector<RealRuns>& measured_runs,
                           const Reported& default_setting, const RealRuns& default_runs,
                           const StepNoise& noise, Decision* decision) {
  if (measured.empty()) return -1;
  const double confidence = 1.0 - 0.05 / static_cast<double>(measured.size());
  int chosen = -1;
  for (size_t i = 0; i < measured.size(); ++i) {
    const Decision d = Decide(measured[i], default_setting, measured_runs[i], default_runs,
                              noise, confidence);
    if (d.verdict != Verdict::kBeatsDefault) continue;
    if (chosen < 0 || d.speedup.low > decision->speedup.low) {
      chosen = static_cast<int>(i);
      *decision = d;
    }
  }
  return chosen;
}

std::vector<RunRole> RemeasureOrder(const Decision& decision) {
  const std::vector<ComparedRun>& runs = decision.comparison.runs;
  const std::ptrdiff_t defaults = std::count_if(
      runs.begin(), runs.end(), [](const ComparedRun& r) { return r.role == RunRole::kDefault; });
  const std::ptrdiff_t candidates = static_cast<std::ptrdiff_t>(runs.size()) - defaults;
  // Two runs of one side that disagree while the other side ran once: a verdict needs the
  // other side's second run whichever of the two is off (rule 5), and with it rule 2's cautious
  // reading may decide without a third run of the pair (tuner/run_comparison.h). So the side
  // that ran once goes first; the pair's third run waits for a verdict that still hangs on it.
  switch (decision.comparison.remeasure) {
    case Remeasure::kDefault:
      if (defaults == 2 && candidates == 1) return {RunRole::kCandidate};
      return {RunRole::kDefault};
    case Remeasure::kCandidate:
      if (candidates == 2 && defaults == 1) return {RunRole::kDefault};
      return {RunRole::kCandidate};
    case Remeasure::kNone:
      break;
  }
  // Nothing is called better before the default has two runs (tuner/run_comparison.h): while it
  // has one, it goes first, whatever the pattern (a budget that ends first spends nothing on
  // repeats of the candidate that cannot decide).
  const bool default_once = defaults < 2;
  const RunRole first =
      default_once ? RunRole::kDefault : NextInPattern(decision.comparison);
  return {first, first == RunRole::kDefault ? RunRole::kCandidate : RunRole::kDefault};
}

std::optional<RunRole> ConfirmOrder(const Decision& decision) {
  if (decision.verdict != Verdict::kBeatsDefault) return std::nullopt;
  return NextInPattern(decision.comparison);
}

std::optional<RunRole> PursueLeadOrder(const Decision& decision, const Prediction& candidate,
                                       const Prediction& next_pick) {
  if (!decision.HangsOnNoise() || decision.speedup.speedup < 1.0 + kLeadWorthPursuing) {
    return std::nullopt;
  }
  const double noise =
      decision.noise.across_cv > 0.0 ? decision.noise.across_cv : kRunToRunCvPrior;
  if (next_pick.mean - candidate.mean >= noise * std::fabs(candidate.mean)) return std::nullopt;
  return RemeasureOrder(decision).front();
}

bool RemeasureToDecide(const StopRule& rule, int measured, const Decision& decision,
                       const Reported& candidate, const Reported& default_setting) {
  // Runs without comparable step times (production ones once any exist, tools/search/setup.h)
  // decide nothing until the two have them: re-measure as for noise.
  const bool without_steps = decision.verdict == Verdict::kNoStepTimes;
  if (!(decision.HangsOnNoise() || without_steps) || BudgetSpent(rule, measured)) return false;
  // The repeat limit counts measured samples, and those without comparable steps (traced runs
  // once production ones exist) are no repeats of what decides: only the budget bounds these.
  if (without_steps) return true;
  const bool outlier = decision.comparison.remeasure != Remeasure::kNone;
  const int limit = kMaxRepeatsToDecide + (outlier ? 1 : 0);
  int fewest = limit;
  for (RunRole role : RemeasureOrder(decision)) {
    fewest = std::min(fewest, role == RunRole::kDefault ? default_setting.measured.count
                                                        : candidate.measured.count);
  }
  return fewest < limit;
}

}  // namespace autotune::tuner
