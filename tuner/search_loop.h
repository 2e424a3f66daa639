// SearchLoop: the one search loop over two fidelities. It owns a BayesSearch and spends
// evaluations the way every search of autotune does:
//   1. measured samples already taken (a database's, a run's first sample) are observed;
//   2. the simulated-prior phase: each of those settings and the default is simulated too
//      (co-kriging wants nested designs), then a budget of settings chosen by expected
//      improvement on the simulated model;
//   3. measuring: the next setting (or a batch of them) by expected improvement on the
//      co-kriging model, until the stop rule (tuner/search_policy.h) says stop;
//   4. the verdict: the model's best guess, the candidate judged against the default, and
//      whether measured step times show it faster beyond noise (tuner/search_policy.h:
//      Decide); the setting written is the candidate only then, else the default.
// `autotune search` (one round of 1-4 per invocation: 3 proposes, others measure), `search
// --live` (rounds until the rule stops) and `record --autotune` (1 and 3 for every sample of
// the run, 2 after its first, the incumbent at the end) use it through tuner/knob_search.h;
// RunBayesSearch below is the same loop closed over two objectives. It knows nothing of MPI
// or SQLite: objectives are plain functions.
#pragma once

#include <functional>
#include <map>
#include <vector>

#include "traces/status.h"
#include "tuner/bayes_search.h"
#include "tuner/search_policy.h"

namespace autotune::tuner {

// Evaluates a setting; a non-OK status aborts the search with it.
using Objective = std::function<StatusOr<double>(const Point& point)>;

class SearchLoop {
 public:
  // The model is built from `options`; options.stop is the stop rule.
  SearchLoop(Space space, SearchOptions options);

  BayesSearch& search() { return search_; }
  const BayesSearch& search() const { return search_; }
  const Space& space() const { return search_.space(); }
  const StopRule& stop_rule() const { return stop_; }
  int measured() const { return search_.count(Fidelity::kMeasured); }
  int simulated() const { return search_.count(Fidelity::kSimulated); }

  // Called after every observation the loop records (Observe, Evaluate and the phases).
  void set_observer(std::function<void(const Observation&)> observer) {
    observer_ = std::move(observer);
  }

  // Records an observation (BayesSearch::Observe) and tells the observer.
  Status Observe(const Observation& observation);
  // Evaluates `objective` at `point` and records the score at `fidelity`. An objective failure
  // is returned prefixed with "<fidelity> objective at <point>".
  Status Evaluate(Fidelity fidelity, const Objective& objective, const Point& point);

  // The simulated-prior phase: evaluates `simulated` at each point of `nested` not simulated
  // yet, then at `budget` points chosen by expected improvement on the simulated model;
  // picked(i), when given, after the i-th of those (1-based).
  Status SimulatePrior(const std::vector<Point>& nested, int budget, const Objective& simulated,
                       const std::function<void(int picked)>& picked = nullptr);

  // What to measure next, or why nothing: the budget is checked first, then one suggestion
  // is judged by the expected-improvement rule.
  struct Next {
    StopReason stop = StopReason::kNotStopped;
    Suggestion suggestion;  // valid when stop == kNotStopped
  };
  StatusOr<Next> NextMeasured();

  // The posterior of the measured fidelity at `point` and the measurements there.
  StatusOr<Reported> Report(const Point& point);
  // The incumbent: the measured setting with the best posterior mean, with its repeats.
  // NotFound when nothing was measured.
  StatusOr<Reported> Incumbent();

