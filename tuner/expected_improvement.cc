#include "tuner/expected_improvement.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>
#include <string>
#include <utility>

#include "tuner/nlopt_runner.h"

namespace autotune::tuner {

double ExpectedImprovement(double mean, double variance, double best, double xi) {
  const double improvement = mean - best - xi;
  const double sigma = std::sqrt(std::max(variance, 0.0));
  if (!(sigma > 0.0)) return std::max(improvement, 0.0);
  const double z = improvement / sigma;
  const double cdf = 0.5 * std::erfc(-z / std::numbers::sqrt2);
  const double pdf = std::exp(-0.5 * z * z) / std::sqrt(2.0 * std::numbers::pi);
  return std::max(0.0, improvement * cdf + sigma * pdf);
}

namespace {

using Candidate = std::pair<double, Eigen::VectorXd>;  // (EI, snapped unit-cube point)

// The point NLopt's x stands for, snapped.
Eigen::VectorXd SnappedPoint(const Space& space, const std::vector<double>& x) {
  return space.Snap(Eigen::Map<const Eigen::VectorXd>(x.data(), static_cast<int>(x.size())));
}

// Appends options.random_candidates random settings with their EI, screened in one batch
// prediction. Returns the acquisition evaluations used.
int AddRandomCandidates(const SurrogateModel& model, const Space& space, double best,
                        const AcquisitionOptions& options, std::vector<Candidate>* candidates) {
  if (options.random_candidates <= 0) return 0;
  std::mt19937_64 rng(options.seed);
  Eigen::MatrixXd batch(space.encoded_size(), options.random_candidates);
  for (int j = 0; j < options.random_candidates; ++j) {
    batch.col(j) = space.Encode(space.Random(rng));
  }
  Eigen::VectorXd mean, variance;
  model.PredictBatch(batch, &mean, &variance);
  for (int j = 0; j < options.random_candidates; ++j) {
    candidates->emplace_back(ExpectedImprovement(mean[j], variance[j], best, options.xi),
                             batch.col(j));
  }
  return options.random_candidates;
}

// Runs `local` (start overwritten) from each of the first `local_starts` distinct
// candidates and returns the best of their optima and candidates.front(). A failed run is
// skipped, its reason left in *failures. REQUIRES: candidates non-empty, best EI first.
Candidate PolishBest(const std::vector<Candidate>& candidates, NloptProblem local, int local_starts,
                     const BoxObjective& negative_ei, const Space& space, std::string* failures) {
  Candidate chosen = candidates.front();
  std::vector<Eigen::VectorXd> polished_from;
  for (const auto& [value, start] : candidates) {
    if (static_cast<int>(polished_from.size()) >= local_starts) break;
    bool seen = std::any_of(
        polished_from.begin(), polished_from.end(),
        [&](const Eigen::VectorXd& p) { return (p - start).cwiseAbs().maxCoeff() < 1e-9; });
    if (seen) continue;
    polished_from.push_back(start);
    local.start.assign(start.data(), start.data() + start.size());
    StatusOr<NloptOutcome> outcome = MinimizeInBox(local, negative_ei, "EI local polish");
    if (!outcome.ok()) {
      *failures = outcome.status().message();
      continue;
    }
    if (-outcome->best_value > chosen.first) {
      chosen = {-outcome->best_value, SnappedPoint(space, outcome->best_x)};
    }
  }
  return chosen;
}

}  // namespace

StatusOr<AcquisitionResult> MaximizeExpectedImprovement(
    const SurrogateModel& model, const Space& space, double best, const AcquisitionOptions& options,
    const std::vector<Eigen::VectorXd>& extra_starts) {
  const int dims = space.encoded_size();
  if (dims == 0) {
    return Status::InvalidArgument("nothing to tune: every dimension is a constant");
  }
  if (model.input_dims() != dims) {
    return Status::InvalidArgument("acquisition: model has " + std::to_string(model.input_dims()) +
                                   " inputs, the space " + std::to_string(dims));
  }
  int evaluations = 0;
  auto acquisition = [&](const Eigen::VectorXd& u) {
    ++evaluations;
    Prediction p = model.Predict(space.Snap(u));
    return ExpectedImprovement(p.mean, p.variance, best, options.xi);
  };
  BoxObjective negative_ei = [&](const std::vector<double>& x, std::vector<double>*) {
    return -acquisition(Eigen::Map<const Eigen::VectorXd>(x.data(), dims));
  };

  // Candidates for the local polish: the global optimum, random settings, extra starts.
  std::vector<Candidate> candidates;
  std::string failures;
  NloptProblem global;
  global.algorithm = nlopt::GN_DIRECT_L;
  global.lower.assign(dims, 0.0);
  global.upper.assign(dims, 1.0);
  global.start.assign(dims, 0.5);
  global.max_evaluations = options.global_evaluations;
  global.relative_x_tolerance = 0.0;
  StatusOr<NloptOutcome> direct = MinimizeInBox(global, negative_ei, "EI global search");
  if (direct.ok()) {
    candidates.emplace_back(-direct->best_value, SnappedPoint(space, direct->best_x));
  } else {
    failures = direct.status().message();
  }
  evaluations += AddRandomCandidates(model, space, best, options, &candidates);
  for (const Eigen::VectorXd& start : extra_starts) {
    if (start.size() != dims) continue;
    Eigen::VectorXd snapped = space.Snap(start);
    candidates.emplace_back(acquisition(snapped), snapped);
  }
  if (candidates.empty()) {
    return Status::Internal("acquisition: no candidate point (" + failures + ")");
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });

  NloptProblem local = global;
  local.algorithm = dims >= 2 ? nlopt::LN_BOBYQA : nlopt::LN_COBYLA;
  local.max_evaluations = options.local_evaluations;
  local.relative_x_tolerance = 1e-4;
  const Candidate chosen =
      PolishBest(candidates, local, options.local_starts, negative_ei, space, &failures);
  if (!std::isfinite(chosen.first)) {
    return Status::Internal("acquisition: expected improvement is not finite (" + failures + ")");
  }
  AcquisitionResult result;
  result.encoded = chosen.second;
  result.point = space.Decode(chosen.second);
  result.expected_improvement = chosen.first;
  result.prediction = model.Predict(chosen.second);
  result.evaluations = evaluations;
  return result;
}

}  // namespace autotune::tuner
