#include "tuner/search_loop.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <string>
#include <utility>

namespace autotune::tuner {

SearchLoop::SearchLoop(Space space, SearchOptions options)
    : search_(std::move(space), options), stop_(options.stop) {}

Status SearchLoop::Observe(const Observation& observation) {
  AUTOTUNE_RETURN_IF_ERROR(search_.Observe(observation));
  if (observer_) observer_(observation);
  return Status::Ok();
}

Status SearchLoop::Evaluate(Fidelity fidelity, const Objective& objective, const Point& point) {
  StatusOr<double> score = objective(point);
  if (!score.ok()) {
    return score.status().WithPrefix(std::string(FidelityName(fidelity)) + " objective at " +
                                     space().Describe(point));
  }
  return Observe({point, fidelity, *score});
}

Status SearchLoop::SimulatePrior(const std::vector<Point>& nested, int budget,
                                 const Objective& simulated,
                                 const std::function<void(int picked)>& picked) {
  for (const Point& point : nested) {
    if (search_.HasObservation(point, Fidelity::kSimulated)) continue;
    AUTOTUNE_RETURN_IF_ERROR(Evaluate(Fidelity::kSimulated, simulated, point));
  }
  for (int i = 0; i < budget; ++i) {
    StatusOr<Suggestion> next = search_.Suggest(Fidelity::kSimulated);
    if (!next.ok()) return next.status();
    AUTOTUNE_RETURN_IF_ERROR(Evaluate(Fidelity::kSimulated, simulated, next->point));
    if (picked) picked(i + 1);
  }
  return Status::Ok();
}

StatusOr<SearchLoop::Next> SearchLoop::NextMeasured() {
  Next next;
  if (BudgetSpent(stop_, measured())) {
    next.stop = StopReason::kBudgetSpent;
    return next;
  }
  StatusOr<Suggestion> suggestion = search_.Suggest(Fidelity::kMeasured);
  if (!suggestion.ok()) return suggestion.status();
  if (ImprovementStopApplies(stop_, measured(), *suggestion)) {
    StatusOr<tuner::Incumbent> incumbent = search_.Best(Fidelity::kMeasured);
    if (!incumbent.ok()) return incumbent.status();
    if (ImprovementTooSmall(stop_, *suggestion, incumbent->prediction.mean)) {
      next.stop = StopReason::kExpectedImprovementBelowThreshold;
      return next;
    }
  }
  next.suggestion = *suggestion;
  return next;
}

StatusOr<Reported> SearchLoop::Report(const Point& point) {
  StatusOr<Prediction> prediction = search_.Predict(Fidelity::kMeasured, point);
  if (!prediction.ok()) return prediction.status();
  return Reported{point, *prediction, MeanOfRepeats(search_.observations(), point)};
}

StatusOr<Reported> SearchLoop::Incumbent() {
  StatusOr<tuner::Incumbent> best = search_.Best(Fidelity::kMeasured);
  if (!best.ok()) return best.status();
  return Reported{best->point, best->prediction,
                  MeanOfRepeats(search_.observations(), best->point)};
}

StatusOr<std::vector<Reported>> SearchLoop::ReportObserved() {
  std::vector<Reported> reported;
  std::set<Point> seen;
  for (const Observation& o : search_.observations()) {
    if (!seen.insert(o.point).second) continue;
    StatusOr<Reported> r = Report(o.point);
    if (!r.ok()) return r.status();
    reported.push_back(*r);
  }
  return reported;
}

StatusOr<SearchLoop::Conclusion> SearchLoop::Conclude(int propose, const Point& default_point,
                                                      const StepTimes& steps) {
  StatusOr<Conclusion> conclusion = Judge(default_point, steps);
  if (!conclusion.ok()) return conclusion.status();
  AUTOTUNE_RETURN_IF_ERROR(Propose(propose, &*conclusion));
  return conclusion;
}

StatusOr<SearchLoop::Conclusion> SearchLoop::Judge(const Point& default_point,
                                                   const StepTimes& steps) {
  StatusOr<std::vector<Reported>> observed = ReportObserved();
  if (!observed.ok()) return observed.status();
  if (observed->empty()) return Status::InvalidArgument("no samples to conclude from");
  Conclusion conclusion;
  conclusion.best = ChooseBest(*observed);
  conclusion.candidate = Candidate(conclusion.best, BestMeasured(*observed), default_point);
  StatusOr<Reported> default_setting = Report(default_point);
  if (!default_setting.ok()) return default_setting.status();
  conclusion.default_setting = *default_setting;
  std::vector<StepSamples> every_setting;
  std::vector<RealRuns> every_setting_runs;
  for (const auto& [point, runs] : steps) {
    StepSamples samples;
    for (const RealRun& run : runs) samples.push_back(run.step_ms);
    every_setting.push_back(samples);
    every_setting_runs.push_back(runs);
  }
  auto steps_at = [&steps](const Point& point) {
    const auto it = steps.find(point);
    return it == steps.end() ? RealRuns{} : it->second;
  };
  StepNoise noise = MeasureNoise(every_setting);
  const RunToRunNoise run_to_run = RunToRun(every_setting_runs);  // of run medians, no outliers
  noise.across_cv = run_to_run.cv;
  noise.across_degrees = run_to_run.degrees;
  conclusion.decision =
      Decide(conclusion.candidate, conclusion.default_setting,
             steps_at(conclusion.candidate.point), steps_at(default_point), noise);
  if (conclusion.decision.verdict != Verdict::kBeatsDefault) {
    std::vector<Reported> measured;
    std::vector<RealRuns> measured_runs;
    for (const Reported& r : *observed) {
      if (r.point == default_point || r.measured.count == 0) continue;
      measured.push_back(r);
      measured_runs.push_back(steps_at(r.point));
    }
    Decision faster;
    const int i = MostConvincinglyFaster(measured, measured_runs, conclusion.default_setting,
                                         steps_at(default_point), noise, &faster);
    if (i >= 0) {
      conclusion.candidate = measured[i];
      conclusion.decision = faster;
    }
  }
  return conclusion;
}

StatusOr<Suggestion> SearchLoop::MostUncertain(const Point& best, const Point& default_point,
                                               double default_mean) {
  std::optional<Suggestion> most;
  std::set<Point> seen;
  for (const Observation& o : search_.observations()) {
    if (o.fidelity != Fidelity::kSimulated || o.point == best || o.point == default_point ||
        search_.HasObservation(o.point, Fidelity::kMeasured) || !seen.insert(o.point).second) {
      continue;
    }
    StatusOr<Prediction> p = search_.Predict(Fidelity::kMeasured, o.point);
    if (!p.ok()) return p.status();
    // A setting predicted clearly slower than the default is not run as a probe, however
    // unsure the prediction (the least-known settings are often the harmful ones).
    if (p->mean < default_mean - kProbePredictedSlowerAtMost * std::fabs(default_mean)) continue;
    if (!most || p->variance > most->prediction.variance) {
      most = Suggestion();
      most->point = o.point;
      most->prediction = *p;
      most->origin = SuggestionOrigin::kMostUncertain;
    }
  }
  if (!most) return Status::NotFound("no simulated setting left to probe");
  return *most;
}

Status SearchLoop::Propose(int propose, Conclusion* conclusion) {
  const Reported& def = conclusion->default_setting;
  std::vector<Suggestion>& proposals = conclusion->proposals;
  // --max-samples is never exceeded: what is left of the budget caps the proposals.
  const int left = std::max(0, stop_.max_measured_samples - measured());
  auto add = [&](const Suggestion& s) {
    if (static_cast<int>(proposals.size()) < left) proposals.push_back(s);
  };
  if (def.measured.count == 0) {  // named even when the budget is spent (then stopped)
    Suggestion s;
    s.point = def.point;
    s.prediction = def.prediction;
    s.origin = SuggestionOrigin::kDefaultNeverMeasured;
    proposals.push_back(s);
  }
  const int wanted = propose - static_cast<int>(proposals.size());
  if (BudgetSpent(stop_, measured())) {
    conclusion->stop = StopReason::kBudgetSpent;
    return Status::Ok();
  }
  auto repeat = [&](RunRole role, SuggestionOrigin origin) {
    const Reported& r = role == RunRole::kDefault ? def : conclusion->candidate;
    Suggestion s;
    s.point = r.point;
    s.prediction = r.prediction;
    s.origin = origin;
    add(s);
  };
  if (RemeasureToDecide(stop_, measured(), conclusion->decision, conclusion->candidate, def)) {
    for (RunRole role : RemeasureOrder(conclusion->decision)) {
      repeat(role, SuggestionOrigin::kRemeasure);
    }
    return Status::Ok();
  }
  if (const std::optional<RunRole> confirm = ConfirmOrder(conclusion->decision)) {
    repeat(*confirm, SuggestionOrigin::kConfirm);
    return Status::Ok();
  }
  // The first real runs beyond the default: the model's best and the setting it is least
  // sure of, so that two runs teach both where the gain is and where the model is blind.
  bool only_default_measured = true;
  for (const Observation& o : search_.observations()) {
    if (o.fidelity == Fidelity::kMeasured && o.point != def.point) only_default_measured = false;
  }
  const int batch_size = only_default_measured ? std::max(1, wanted) : wanted;
  if (batch_size <= 0) return Status::Ok();
  StatusOr<std::vector<Suggestion>> batch = search_.SuggestBatch(Fidelity::kMeasured, batch_size);
  if (!batch.ok()) return batch.status();
  const Suggestion& first = batch->front();
  if (const std::optional<RunRole> lead =
          PursueLeadOrder(conclusion->decision, conclusion->candidate.prediction,
                          first.prediction)) {
    repeat(*lead, SuggestionOrigin::kPursueLead);
    return Status::Ok();
  }
  if (ImprovementStopApplies(stop_, measured(), first)) {
    StatusOr<tuner::Incumbent> incumbent = search_.Best(Fidelity::kMeasured);
    if (!incumbent.ok()) return incumbent.status();
    if (ImprovementTooSmall(stop_, first, incumbent->prediction.mean)) {
      conclusion->stop = StopReason::kExpectedImprovementBelowThreshold;
      return Status::Ok();
    }
  }
  // A setting predicted slower than the default is not worth a real run of the job (only
  // the most uncertain probe below may be: it is measured for what it teaches the model).
  const size_t before = proposals.size();
  std::optional<Suggestion> uncertain;
  if (only_default_measured) {
    StatusOr<Suggestion> most = MostUncertain(first.point, def.point, def.prediction.mean);
    if (most.ok()) uncertain = *most;  // none without simulated settings (or none plausible)
  }
  // With one run of the default, a best pick the model predicts within run-to-run noise of the
  // default teaches less than the default's second run: the rule calls nothing better before
  // the default has two (tuner/run_comparison.h), and a flat model's best is no better a guess
  // than the default. The probe, then, is contrasted with the default, and runs between the
  // default's two runs (D C D: a linear drift cancels in the comparison, where D D C would
  // extrapolate the default's level to the probe's run) when both fit in the budget; with room
  // for one run only, the default's.
  if (uncertain && def.measured.count == 1 &&
      first.prediction.mean - def.prediction.mean <
          kPredictedGainWorthARun * std::fabs(def.prediction.mean)) {
    Suggestion again;
    again.point = def.point;
    again.prediction = def.prediction;
    again.origin = SuggestionOrigin::kDefaultAgain;
    if (left - static_cast<int>(proposals.size()) >= 2) {
      add(*uncertain);
      add(again);
    } else {
      add(again);  // the one run left (the probe would not fit beside it)
    }
    return Status::Ok();
  }
  const int room = left - static_cast<int>(proposals.size());
  if (uncertain && def.measured.count == 1 && room >= 2 && room <= 3 &&
      first.point != def.point &&
      first.prediction.mean - def.prediction.mean >=
          kPredictedGainDecisive * std::fabs(def.prediction.mean)) {
    Suggestion around;
    around.point = def.point;
    around.prediction = def.prediction;
    around.origin = SuggestionOrigin::kDefaultAroundPick;
    add(first);
    add(around);
    return Status::Ok();
  }
  const int exploring = uncertain ? std::max(1, wanted - 1) : wanted;
  for (const Suggestion& s : *batch) {
    if (static_cast<int>(proposals.size() - before) >= exploring) break;
    if (s.point == def.point) continue;
    if (def.measured.count > 0 && s.prediction.mean < def.prediction.mean) continue;
    add(s);
  }
  if (uncertain) add(*uncertain);
  if (proposals.size() == before && static_cast<int>(proposals.size()) < left) {
    conclusion->stop = StopReason::kNothingPredictedFaster;
  }
  return Status::Ok();
}

StatusOr<SearchResult> RunBayesSearch(const Space& space, const SearchOptions& options,
                                      const Objective& measured, const Objective& simulated,
                                      const std::vector<Observation>& prior,
                                      const SearchProgress& progress) {
  SearchOptions loop_options = options;
  loop_options.stop.max_measured_samples +=
      static_cast<int>(std::count_if(prior.begin(), prior.end(), [](const Observation& o) {
        return o.fidelity == Fidelity::kMeasured;
      }));
  SearchLoop loop(space, loop_options);
  for (size_t i = 0; i < prior.size(); ++i) {
    AUTOTUNE_RETURN_IF_ERROR(
        loop.Observe(prior[i]).WithPrefix("prior observation " + std::to_string(i)));
  }
  SearchResult result;
  loop.set_observer([&](const Observation& observation) {
    ++(observation.fidelity == Fidelity::kMeasured ? result.measured_evaluations
                                                   : result.simulated_evaluations);
    if (progress) progress(loop.search(), observation);
  });
  if (simulated) {
    AUTOTUNE_RETURN_IF_ERROR(loop.SimulatePrior({}, options.simulated_budget, simulated));
    result.stop_reason = StopReason::kBudgetSpent;
  }
  while (measured) {
    StatusOr<SearchLoop::Next> next = loop.NextMeasured();
    if (!next.ok()) return next.status();
    result.stop_reason = next->stop;
    if (next->stop != StopReason::kNotStopped) break;
    const Point& point = next->suggestion.point;
    AUTOTUNE_RETURN_IF_ERROR(loop.Evaluate(Fidelity::kMeasured, measured, point));
    // Nested designs: every measured point is simulated too, so the simulated model is
    // certain there and measuring a point really removes its uncertainty.
    if (simulated && !loop.search().HasObservation(point, Fidelity::kSimulated)) {
      AUTOTUNE_RETURN_IF_ERROR(loop.Evaluate(Fidelity::kSimulated, simulated, point));
    }
  }
  const Fidelity final_fidelity = loop.measured() > 0 ? Fidelity::kMeasured : Fidelity::kSimulated;
  StatusOr<Incumbent> best = loop.search().Best(final_fidelity);
  if (!best.ok()) return best.status();
  result.best = *best;
  result.observations = loop.search().observations();
  result.rho = loop.search().rho();
  return result;
}

}  // namespace autotune::tuner
