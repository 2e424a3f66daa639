#include "tuner/search_loop.h"

#include <algorithm>
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
  for (const auto& [point, samples] : steps) every_setting.push_back(samples);
  auto steps_at = [&steps](const Point& point) {
    const auto it = steps.find(point);
    return it == steps.end() ? StepSamples{} : it->second;
  };
  const StepNoise noise = MeasureNoise(every_setting);
  conclusion.decision =
      Decide(conclusion.candidate, conclusion.default_setting,
             steps_at(conclusion.candidate.point), steps_at(default_point), noise);
  if (conclusion.decision.verdict != Verdict::kBeatsDefault) {
    std::vector<Reported> measured;
    std::vector<StepSamples> measured_steps;
    for (const Reported& r : *observed) {
      if (r.point == default_point || r.measured.count == 0) continue;
      measured.push_back(r);
      measured_steps.push_back(steps_at(r.point));
    }
    Decision faster;
    const int i = MostConvincinglyFaster(measured, measured_steps, conclusion.default_setting,
                                         steps_at(default_point), noise, &faster);
    if (i >= 0) {
      conclusion.candidate = measured[i];
      conclusion.decision = faster;
    }
  }
  AUTOTUNE_RETURN_IF_ERROR(Propose(propose, &conclusion));
  return conclusion;
}

Status SearchLoop::Propose(int propose, Conclusion* conclusion) {
  const Reported& def = conclusion->default_setting;
  std::vector<Suggestion>& proposals = conclusion->proposals;
  if (def.measured.count == 0) {
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
  if (RemeasureToDecide(stop_, measured(), conclusion->decision, conclusion->candidate, def)) {
    for (const Reported* r : {static_cast<const Reported*>(&conclusion->candidate), &def}) {
      Suggestion s;
      s.point = r->point;
      s.prediction = r->prediction;
      s.origin = SuggestionOrigin::kRemeasure;
      proposals.push_back(s);
    }
    return Status::Ok();
  }
  if (wanted <= 0) return Status::Ok();
  StatusOr<std::vector<Suggestion>> batch = search_.SuggestBatch(Fidelity::kMeasured, wanted);
  if (!batch.ok()) return batch.status();
  const Suggestion& first = batch->front();
  if (ImprovementStopApplies(stop_, measured(), first)) {
    StatusOr<tuner::Incumbent> incumbent = search_.Best(Fidelity::kMeasured);
    if (!incumbent.ok()) return incumbent.status();
    if (ImprovementTooSmall(stop_, first, incumbent->prediction.mean)) {
      conclusion->stop = StopReason::kExpectedImprovementBelowThreshold;
      return Status::Ok();
    }
  }
  for (const Suggestion& s : *batch) {
    if (s.point != def.point || def.measured.count > 0) proposals.push_back(s);
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
