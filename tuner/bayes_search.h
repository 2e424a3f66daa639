// BayesSearch: the model of a search over two fidelities, simulated (cheap) and measured, and
// its suggestions. The loop that spends evaluations and decides when to stop is
// tuner/search_loop.h.
//
// Scores are MAXIMIZED (autotune's score is bytes per second; minimize f by scoring -f).
// The simulated fidelity has its own GP; the measured fidelity is predicted by co-kriging on
// both (tuner/cokriging.h). A suggestion maximizes expected improvement over one joint model of
// every free dimension; the first suggestions of a fidelity without data are random (the
// initial design), and the first measured suggestion after a simulated phase is the simulated
// optimum. The incumbent is the measured point with the best POSTERIOR MEAN, not the single
// best (and possibly luckiest) score. It knows nothing of MPI or SQLite.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "traces/fidelity.h"
#include "traces/status.h"
#include "tuner/cokriging.h"
#include "tuner/expected_improvement.h"
#include "tuner/space.h"

namespace autotune::tuner {

using ::autotune::Fidelity;
using ::autotune::FidelityName;

enum class StopReason {
  kNotStopped,
  kBudgetSpent,                        // StopRule::max_measured_samples measured samples exist
  kExpectedImprovementBelowThreshold,  // best EI < min_expected_improvement_ratio * |incumbent|
  kNothingPredictedFaster,  // every setting worth measuring is predicted slower than the default
};
const char* StopReasonName(StopReason reason);  // "budget spent", ...

// When a search stops measuring (tuner/search_policy.h applies it).
inline constexpr int kMinMeasuredBeforeStop = 3;
struct StopRule {
  // Measured samples after which nothing more is measured (Horovod's
  // --autotune-bayes-opt-max-samples); every measured observation counts.
  int max_measured_samples = 20;
  // Stop when the next pick's expected improvement is below this fraction of |incumbent
  // posterior mean| (0 = never; budget only), once min_measured_before_stop measured samples
  // exist.
  double min_expected_improvement_ratio = 0.0;
  int min_measured_before_stop = kMinMeasuredBeforeStop;
};

struct Observation {
  Point point;
  Fidelity fidelity = Fidelity::kMeasured;
  double score = 0.0;  // higher is better
};

struct SearchOptions {
  // The loop's (tuner/search_loop.h): when to stop measuring, and how many simulated
  // evaluations RunBayesSearch spends before measuring. BayesSearch itself ignores them.
  StopRule stop;
  int simulated_budget = 0;
  int initial_design = 0;  // random settings first, per fidelity without data;
                           // 0 = min(encoded dims + 1, 8)
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

// Why a setting is suggested.
enum class SuggestionOrigin {
  kInitialDesign,        // random: the fidelity has too few samples for a model yet
  kExpectedImprovement,  // maximizes expected improvement on the model
  kSimulatedOptimum,     // the first measured pick after a simulated phase
  kDefaultNeverMeasured, // the default setting, proposed first while it was never measured
  kRemeasure,            // a repeat of the candidate or the default: the verdict hangs on noise
  kMostUncertain,        // the setting the model is least sure of (largest posterior stddev):
                         // with the model's best, the first real runs contrast the two
  kDefaultAgain,         // a second run of the default in place of the model's best, which it
                         // predicts within run-to-run noise of the default
  kConfirm,              // a repeat of the candidate or the default: a "faster" verdict is
                         // re-checked with the rest of the budget (ConfirmOrder)
  kDefaultAroundPick,    // a second run of the default in place of the probe, the pick
                         // predicted decisively faster and too few runs left for both
  kPursueLead,           // a repeat of the candidate or the default: the candidate leads the
                         // default, not yet shown, and the model's pick is within noise of it
                         // (PursueLeadOrder)
};
// "initial design", "expected improvement", "simulated optimum", "default, never measured",
// "re-measure: the verdict hangs on noise", "confirm: a faster verdict re-checked with the rest
// of the budget", "most uncertain", "default again: no setting predicted faster beyond noise",
// "default again, between runs of the pick: no room for the probe beside a decision", "pursue:
// the candidate leads the default, and the model's pick is within noise of it".
const char* SuggestionOriginName(SuggestionOrigin origin);

struct Suggestion {
  Point point;
  double expected_improvement = 0.0;  // 0 for every origin but kExpectedImprovement
  Prediction prediction;              // the model's posterior at point (measured fidelity
                                      // for measured suggestions)
  SuggestionOrigin origin = SuggestionOrigin::kExpectedImprovement;
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

}  // namespace autotune::tuner
