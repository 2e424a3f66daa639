#include "tuner/cokriging.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace autotune::tuner {

CoKriging::CoKriging(int input_dims, CoKrigingOptions options)
    : options_(options),
      simulated_(input_dims, options.simulated_gp),
      residual_(input_dims, options.residual_gp) {
  measured_x_.resize(input_dims, 0);
}

Status CoKriging::FitSimulated(const Eigen::MatrixXd& x, const Eigen::VectorXd& y) {
  AUTOTUNE_RETURN_IF_ERROR(simulated_.Fit(x, y).WithPrefix("simulated model"));
  measured_stale_ = num_measured() > 0;
  return Status::Ok();
}

Status CoKriging::AddSimulated(const Eigen::VectorXd& x, double y) {
  if (simulated_.num_samples() == 0) {
    Eigen::MatrixXd xs = x;
    return FitSimulated(xs, Eigen::VectorXd::Constant(1, y));
  }
  AUTOTUNE_RETURN_IF_ERROR(simulated_.AddSample(x, y).WithPrefix("simulated model"));
  measured_stale_ = num_measured() > 0;
  return Status::Ok();
}

double CoKriging::ProfileLogLikelihood(const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
                                       const Eigen::VectorXd& simulated_mean, double rho) const {
  GpOptions quick = options_.residual_gp;
  quick.random_restarts = 0;
  quick.max_evaluations_per_restart = std::min(quick.max_evaluations_per_restart, 60);
  GaussianProcess trial(input_dims(), quick);
  if (residual_.num_samples() > 0) (void)trial.SetHyperparameters(residual_.hyperparameters());
  if (!trial.Fit(x, y - rho * simulated_mean).ok()) {
    return -std::numeric_limits<double>::infinity();
  }
  double log_prior = 0.0;
  if (options_.rho_prior_sd > 0.0) {
    const double z = (rho - 1.0) / options_.rho_prior_sd;
    log_prior = -0.5 * z * z;
  }
  return trial.last_fit().log_marginal_likelihood -
         static_cast<double>(y.size()) * std::log(trial.output_scale()) + log_prior;
}

double CoKriging::EstimateRho(const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
                              const Eigen::VectorXd& simulated_mean) const {
  // Distinct settings, not samples: repeats of one setting add no slope (two settings fit any
  // scale with a zero residual, so a third run of either one let the likelihood pick rho = 0
  // and drop the simulation: bench/horovod, the MLP's search on /tmp/hvdG1S).
  std::vector<Eigen::Index> distinct;
  for (Eigen::Index j = 0; j < x.cols(); ++j) {
    const bool seen = std::any_of(distinct.begin(), distinct.end(),
                                  [&](Eigen::Index k) { return x.col(k) == x.col(j); });
    if (!seen) distinct.push_back(j);
  }
  if (static_cast<int>(distinct.size()) < options_.min_measured_for_rho) return 1.0;
  const double lo = options_.min_rho, hi = std::max(options_.min_rho, options_.max_rho);
  std::vector<double> candidates;
  const int grid = std::max(2, options_.rho_grid_points);
  candidates.reserve(grid + 1);
  for (int i = 0; i < grid; ++i) candidates.push_back(lo + (hi - lo) * i / (grid - 1.0));
  // The least-squares slope (with an intercept) joins the candidates.
  Eigen::ArrayXd s = simulated_mean.array() - simulated_mean.mean();
  Eigen::ArrayXd m = y.array() - y.mean();
  if (s.square().sum() > 0.0) {
    candidates.push_back(std::clamp((s * m).sum() / s.square().sum(), lo, hi));
  }
  double best_rho = 1.0;
  double best = -std::numeric_limits<double>::infinity();
  for (double rho : candidates) {
    double value = ProfileLogLikelihood(x, y, simulated_mean, rho);
    if (value > best) {
      best = value;
      best_rho = rho;
    }
  }
  if (!std::isfinite(best)) return 1.0;
  // Golden-section refinement inside one grid step on each side.
  const double step = (hi - lo) / (grid - 1.0);
  double a = std::max(lo, best_rho - step), b = std::min(hi, best_rho + step);
  const double ratio = (std::sqrt(5.0) - 1.0) / 2.0;
  double c = b - ratio * (b - a), d = a + ratio * (b - a);
  double fc = ProfileLogLikelihood(x, y, simulated_mean, c);
  double fd = ProfileLogLikelihood(x, y, simulated_mean, d);
  for (int i = 0; i < options_.rho_refine_steps; ++i) {
    if (fc > fd) {
      b = d;
      d = c;
      fd = fc;
      c = b - ratio * (b - a);
      fc = ProfileLogLikelihood(x, y, simulated_mean, c);
    } else {
      a = c;
      c = d;
      fc = fd;
      d = a + ratio * (b - a);
      fd = ProfileLogLikelihood(x, y, simulated_mean, d);
    }
  }
  if (fc > best) {
    best_rho = c;
    best = fc;
  }
  if (fd > best) {
    best_rho = d;
    best = fd;
  }
  return best_rho;
}

