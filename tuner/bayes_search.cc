#include "tuner/bayes_search.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace autotune::tuner {

const char* StopReasonName(StopReason reason) {
  switch (reason) {
    case StopReason::kNotStopped:
      return "not stopped";
    case StopReason::kBudgetSpent:
      return "budget spent";
    case StopReason::kExpectedImprovementBelowThreshold:
      return "expected improvement below threshold";
    case StopReason::kNothingPredictedFaster:
      return "nothing worth measuring is predicted faster than the default";
  }
  return "unknown";
}

const char* SuggestionOriginName(SuggestionOrigin origin) {
  switch (origin) {
    case SuggestionOrigin::kInitialDesign:
      return "initial design";
    case SuggestionOrigin::kExpectedImprovement:
      return "expected improvement";
    case SuggestionOrigin::kSimulatedOptimum:
      return "simulated optimum";
    case SuggestionOrigin::kDefaultNeverMeasured:
      return "default, never measured";
    case SuggestionOrigin::kRemeasure:
      return "re-measure: the verdict hangs on noise";
    case SuggestionOrigin::kConfirm:
      return "confirm: a faster verdict re-checked with the rest of the budget";
    case SuggestionOrigin::kMostUncertain:
      return "most uncertain";
    case SuggestionOrigin::kDefaultAgain:
      return "default again: no setting predicted faster beyond noise";
    case SuggestionOrigin::kDefaultAroundPick:
      return "default again, between runs of the pick: no room for the probe beside a decision";
    case SuggestionOrigin::kPursueLead:
      return "pursue: the candidate leads the default, and the model's pick is within noise of it";
  }
  return "unknown";
}

BayesSearch::BayesSearch(Space space, SearchOptions options)
    : space_(std::move(space)),
      options_(options),
      model_(space_.encoded_size(), options_.model),
      rng_(options_.seed) {}

int BayesSearch::count(Fidelity fidelity) const {
  return static_cast<int>(
      std::count_if(observations_.begin(), observations_.end(),
                    [&](const Observation& o) { return o.fidelity == fidelity; }));
}

Eigen::MatrixXd BayesSearch::Inputs(Fidelity fidelity) const {
  Eigen::MatrixXd x(space_.encoded_size(), count(fidelity));
  Eigen::Index j = 0;
  for (const Observation& o : observations_) {
    if (o.fidelity == fidelity) x.col(j++) = space_.Encode(o.point);
  }
  return x;
}

Eigen::VectorXd BayesSearch::Scores(Fidelity fidelity) const {
  Eigen::VectorXd y(count(fidelity));
  Eigen::Index j = 0;
  for (const Observation& o : observations_) {
    if (o.fidelity == fidelity) y[j++] = o.score;
  }
  return y;
}

double BayesSearch::ScoreSpread(Fidelity fidelity) const {
  for (Fidelity f :
       {fidelity, fidelity == Fidelity::kMeasured ? Fidelity::kSimulated : Fidelity::kMeasured}) {
    Eigen::VectorXd y = Scores(f);
    if (y.size() < 2) continue;
    double spread = std::sqrt((y.array() - y.mean()).square().mean());
    if (spread > 0.0) return spread;
  }
  return 1.0;
}

bool BayesSearch::RefitDue(int samples, int samples_at_last_fit) const {
  if (freeze_hyperparameters_) return false;
  return samples < options_.refit_all_below ||
         samples - samples_at_last_fit >= std::max(1, options_.refit_period);
}

Status BayesSearch::UpdateSimulated(const Eigen::VectorXd& x, double score) {
  const int n = count(Fidelity::kSimulated);
  Status status;
  if (n == 1 || RefitDue(n, simulated_at_last_fit_)) {
    status = model_.FitSimulated(Inputs(Fidelity::kSimulated), Scores(Fidelity::kSimulated));
    if (status.ok()) simulated_at_last_fit_ = n;
  } else {
    status = model_.AddSimulated(x, score);
  }
  simulated_dirty_ = !status.ok();
  return status;
}

Status BayesSearch::UpdateMeasured(const Eigen::VectorXd& x, double score) {
  const int n = count(Fidelity::kMeasured);
  Status status;
  if (n == 1 || model_.measured_stale() || RefitDue(n, measured_at_last_fit_)) {
    status = model_.FitMeasured(Inputs(Fidelity::kMeasured), Scores(Fidelity::kMeasured));
    if (status.ok()) measured_at_last_fit_ = n;
  } else {
    status = model_.AddMeasured(x, score);
  }
  measured_dirty_ = !status.ok();
  return status;
}