  // What one round of an offline search concludes.
  struct Conclusion {
    Reported best;             // the model's best guess (ChooseBest)
    Reported candidate;        // the setting judged against the default (Candidate)
    Reported default_setting;  // the space's default
    Decision decision;         // Decide(candidate, default_setting, their step times)
    StopReason stop = StopReason::kNotStopped;
    std::vector<Suggestion> proposals;  // what to measure next
    // The setting to write: the candidate when it beats the default, else the default.
    const Reported& written() const {
      return decision.verdict == Verdict::kBeatsDefault ? candidate : default_setting;
    }
  };
  // The real runs by setting (each setting's runs with their step times and order; a
  // setting absent has none).
  using StepTimes = std::map<Point, RealRuns>;
  // Concludes a round: the best guess, the candidate, the default and the decision on `steps`
  // (Decide, the one rule), and settings to measure next, never more than the measured-sample
  // budget has left: the default first while it was never measured (stopped or not); then, when
  // RemeasureToDecide, the settings RemeasureOrder names (whatever `propose`); then, while the
  // candidate beats the default, the one ConfirmOrder names (the rest of the budget re-checks a
  // "faster" verdict); then, while the candidate leads the default by kLeadWorthPursuing or more
  // unshown and the batch's first pick is predicted within run-to-run noise of it, the one
  // PursueLeadOrder names (before the expected-improvement stop); else, unless the stop rule says
  // stop (the budget first, then the expected-improvement rule on the batch's first pick), while no
  // setting but the default was measured, the model's best pick and the setting it is least sure of
  // (kMostUncertain: the largest posterior stddev among the simulated settings not predicted
  // clearly slower than the default, MostUncertain; it alone may be predicted below the default),
  // the best pick replaced by the default's second run (kDefaultAgain) when the default has one run
  // and the pick is predicted less than kPredictedGainWorthARun faster, the probe replaced by the
  // default's second run (kDefaultAroundPick: D C D, then the pick again) when the default has one
  // run, two or three runs are left and the pick is predicted kPredictedGainDecisive or more
  // faster, else up to `propose` settings by expected improvement (kriging believer), leaving out
  // the default and any predicted below it (none left: kNothingPredictedFaster). Fails when nothing
  // was observed.
  StatusOr<Conclusion> Conclude(int propose, const Point& default_point,
                                const StepTimes& steps = {});
  // Conclude without the proposals: the best guess, the candidate and the decision.
  StatusOr<Conclusion> Judge(const Point& default_point, const StepTimes& steps);

 private:
  // Each observed setting once, in observation order, reported.
  StatusOr<std::vector<Reported>> ReportObserved();
  // The proposals part of Conclude.
  Status Propose(int propose, Conclusion* conclusion);
  // The simulated setting, not measured and neither `best` nor the default, with the largest
  // measured-fidelity posterior variance among those that are not predicted clearly slower
  // than the default (mean >= default_mean - kProbePredictedSlowerAtMost x |default_mean|);
  // NotFound when there is none.
  StatusOr<Suggestion> MostUncertain(const Point& best, const Point& default_point,
                                     double default_mean);

  BayesSearch search_;
  StopRule stop_;
  std::function<void(const Observation&)> observer_;
};

struct SearchResult {
  StopReason stop_reason = StopReason::kNotStopped;
  Incumbent best;  // measured incumbent; simulated one when no measured objective was given
  int simulated_evaluations = 0;
  int measured_evaluations = 0;
  std::vector<Observation> observations;  // prior ones first, then in evaluation order
  double rho = 1.0;                       // co-kriging rho at the end
};

// Called after every evaluation.
using SearchProgress = std::function<void(BayesSearch& search, const Observation& observation)>;

// The loop closed over two objectives (benchmarks, tests). `prior` observations (e.g. from a
// database) are taken in first and do not count against the budgets. The simulated-prior
// phase spends options.simulated_budget evaluations of `simulated` (when given); then, with
// `measured` given, measures NextMeasured's picks until options.stop says stop (its budget
// counted beyond the prior's measured observations) and the result says which rule did. Each
// measured point is also simulated (when `simulated` is given and it was not yet).
StatusOr<SearchResult> RunBayesSearch(const Space& space, const SearchOptions& options,
                                      const Objective& measured, const Objective& simulated,
                                      const std::vector<Observation>& prior = {},
                                      const SearchProgress& progress = nullptr);

}  // namespace autotune::tuner