Status CoKriging::FitMeasured(const Eigen::MatrixXd& x, const Eigen::VectorXd& y) {
  if (x.cols() != y.size() || x.rows() != input_dims()) {
    return Status::InvalidArgument("co-kriging: measured inputs and outputs disagree in size");
  }
  if (y.size() == 0) return Status::InvalidArgument("co-kriging: no measured samples to fit");
  Eigen::VectorXd residual = y;
  double rho = 0.0;
  if (simulated_.num_samples() > 0) {
    Eigen::VectorXd simulated_mean, simulated_variance;
    simulated_.PredictBatch(x, &simulated_mean, &simulated_variance);
    rho = EstimateRho(x, y, simulated_mean);
    residual = y - rho * simulated_mean;
  }
  AUTOTUNE_RETURN_IF_ERROR(residual_.Fit(x, residual).WithPrefix("residual model"));
  measured_x_ = x;
  measured_y_ = y;
  rho_ = rho;
  measured_stale_ = false;
  return Status::Ok();
}

Status CoKriging::RefitMeasured() {
  if (num_measured() == 0) {
    measured_stale_ = false;
    return Status::Ok();
  }
  Eigen::MatrixXd x = measured_x_;
  Eigen::VectorXd y = measured_y_;
  return FitMeasured(x, y);
}

Status CoKriging::AddMeasured(const Eigen::VectorXd& x, double y) {
  if (x.size() != input_dims()) {
    return Status::InvalidArgument("co-kriging: measured sample has the wrong size");
  }
  Eigen::MatrixXd grown_x(input_dims(), measured_x_.cols() + 1);
  grown_x << measured_x_, x;
  Eigen::VectorXd grown_y(measured_y_.size() + 1);
  grown_y << measured_y_, y;
  if (num_measured() == 0 || measured_stale_) return FitMeasured(grown_x, grown_y);
  double simulated_mean = simulated_.num_samples() > 0 ? simulated_.Predict(x).mean : 0.0;
  double rho = simulated_.num_samples() > 0 ? rho_ : 0.0;
  AUTOTUNE_RETURN_IF_ERROR(
      residual_.AddSample(x, y - rho * simulated_mean).WithPrefix("residual model"));
  measured_x_ = std::move(grown_x);
  measured_y_ = std::move(grown_y);
  return Status::Ok();
}

Prediction CoKriging::Predict(const Eigen::VectorXd& x) const {
  const bool has_simulated = simulated_.num_samples() > 0;
  if (num_measured() == 0) return simulated_.Predict(x);
  Prediction delta = residual_.Predict(x);
  if (!has_simulated) return delta;
  Prediction sim = simulated_.Predict(x);
  return {rho_ * sim.mean + delta.mean, rho_ * rho_ * sim.variance + delta.variance};
}

void CoKriging::PredictBatch(const Eigen::MatrixXd& x, Eigen::VectorXd* mean,
                             Eigen::VectorXd* variance) const {
  const bool has_simulated = simulated_.num_samples() > 0;
  if (num_measured() == 0) {
    simulated_.PredictBatch(x, mean, variance);
    return;
  }
  residual_.PredictBatch(x, mean, variance);
  if (!has_simulated) return;
  Eigen::VectorXd sim_mean, sim_variance;
  simulated_.PredictBatch(x, &sim_mean, &sim_variance);
  *mean += rho_ * sim_mean;
  *variance += rho_ * rho_ * sim_variance;
}

}  // namespace autotune::tuner
