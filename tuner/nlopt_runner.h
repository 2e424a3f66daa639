// NloptRunner: runs one NLopt minimization inside a box and turns every way it can end into
// a value or a Status. NLopt's C++ API reports failures by throwing; nothing here throws.
#pragma once

#include <functional>
#include <nlopt.hpp>
#include <string>
#include <vector>

#include "traces/status.h"

namespace autotune::tuner {

// The objective: returns f(x); when `gradient` is non-null (gradient-based algorithms) it
// also fills df/dx into it (same size as x). Must not throw. A non-finite return marks a
// point where f could not be computed; the run then stops with that point excluded.
using BoxObjective =
    std::function<double(const std::vector<double>& x, std::vector<double>* gradient)>;

struct NloptProblem {
  nlopt::algorithm algorithm = nlopt::LN_BOBYQA;
  std::vector<double> lower;           // box lower bounds, one per coordinate
  std::vector<double> upper;           // box upper bounds, one per coordinate
  std::vector<double> start;           // starting point (clamped into the box)
  int max_evaluations = 200;           // hard cap on objective evaluations
  double relative_x_tolerance = 1e-6;  // xtol_rel; 0 disables
  double relative_f_tolerance = 0.0;   // ftol_rel; 0 disables
};

struct NloptOutcome {
  std::vector<double> best_x;  // best point evaluated (finite value), never outside the box
  double best_value = 0.0;     // f(best_x)
  int evaluations = 0;         // objective evaluations used
  // How NLopt ended: "xtol reached", "maxeval reached", "roundoff limited", ... For
  // information; roundoff and forced stops with a finite best point are not errors.
  std::string termination;
};

// Minimizes `objective` over the box. Returns the best finite point evaluated. Fails
// (kInternal, naming `what` and NLopt's reason) when no evaluation gave a finite value, or
// kInvalidArgument when the problem is malformed (sizes, bounds, algorithm).
StatusOr<NloptOutcome> MinimizeInBox(const NloptProblem& problem, const BoxObjective& objective,
                                     const std::string& what);

}  // namespace autotune::tuner
