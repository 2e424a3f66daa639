// CoKriging: the two-fidelity model, autoregressive (Kennedy & O'Hagan):
//
//   measured(x) = rho * simulated(x) + delta(x)
//
// A GP on the simulated samples; a GP on the residuals measured - rho * simulated_mean at the
// measured points; rho by profile likelihood: the value in [min_rho, max_rho] (a grid, the
// least-squares estimate, then a golden-section refinement) whose residual GP has the highest
// marginal likelihood of the residuals in their own units (standardized likelihood minus
// n log(scale), so candidates are comparable), plus a weak normal prior centred at rho = 1. A
// smooth residual means a good rho: this is what separates a true scale factor from a trend the
// residual can carry. The combined posterior is
//   mean = rho * mean_sim(x) + mean_delta(x),  variance = rho^2 var_sim(x) + var_delta(x)
// (the two GPs taken as independent). Degenerate cases, stated rather than hidden:
//   no measured samples: the prediction is the simulated GP's (rho = 1, delta = 0);
//   no simulated samples: rho = 0 and delta is a plain GP on the measured scores;
//   fewer than min_measured_for_rho distinct measured settings (repeats of one setting count
//   once): rho = 1 (delta absorbs the offset).
#pragma once

#include <Eigen/Core>

#include "traces/status.h"
#include "tuner/gaussian_process.h"
#include "tuner/surrogate_model.h"

namespace autotune::tuner {

struct CoKrigingOptions {
  GpOptions simulated_gp;        // GP on simulated samples
  GpOptions residual_gp;         // GP on the residuals at measured points
  int min_measured_for_rho = 3;  // fewer distinct measured settings: rho = 1
  double min_rho = 0.0;          // rho is searched in [min_rho, max_rho]
  double max_rho = 10.0;
  int rho_grid_points = 21;   // grid candidates before the refinement
  int rho_refine_steps = 10;  // golden-section steps around the best grid candidate
  // Normal prior on rho centred at 1 (the simulator predicts the measurement in its own units),
  // added to the profile likelihood so that a few measured samples cannot swing rho to 0 or
  // max_rho; its weight fades as samples accumulate. 0 = no prior.
  double rho_prior_sd = 0.5;
};

class CoKriging : public SurrogateModel {
 public:
  CoKriging(int input_dims, CoKrigingOptions options = {});

  // Simulated fidelity: Fit refits hyperparameters, Add updates incrementally. Either makes
  // the measured part stale (its residuals depend on the simulated mean): call FitMeasured
  // or RefitMeasured before predicting again.
  Status FitSimulated(const Eigen::MatrixXd& x, const Eigen::VectorXd& y);
  Status AddSimulated(const Eigen::VectorXd& x, double y);

  // Measured fidelity: estimates rho and fits the residual GP (hyperparameters included).
  Status FitMeasured(const Eigen::MatrixXd& x, const Eigen::VectorXd& y);
  // FitMeasured on the measured samples already held.
  Status RefitMeasured();
  // Adds a measured sample with rho and the residual GP's hyperparameters kept (O(n^2)).
  Status AddMeasured(const Eigen::VectorXd& x, double y);

  double rho() const { return rho_; }
  bool measured_stale() const { return measured_stale_; }
  int num_simulated() const { return simulated_.num_samples(); }
  int num_measured() const { return static_cast<int>(measured_y_.size()); }
  const GaussianProcess& simulated_model() const { return simulated_; }
  const GaussianProcess& residual_model() const { return residual_; }

  int input_dims() const override { return simulated_.input_dims(); }
  Prediction Predict(const Eigen::VectorXd& x) const override;
  void PredictBatch(const Eigen::MatrixXd& x, Eigen::VectorXd* mean,
                    Eigen::VectorXd* variance) const override;

 private:
  // Profile likelihood of the residuals y - rho * simulated_mean (a quick residual fit).
  double ProfileLogLikelihood(const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
                              const Eigen::VectorXd& simulated_mean, double rho) const;
  double EstimateRho(const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
                     const Eigen::VectorXd& simulated_mean) const;

  CoKrigingOptions options_;
  GaussianProcess simulated_;
  GaussianProcess residual_;
  Eigen::MatrixXd measured_x_;
  Eigen::VectorXd measured_y_;
  double rho_ = 1.0;
  bool measured_stale_ = false;
};

}  // namespace autotune::tuner
