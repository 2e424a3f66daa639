#include "tuner/nlopt_runner.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <new>
#include <stdexcept>

namespace autotune::tuner {
namespace {

struct RunState {
  const BoxObjective* objective = nullptr;
  std::vector<double> best_x;
  double best_value = std::numeric_limits<double>::infinity();
  int evaluations = 0;
  bool saw_non_finite = false;
};

double Trampoline(const std::vector<double>& x, std::vector<double>& grad, void* data) {
  auto* state = static_cast<RunState*>(data);
  ++state->evaluations;
  double value = (*state->objective)(x, grad.empty() ? nullptr : &grad);
  if (!std::isfinite(value)) {
    state->saw_non_finite = true;
    throw nlopt::forced_stop();  // NLopt catches this and ends the run cleanly.
  }
  if (value < state->best_value) {
    state->best_value = value;
    state->best_x = x;
  }
  return value;
}

const char* ResultName(nlopt::result result) {
  switch (result) {
    case nlopt::SUCCESS:
      return "success";
    case nlopt::STOPVAL_REACHED:
      return "stopval reached";
    case nlopt::FTOL_REACHED:
      return "ftol reached";
    case nlopt::XTOL_REACHED:
      return "xtol reached";
    case nlopt::MAXEVAL_REACHED:
      return "maxeval reached";
    case nlopt::MAXTIME_REACHED:
      return "maxtime reached";
    default:
      return "failure";
  }
}

}  // namespace

StatusOr<NloptOutcome> MinimizeInBox(const NloptProblem& problem, const BoxObjective& objective,
                                     const std::string& what) {
  const size_t dims = problem.lower.size();
  if (dims == 0 || problem.upper.size() != dims || problem.start.size() != dims) {
    return Status::InvalidArgument(what + ": optimizer box has inconsistent sizes");
  }
  for (size_t i = 0; i < dims; ++i) {
    if (!(problem.lower[i] < problem.upper[i])) {
      return Status::InvalidArgument(what + ": empty box in coordinate " + std::to_string(i));
    }
  }
  RunState state;
  state.objective = &objective;
  std::vector<double> x(dims);
  for (size_t i = 0; i < dims; ++i) {
    double s = problem.start[i];
    x[i] = std::isfinite(s) ? std::clamp(s, problem.lower[i], problem.upper[i])
                            : 0.5 * (problem.lower[i] + problem.upper[i]);
  }
  std::string termination;
  try {
    nlopt::opt opt(problem.algorithm, static_cast<unsigned>(dims));
    opt.set_lower_bounds(problem.lower);
    opt.set_upper_bounds(problem.upper);
    opt.set_min_objective(&Trampoline, &state);
    opt.set_maxeval(std::max(1, problem.max_evaluations));
    if (problem.relative_x_tolerance > 0) opt.set_xtol_rel(problem.relative_x_tolerance);
    if (problem.relative_f_tolerance > 0) opt.set_ftol_rel(problem.relative_f_tolerance);
    double value = 0.0;
    nlopt::result result = opt.optimize(x, value);
    termination = ResultName(result);
  } catch (const nlopt::roundoff_limited&) {
    termination = "roundoff limited";
  } catch (const nlopt::forced_stop&) {
    termination = state.saw_non_finite ? "stopped at a non-finite objective value" : "forced stop";
  } catch (const std::invalid_argument& e) {
    return Status::InvalidArgument(what + ": NLopt rejected the problem: " + e.what());
  } catch (const std::bad_alloc&) {
    return Status::Internal(what + ": NLopt ran out of memory");
  } catch (const std::exception& e) {
    termination = std::string("failure: ") + e.what();
  }
  if (state.best_x.empty()) {
    return Status::Internal(what + ": no finite objective value in " +
                            std::to_string(state.evaluations) + " evaluations (" + termination +
                            ")");
  }
  NloptOutcome outcome;
  outcome.best_x = std::move(state.best_x);
  for (size_t i = 0; i < dims; ++i) {
    outcome.best_x[i] = std::clamp(outcome.best_x[i], problem.lower[i], problem.upper[i]);
  }
  outcome.best_value = state.best_value;
  outcome.evaluations = state.evaluations;
  outcome.termination = termination;
  return outcome;
}

}  // namespace autotune::tuner
