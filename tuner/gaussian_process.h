// GaussianProcess: GP regression with a Matérn-5/2 ARD kernel on unit-cube inputs.
//
// Outputs are standardized, (y - mean) / scale, with the mean and scale taken from the data
// at the last Fit() and then kept (AddSample and SetData reuse them, so adding a sample never
// changes the meaning of the hyperparameters). The prior mean is 0 on the standardized scale.
// Hyperparameters (length scales, signal variance, noise variance; the last two in
// standardized units) maximize the log marginal likelihood: NLopt LD_LBFGS with analytic
// gradients, from the previous optimum, a default start and random restarts.
// The covariance K + noise I is factored by Cholesky (Eigen LLT); when that fails or is
// numerically singular, jitter is added to the diagonal in growing steps and the amount used
// is reported by jitter(); when even the largest jitter fails the call returns an error and
// the model keeps its previous state.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <string>

#include "traces/status.h"
#include "tuner/kernel_matern52.h"
#include "tuner/surrogate_model.h"

namespace autotune::tuner {

struct GpOptions {
  // Horovod's --autotune-gaussian-process-noise: when >= 0, the observation noise standard
  // deviation in standardized output units, FIXED (noise variance = value^2 on the kernel's
  // diagonal, as Horovod adds alpha^2). Negative (default): the noise variance is learned.
  double fixed_noise_stddev = -1.0;
  double min_noise_variance = 1e-6;   // learned noise lower bound, standardized units
  double max_noise_variance = 1.0;    // learned noise upper bound, standardized units
  double min_length_scale = 0.01;     // unit-cube units
  double max_length_scale = 20.0;     // unit-cube units (large = input barely matters)
  double min_signal_variance = 0.01;  // standardized units
  double max_signal_variance = 100.0;
  // Weak log-normal prior on each hyperparameter, added to the log marginal likelihood by the
  // fit (a MAP estimate), so that a handful of samples cannot pick degenerate values (e.g. a
  // 0.01 length scale with unit noise on two points). false = pure maximum likelihood.
  bool hyperparameter_prior = true;
  double length_scale_prior_median = 0.5;     // unit-cube units
  double length_scale_prior_log_sd = 1.0;     // sd of log(length scale)
  double signal_variance_prior_median = 1.0;  // standardized units
  double signal_variance_prior_log_sd = 1.0;
  double noise_variance_prior_median = 1e-3;  // standardized units
  double noise_variance_prior_log_sd = 3.0;
  int random_restarts = 3;                // restarts besides the warm and default starts
  int max_evaluations_per_restart = 120;  // likelihood evaluations per L-BFGS run
  uint64_t seed = 1;                      // for the random restarts
};

struct Hyperparameters {
  Eigen::VectorXd length_scales;  // one per input, unit-cube units
  double signal_variance = 1.0;   // standardized output units
  double noise_variance = 1e-3;   // standardized output units
};

// What the last Fit() did; failures of single restarts are counted here, not hidden.
struct FitReport {
  int starts = 0;                        // optimizer runs started
  int failed_starts = 0;                 // runs that ended without a finite likelihood
  int evaluations = 0;                   // likelihood evaluations in all runs
  double log_marginal_likelihood = 0.0;  // at the chosen hyperparameters, prior excluded,
                                         // standardized outputs
  std::string last_failure;              // message of the last failed run, if any
};

class GaussianProcess : public SurrogateModel {
 public:
  explicit GaussianProcess(int input_dims, GpOptions options = {});

  // Sets the data (inputs one per column, d x n; outputs n), recomputes the standardization,
  // fits the hyperparameters and factors. Fails on empty or non-finite data, wrong sizes, or
  // when every optimizer start failed; the model is then unchanged.
  Status Fit(const Eigen::MatrixXd& x, const Eigen::VectorXd& y);
  // Sets the data and factors, keeping hyperparameters and standardization (the "full refit"
  // that AddSample must agree with). Fails like Fit; the model is then unchanged.
  Status SetData(const Eigen::MatrixXd& x, const Eigen::VectorXd& y);
  // Adds one sample by an O(n^2) update of the Cholesky factor; hyperparameters and
  // standardization stay. Falls back to a full factorization (with jitter retry) when the
  // update is numerically singular (e.g. a duplicate input with no noise).
  Status AddSample(const Eigen::VectorXd& x, double y);

  // Replaces the hyperparameters and refactors the current data. Fails on sizes or non-positive
  // values, or when the factorization fails; the model is then unchanged.
  Status SetHyperparameters(const Hyperparameters& hyperparameters);
  Hyperparameters hyperparameters() const;
  // Output standardization: standardized = (y - mean) / scale. REQUIRES: scale > 0.
  // Refactors the current data.
  Status SetStandardization(double mean, double scale);
  double output_mean() const { return output_mean_; }
  double output_scale() const { return output_scale_; }

  int input_dims() const override { return kernel_.input_dims(); }
  int num_samples() const { return static_cast<int>(y_.size()); }
  const Eigen::MatrixXd& inputs() const { return x_; }
  const Eigen::VectorXd& outputs() const { return y_; }  // original units
  // Diagonal jitter (standardized units) the current factorization needed; 0 when none.
  double jitter() const { return jitter_; }
  const FitReport& last_fit() const { return last_fit_; }
  const Matern52Kernel& kernel() const { return kernel_; }

  // Posterior at x in original units; the prior (mean output_mean, variance signal) when no
  // data are set.
  Prediction Predict(const Eigen::VectorXd& x) const override;
  void PredictBatch(const Eigen::MatrixXd& x, Eigen::VectorXd* mean,
                    Eigen::VectorXd* variance) const override;

  // Log marginal likelihood of the current standardized data at log hyperparameters
  // [log length_scale_1..d, log signal_variance, log noise_variance], and its gradient when
  // `gradient` is non-null. Fails when the covariance cannot be factored.
  StatusOr<double> LogMarginalLikelihood(const Eigen::VectorXd& log_params,
                                         Eigen::VectorXd* gradient) const;
  // Log density of the hyperparameter prior (0 when options disable it) at the same log
  // hyperparameters; adds its gradient to `gradient` when non-null.
  double LogHyperparameterPrior(const Eigen::VectorXd& log_params, Eigen::VectorXd* gradient) const;

 private:
  // Factors K(x) + (noise + jitter) I into *lower with jitter retry.
  Status Factor(const Matern52Kernel& kernel, double noise_variance, const Eigen::MatrixXd& x,
                Eigen::MatrixXd* lower, double* jitter) const;
  // Recomputes alpha_ = K^-1 standardized(y) from chol_lower_.
  void SolveAlpha();
  Eigen::VectorXd Standardized(const Eigen::VectorXd& y) const;
  Status CheckData(const Eigen::MatrixXd& x, const Eigen::VectorXd& y) const;

  GpOptions options_;
  Matern52Kernel kernel_;
  double noise_variance_;
  double output_mean_ = 0.0;
  double output_scale_ = 1.0;
  Eigen::MatrixXd x_;           // d x n
  Eigen::VectorXd y_;           // n, original units
  Eigen::MatrixXd chol_lower_;  // L with L L^T = K + (noise + jitter) I
  Eigen::VectorXd alpha_;       // K^-1 standardized(y)
  double jitter_ = 0.0;
  FitReport last_fit_;
};

}  // namespace autotune::tuner