Status BayesSearch::Observe(const Observation& observation) {
  AUTOTUNE_RETURN_IF_ERROR(space_.Validate(observation.point).WithPrefix("observation"));
  if (!std::isfinite(observation.score)) {
    return Status::InvalidArgument("observation: score is not finite");
  }
  observations_.push_back(observation);
  if (space_.encoded_size() == 0) return Status::Ok();
  Eigen::VectorXd x = space_.Encode(observation.point);
  return observation.fidelity == Fidelity::kSimulated ? UpdateSimulated(x, observation.score)
                                                      : UpdateMeasured(x, observation.score);
}

Status BayesSearch::EnsureModels() {
  if (space_.encoded_size() == 0) return Status::Ok();
  const int simulated = count(Fidelity::kSimulated);
  const int measured = count(Fidelity::kMeasured);
  if (simulated_dirty_ && simulated > 0) {
    AUTOTUNE_RETURN_IF_ERROR(
        model_.FitSimulated(Inputs(Fidelity::kSimulated), Scores(Fidelity::kSimulated)));
    simulated_dirty_ = false;
    simulated_at_last_fit_ = simulated;
  }
  if ((measured_dirty_ || model_.measured_stale()) && measured > 0) {
    AUTOTUNE_RETURN_IF_ERROR(
        model_.FitMeasured(Inputs(Fidelity::kMeasured), Scores(Fidelity::kMeasured)));
    measured_dirty_ = false;
    measured_at_last_fit_ = measured;
  }
  return Status::Ok();
}

Status BayesSearch::RefitHyperparameters() {
  if (space_.encoded_size() == 0) return Status::Ok();
  simulated_dirty_ = count(Fidelity::kSimulated) > 0;
  measured_dirty_ = count(Fidelity::kMeasured) > 0;
  return EnsureModels();
}

StatusOr<Incumbent> BayesSearch::Best(Fidelity fidelity) {
  std::vector<int> indices;
  for (int i = 0; i < static_cast<int>(observations_.size()); ++i) {
    if (observations_[i].fidelity == fidelity) indices.push_back(i);
  }
  if (indices.empty()) {
    return Status::NotFound(std::string("no ") + FidelityName(fidelity) + " samples yet");
  }
  AUTOTUNE_RETURN_IF_ERROR(EnsureModels());
  Incumbent best;
  if (space_.encoded_size() == 0) {  // nothing tunable: the best observed score
    for (int i : indices) {
      if (best.observation_index < 0 || observations_[i].score > best.observed_score) {
        best.observation_index = i;
        best.observed_score = observations_[i].score;
        best.prediction = {observations_[i].score, 0.0};
      }
    }
    best.point = observations_[best.observation_index].point;
    return best;
  }
  Eigen::MatrixXd x = Inputs(fidelity);
  Eigen::VectorXd mean, variance;
  if (fidelity == Fidelity::kSimulated) {
    model_.simulated_model().PredictBatch(x, &mean, &variance);
  } else {
    model_.PredictBatch(x, &mean, &variance);
  }
  Eigen::Index arg = 0;
  mean.maxCoeff(&arg);
  best.observation_index = indices[arg];
  best.point = observations_[best.observation_index].point;
  best.observed_score = observations_[best.observation_index].score;
  best.prediction = {mean[arg], variance[arg]};
  return best;
}

StatusOr<Prediction> BayesSearch::Predict(Fidelity fidelity, const Point& point) {
  AUTOTUNE_RETURN_IF_ERROR(space_.Validate(point));
  AUTOTUNE_RETURN_IF_ERROR(EnsureModels());
  Eigen::VectorXd x = space_.Encode(point);
  return fidelity == Fidelity::kSimulated ? model_.simulated_model().Predict(x) : model_.Predict(x);
}

bool BayesSearch::HasObservation(const Point& point, Fidelity fidelity) const {
  return std::any_of(observations_.begin(), observations_.end(), [&](const Observation& o) {
    return o.fidelity == fidelity && o.point == point;
  });
}

Point BayesSearch::RandomUnseen() {
  const std::vector<Point>& candidates = options_.candidates;
  if (!candidates.empty()) {
    std::vector<const Point*> unseen;
    for (const Point& c : candidates) {
      if (!HasObservation(c, Fidelity::kMeasured) && !HasObservation(c, Fidelity::kSimulated)) {
        unseen.push_back(&c);
      }
    }
    if (unseen.empty()) return candidates[rng_() % candidates.size()];
    return *unseen[rng_() % unseen.size()];
  }
  Point point;
  for (int attempt = 0; attempt < 100; ++attempt) {
    point = space_.Random(rng_);
    bool seen = std::any_of(observations_.begin(), observations_.end(),
                            [&](const Observation& o) { return o.point == point; });
    if (!seen) break;
  }
  return point;
}

