// BayesSearch: the search loop over two fidelities, simulated (cheap) and measured.
//
// Scores are MAXIMIZED (autotune's score is bytes per second; minimize f by scoring -f).
// The simulated fidelity has its own GP; the measured fidelity is predicted by co-kriging on
// both (tuner/cokriging.h). A suggestion maximizes expected improvement over one joint model of
// every free dimension; the first suggestions of a fidelity without data are random (the
// initial design), and the first measured suggestion after a simulated phase is the simulated
// optimum. The incumbent is the measured point with the best POSTERIOR MEAN, not the single
// best (and possibly luckiest) score. The loop knows nothing of MPI or SQLite: objectives are
// plain functions.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "traces/status.h"
#include "tuner/cokriging.h"
#include "tuner/expected_improvement.h"
#include "tuner/space.h"

namespace autotune::tuner {

enum class Fidelity { kSimulated, kMeasured };
const char* FidelityName(Fidelity fidelity);  // "simulated" / "measured"

enum class StopReason {
  kNotStopped,
  kBudgetSpent,                        // max_measured_samples measured evaluations done
  kExpectedImprovementBelowThreshold,  // best EI < min_expected_improvement_ratio * |incumbent|
};
const char* StopReasonName(StopReason reason);  // "budget spent", ...

struct Observation {
  Point point;
  Fidelity fidelity = Fidelity::kMeasured;
  double score = 0.0;  // higher is better
};

struct SearchOptions {
  int max_measured_samples = 20;  // measured evaluations RunBayesSearch may spend (Horovod's
                                  // --autotune-bayes-opt-max-samples)
  int simulated_budget = 0;       // simulated evaluations before the measured phase
  int initial_design = 0;         // random settings first, per fidelity without data;
                                  // 0 = min(encoded dims + 1, 8)
  // Stop when the best expected improvement is below this fraction of |incumbent mean|
  // (0 = never; budget only), once min_measured_before_stop measured samples exist.
  double min_expected_improvement_ratio = 0.0;
  int min_measured_before_stop = 3;
  // EI exploration margin xi in units of the observed scores' standard deviation.
  double xi = 0.01;
  // Hyperparameters are refit after every sample while a fidelity has fewer than
  // refit_all_below samples, then every refit_period samples; between refits samples are
  // added by the O(n^2) Cholesky update.
  int refit_all_below = 48;
  int refit_period = 10;
  // When non-empty, only these settings are ever suggested (a finite grid: a tabular benchmark,
  // a list of settings a user can run). Initial-design picks are random candidates not yet
  // observed; expected improvement is evaluated at every candidate not yet observed at the
  // fidelity asked for (exhaustively, no optimizer), and the best one is suggested. Every
  // candidate must be valid for the space (Suggest fails naming the first that is not).
  std::vector<Point> candidates;
  CoKrigingOptions model;          // GP settings of both fidelities
  AcquisitionOptions acquisition;  // its xi and seed are set by the search
  uint64_t seed = 1;
};

struct Suggestion {
  Point point;
  double expected_improvement = 0.0;  // 0 for initial-design and simulated-optimum picks
  Prediction prediction;              // the model's posterior at point (measured fidelity
                                      // for measured suggestions)
  std::string origin;  // "initial design", "expected improvement", "simulated optimum"
};

struct Incumbent {
  Point point;
  Prediction prediction;       // posterior of the fidelity asked for, at point
  double observed_score = 0;   // the score observed there
  int observation_index = -1;  // index into observations()
};

class BayesSearch {
 public:
  BayesSearch(Space space, SearchOptions options);

  const Space& space() const { return space_; }
  const std::vector<Observation>& observations() const { return observations_; }
  int count(Fidelity fidelity) const;
  // True when exactly this point has been observed at `fidelity`.
  bool HasObservation(const Point& point, Fidelity fidelity) const;
  double rho() const { return model_.rho(); }
  const CoKriging& model() const { return model_; }

  // Records an evaluated point and updates the models. Fails, recording nothing, when the point
  // is invalid for the space (a constant moved) or the score is not finite; fails, with the
  // observation recorded and the model refit on next use, when the model update fails.
  Status Observe(const Observation& observation);
  // The next point worth evaluating at `fidelity`.
  StatusOr<Suggestion> Suggest(Fidelity fidelity);
  // `count` distinct points to evaluate in parallel: each pick is added to a copy of the
  // model at its posterior mean (kriging believer) before the next is chosen.
  StatusOr<std::vector<Suggestion>> SuggestBatch(Fidelity fidelity, int count);
  // The observed point of `fidelity` with the best posterior mean; NotFound when none.
  StatusOr<Incumbent> Best(Fidelity fidelity);
  // Refits the hyperparameters of both fidelities' models now (e.g. after taking in a batch of
  // prior observations while they were updated incrementally).
  Status RefitHyperparameters();
  // The model's posterior for `fidelity` at a point.
  StatusOr<Prediction> Predict(Fidelity fidelity, const Point& point);

 private:
  Status EnsureModels();
  Status UpdateSimulated(const Eigen::VectorXd& x, double score);
  Status UpdateMeasured(const Eigen::VectorXd& x, double score);
  bool RefitDue(int samples, int samples_at_last_fit) const;
  double ScoreSpread(Fidelity fidelity) const;
  Eigen::MatrixXd Inputs(Fidelity fidelity) const;
  Eigen::VectorXd Scores(Fidelity fidelity) const;
  Point RandomUnseen();
  // EI maximized over options_.candidates not yet observed at `fidelity`.
  StatusOr<Suggestion> BestCandidate(Fidelity fidelity, const SurrogateModel& model, double best,
                                     double xi);

  Space space_;
  SearchOptions options_;
  CoKriging model_;
  std::vector<Observation> observations_;
  std::mt19937_64 rng_;
  int suggestions_ = 0;
  int simulated_at_last_fit_ = 0;
  int measured_at_last_fit_ = 0;
  bool simulated_dirty_ = false;
  bool measured_dirty_ = false;
  bool freeze_hyperparameters_ = false;  // kriging-believer copies only update incrementally
};

struct SearchResult {
  StopReason stop_reason = StopReason::kNotStopped;
  Incumbent best;  // measured incumbent; simulated one when no measured objective was given
  int simulated_evaluations = 0;
  int measured_evaluations = 0;
  std::vector<Observation> observations;  // prior ones first, then in evaluation order
  double rho = 1.0;                       // co-kriging rho at the end
};

// Evaluates a setting; a non-OK status aborts the search with it.
using Objective = std::function<StatusOr<double>(const Point& point)>;
// Called after every evaluation.
using SearchProgress = std::function<void(BayesSearch& search, const Observation& observation)>;

// Phase 1 spends options.simulated_budget evaluations of `simulated` (when given), each chosen
// by EI on the simulated model. Phase 2 spends up to options.max_measured_samples evaluations
// of `measured` (when given), chosen by EI on the co-kriging model, and stops early when the
// EI falls below the threshold; the result says which. Each measured point is also simulated
// (beyond the simulated budget) when it was not yet: co-kriging wants nested designs. `prior`
// observations (e.g. from a database) are taken in first and do not count against the budgets.
StatusOr<SearchResult> RunBayesSearch(const Space& space, const SearchOptions& options,
                                      const Objective& measured, const Objective& simulated,
                                      const std::vector<Observation>& prior = {},
                                      const SearchProgress& progress = nullptr);

}  // namespace autotune::tuner
