// Expected improvement (for maximization) and its maximization over the unit cube.
//
//   EI(x) = (mu - best - xi) Phi(z) + sigma phi(z),  z = (mu - best - xi) / sigma,
// with mu and sigma^2 the model's posterior mean and variance at x; EI = max(mu - best - xi, 0)
// where sigma is 0. The acquisition is evaluated at Space::Snap(x), the point x stands for once
// integers are rounded and booleans/categories decided, so one joint optimization covers
// every dimension (no odometer over the discrete ones): NLopt GN_DIRECT_L globally plus a
// batch of random candidates, then LN_BOBYQA polishes the best few starts.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <vector>

#include "traces/status.h"
#include "tuner/space.h"
#include "tuner/surrogate_model.h"

namespace autotune::tuner {

// Closed form above. REQUIRES: variance >= 0.
double ExpectedImprovement(double mean, double variance, double best, double xi);

struct AcquisitionOptions {
  double xi = 0.0;               // exploration margin, in the model's output units
  int global_evaluations = 600;  // GN_DIRECT_L evaluations
  int random_candidates = 512;   // random settings screened in one batch prediction
  int local_starts = 3;          // distinct best starts polished locally
  int local_evaluations = 100;   // LN_BOBYQA evaluations per polish
  uint64_t seed = 1;             // for the random candidates
};

struct AcquisitionResult {
  Eigen::VectorXd encoded;          // the chosen point, snapped, in the unit cube
  Point point;                      // the same point in native values
  double expected_improvement = 0;  // EI there, model output units
  Prediction prediction;            // the model's posterior there
  int evaluations = 0;              // acquisition evaluations used
};

// Maximizes EI of `model` over `space` against the incumbent value `best`. `extra_starts`
// (unit-cube points, e.g. the incumbent) join the local polish candidates. Fails when the
// space has nothing to tune, or when every optimizer run failed (naming NLopt's reason).
StatusOr<AcquisitionResult> MaximizeExpectedImprovement(
    const SurrogateModel& model, const Space& space, double best, const AcquisitionOptions& options,
    const std::vector<Eigen::VectorXd>& extra_starts = {});

}  // namespace autotune::tuner
