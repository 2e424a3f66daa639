#include "tuner/cokriging.h"

#include <algorithm>

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

double CoKriging::EstimateRho(const Eigen::VectorXd& simulated_mean,
                              const Eigen::VectorXd& y) const {
  if (y.size() < options_.min_measured_for_rho) return 1.0;
  Eigen::ArrayXd s = simulated_mean.array() - simulated_mean.mean();
  Eigen::ArrayXd m = y.array() - y.mean();
  double spread = s.square().sum();
  double magnitude = std::max(1.0, simulated_mean.array().abs().maxCoeff());
  if (!(spread > 1e-20 * magnitude * magnitude * static_cast<double>(y.size()))) return 1.0;
  return std::clamp((s * m).sum() / spread, options_.min_rho, options_.max_rho);
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
    rho = EstimateRho(simulated_mean, y);
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