StatusOr<Suggestion> BayesSearch::BestCandidate(Fidelity fidelity, const SurrogateModel& model,
                                                double best, double xi) {
  std::vector<const Point*> open;
  for (const Point& c : options_.candidates) {
    if (!HasObservation(c, fidelity)) open.push_back(&c);
  }
  if (open.empty()) {  // every candidate observed: the best EI among all of them
    for (const Point& c : options_.candidates) open.push_back(&c);
  }
  Eigen::MatrixXd x(space_.encoded_size(), static_cast<Eigen::Index>(open.size()));
  for (size_t j = 0; j < open.size(); ++j) x.col(static_cast<Eigen::Index>(j)) = space_.Encode(*open[j]);
  Eigen::VectorXd mean, variance;
  model.PredictBatch(x, &mean, &variance);
  Suggestion suggestion;
  suggestion.expected_improvement = -1.0;
  for (size_t j = 0; j < open.size(); ++j) {
    const Eigen::Index k = static_cast<Eigen::Index>(j);
    const double ei = ExpectedImprovement(mean[k], std::max(0.0, variance[k]), best, xi);
    if (ei > suggestion.expected_improvement) {
      suggestion.point = *open[j];
      suggestion.expected_improvement = ei;
      suggestion.prediction = {mean[k], std::max(0.0, variance[k])};
    }
  }
  suggestion.origin = SuggestionOrigin::kExpectedImprovement;
  return suggestion;
}

StatusOr<Suggestion> BayesSearch::Suggest(Fidelity fidelity) {
  if (space_.encoded_size() == 0) {
    return Status::InvalidArgument("nothing to tune: every dimension is a constant");
  }
  for (size_t i = 0; i < options_.candidates.size(); ++i) {
    AUTOTUNE_RETURN_IF_ERROR(
        space_.Validate(options_.candidates[i]).WithPrefix("candidate " + std::to_string(i)));
  }
  AUTOTUNE_RETURN_IF_ERROR(EnsureModels());
  const int simulated = count(Fidelity::kSimulated);
  const int measured = count(Fidelity::kMeasured);
  const int initial = options_.initial_design > 0 ? options_.initial_design
                                                  : std::min(space_.encoded_size() + 1, 8);
  ++suggestions_;
  Suggestion suggestion;
  const bool is_simulated = fidelity == Fidelity::kSimulated;
  const int own = is_simulated ? simulated : measured;
  const bool model_has_data = is_simulated ? simulated > 0 : simulated + measured > 0;
  if (!is_simulated && measured == 0 && simulated > 0) {
    StatusOr<Incumbent> simulated_best = Best(Fidelity::kSimulated);
    if (!simulated_best.ok()) return simulated_best.status();
    suggestion.point = simulated_best->point;
    suggestion.origin = SuggestionOrigin::kSimulatedOptimum;
  } else if (own < initial && (is_simulated || simulated == 0)) {
    suggestion.point = RandomUnseen();
    suggestion.origin = SuggestionOrigin::kInitialDesign;
  } else {
    StatusOr<Incumbent> incumbent = Best(fidelity);
    if (!incumbent.ok()) return incumbent.status();
    AcquisitionOptions acquisition = options_.acquisition;
    acquisition.xi = options_.xi * ScoreSpread(fidelity);
    acquisition.seed = options_.seed * 1000003ULL + static_cast<uint64_t>(suggestions_);
    const SurrogateModel& model =
        is_simulated ? static_cast<const SurrogateModel&>(model_.simulated_model()) : model_;
    if (!options_.candidates.empty()) {
      return BestCandidate(fidelity, model, incumbent->prediction.mean, acquisition.xi);
    }
    StatusOr<AcquisitionResult> result = MaximizeExpectedImprovement(
        model, space_, incumbent->prediction.mean, acquisition, {space_.Encode(incumbent->point)});
    if (!result.ok()) return result.status();
    suggestion.point = result->point;
    suggestion.expected_improvement = result->expected_improvement;
    suggestion.prediction = result->prediction;
    suggestion.origin = SuggestionOrigin::kExpectedImprovement;
    return suggestion;
  }
  if (model_has_data) {
    StatusOr<Prediction> prediction = Predict(fidelity, suggestion.point);
    if (prediction.ok()) suggestion.prediction = *prediction;
  }
  return suggestion;
}

StatusOr<std::vector<Suggestion>> BayesSearch::SuggestBatch(Fidelity fidelity, int count) {
  std::vector<Suggestion> batch;
  BayesSearch believer = *this;
  believer.freeze_hyperparameters_ = true;
  for (int i = 0; i < count; ++i) {
    StatusOr<Suggestion> next = believer.Suggest(fidelity);
    if (!next.ok()) return next.status();
    batch.push_back(*next);
    Observation pretend{next->point, fidelity, next->prediction.mean};
    if (next->origin == SuggestionOrigin::kInitialDesign) {
      // No model to believe yet: keep the point out of later random picks only.
      believer.observations_.push_back(pretend);
      continue;
    }
    AUTOTUNE_RETURN_IF_ERROR(believer.Observe(pretend).WithPrefix("batch suggestion"));
  }
  return batch;
}

}  // namespace autotune::tuner
