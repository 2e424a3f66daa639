#include "tuner/gaussian_process.h"

#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>

namespace autotune::tuner {
namespace {

// A factor is accepted when every pivot^2 (the conditional variance of a sample given the
// earlier ones) is at least this fraction of the largest diagonal entry.
constexpr double kMinRelativePivot = 1e-12;
// Jitter steps, as fractions of the largest diagonal entry: 0, then 1e-10 .. 1e-4.
constexpr double kFirstJitter = 1e-10;
constexpr double kLastJitter = 1e-4;

std::string FormatDouble(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.3g", v);
  return buffer;
}

}  // namespace

GaussianProcess::GaussianProcess(int input_dims, GpOptions options)
    : options_(options), kernel_(input_dims) {
  noise_variance_ = options_.fixed_noise_stddev >= 0.0
                        ? options_.fixed_noise_stddev * options_.fixed_noise_stddev
                        : std::max(1e-3, options_.min_noise_variance);
  x_.resize(input_dims, 0);
}

Status GaussianProcess::CheckData(const Eigen::MatrixXd& x, const Eigen::VectorXd& y) const {
  if (x.rows() != input_dims()) {
    return Status::InvalidArgument("Gaussian process: inputs have " + std::to_string(x.rows()) +
                                   " coordinates, the model " + std::to_string(input_dims()));
  }
  if (x.cols() != y.size()) {
    return Status::InvalidArgument("Gaussian process: " + std::to_string(x.cols()) +
                                   " inputs but " + std::to_string(y.size()) + " outputs");
  }
  if (!x.allFinite()) return Status::InvalidArgument("Gaussian process: non-finite input");
  if (!y.allFinite()) return Status::InvalidArgument("Gaussian process: non-finite output");
  return Status::Ok();
}

Eigen::VectorXd GaussianProcess::Standardized(const Eigen::VectorXd& y) const {
  return (y.array() - output_mean_) / output_scale_;
}

Status GaussianProcess::Factor(const Matern52Kernel& kernel, double noise_variance,
                               const Eigen::MatrixXd& x, Eigen::MatrixXd* lower,
                               double* jitter) const {
  const Eigen::Index n = x.cols();
  Eigen::MatrixXd covariance = kernel.Gram(x);
  covariance.diagonal().array() += noise_variance;
  if (!covariance.allFinite()) {
    return Status::Internal("Gaussian process: covariance matrix has non-finite entries");
  }
  const double scale = covariance.diagonal().maxCoeff();
  double added = 0.0;
  for (;;) {
    Eigen::MatrixXd jittered = covariance;
    jittered.diagonal().array() += added;
    Eigen::LLT<Eigen::MatrixXd> llt(jittered);
    if (llt.info() == Eigen::Success) {
      Eigen::VectorXd pivots = llt.matrixLLT().diagonal();
      if (pivots.allFinite() && pivots.minCoeff() > 0.0 &&
          pivots.array().square().minCoeff() >= kMinRelativePivot * scale) {
        *lower = llt.matrixL();
        *jitter = added;
        return Status::Ok();
      }
    }
    double next = added == 0.0 ? kFirstJitter * scale : added * 10.0;
    if (next > kLastJitter * scale * (1.0 + 1e-9)) break;
    added = next;
  }
  return Status::Internal("Gaussian process: Cholesky factorization of the " + std::to_string(n) +
                          "x" + std::to_string(n) +
                          " covariance failed even with diagonal jitter " +
                          FormatDouble(kLastJitter * scale) +
                          " (duplicate inputs with zero noise, or extreme hyperparameters)");
}

void GaussianProcess::SolveAlpha() {
  auto lower = chol_lower_.triangularView<Eigen::Lower>();
  alpha_ = lower.solve(Standardized(y_));
  lower.transpose().solveInPlace(alpha_);
}

Status GaussianProcess::SetData(const Eigen::MatrixXd& x, const Eigen::VectorXd& y) {
  AUTOTUNE_RETURN_IF_ERROR(CheckData(x, y));
  Eigen::MatrixXd lower;
  double jitter = 0.0;
  if (x.cols() > 0) AUTOTUNE_RETURN_IF_ERROR(Factor(kernel_, noise_variance_, x, &lower, &jitter));
  x_ = x;
  y_ = y;
  chol_lower_ = std::move(lower);
  jitter_ = jitter;
  SolveAlpha();
  return Status::Ok();
}

Status GaussianProcess::AddSample(const Eigen::VectorXd& x, double y) {
  if (x.size() != input_dims()) {
    return Status::InvalidArgument("Gaussian process: sample has " + std::to_string(x.size()) +
                                   " coordinates, the model " + std::to_string(input_dims()));
  }
  if (!x.allFinite() || !std::isfinite(y)) {
    return Status::InvalidArgument("Gaussian process: non-finite sample");
  }
  const Eigen::Index n = x_.cols();
  Eigen::MatrixXd grown_x(input_dims(), n + 1);
  grown_x << x_, x;
  Eigen::VectorXd grown_y(n + 1);
  grown_y << y_, y;
  if (n == 0) return SetData(grown_x, grown_y);

  // [K k; k' kappa] = [L 0; l' p][L' l; 0 p] with l = L^-1 k, p^2 = kappa - l'l.
  const double kappa = kernel_.signal_variance() + noise_variance_ + jitter_;
  Eigen::VectorXd cross = kernel_.CrossVector(x_, x);
  Eigen::VectorXd l = chol_lower_.triangularView<Eigen::Lower>().solve(cross);
  const double pivot_squared = kappa - l.squaredNorm();
  if (!l.allFinite() || !(pivot_squared >= kMinRelativePivot * kappa)) {
    return SetData(grown_x, grown_y);  // refactor from scratch, with jitter retry
  }
  Eigen::MatrixXd grown_lower = Eigen::MatrixXd::Zero(n + 1, n + 1);
  grown_lower.topLeftCorner(n, n) = chol_lower_;
  grown_lower.block(n, 0, 1, n) = l.transpose();
  grown_lower(n, n) = std::sqrt(pivot_squared);
  chol_lower_ = std::move(grown_lower);
  x_ = std::move(grown_x);
  y_ = std::move(grown_y);
  SolveAlpha();
  return Status::Ok();
}

Status GaussianProcess::SetHyperparameters(const Hyperparameters& hp) {
  if (hp.length_scales.size() != input_dims()) {
    return Status::InvalidArgument("Gaussian process: expected " + std::to_string(input_dims()) +
                                   " length scales, got " +
                                   std::to_string(hp.length_scales.size()));
  }
  if (!(hp.signal_variance > 0.0) || !(hp.noise_variance >= 0.0) ||
      !std::isfinite(hp.signal_variance) || !std::isfinite(hp.noise_variance) ||
      !(hp.length_scales.array() > 0.0).all() || !hp.length_scales.allFinite()) {
    return Status::InvalidArgument("Gaussian process: hyperparameters must be positive and finite");
  }
  Matern52Kernel kernel(input_dims());
  Eigen::VectorXd log_params(input_dims() + 1);
  log_params << hp.length_scales.array().log().matrix(), std::log(hp.signal_variance);
  AUTOTUNE_RETURN_IF_ERROR(kernel.SetLogParams(log_params));
  Eigen::MatrixXd lower;
  double jitter = 0.0;
  if (x_.cols() > 0) {
    AUTOTUNE_RETURN_IF_ERROR(Factor(kernel, hp.noise_variance, x_, &lower, &jitter));
  }
  kernel_ = kernel;
  noise_variance_ = hp.noise_variance;
  chol_lower_ = std::move(lower);
  jitter_ = jitter;
  SolveAlpha();
  return Status::Ok();
}

Hyperparameters GaussianProcess::hyperparameters() const {
  Hyperparameters hp;
  hp.length_scales = kernel_.length_scales();
  hp.signal_variance = kernel_.signal_variance();
  hp.noise_variance = noise_variance_;
  return hp;
}

Status GaussianProcess::SetStandardization(double mean, double scale) {
  if (!std::isfinite(mean) || !std::isfinite(scale) || !(scale > 0.0)) {
    return Status::InvalidArgument(
        "Gaussian process: standardization needs a finite mean and a "
        "positive scale");
  }
  output_mean_ = mean;
  output_scale_ = scale;
  if (x_.cols() > 0) SolveAlpha();
  return Status::Ok();
}

Prediction GaussianProcess::Predict(const Eigen::VectorXd& x) const {
  if (x_.cols() == 0) {
    return {output_mean_, kernel_.signal_variance() * output_scale_ * output_scale_};
  }
  Eigen::VectorXd cross = kernel_.CrossVector(x_, x);
  double mean = cross.dot(alpha_);
  Eigen::VectorXd v = chol_lower_.triangularView<Eigen::Lower>().solve(cross);
  double variance = std::max(0.0, kernel_.signal_variance() - v.squaredNorm());
  return {output_mean_ + output_scale_ * mean, variance * output_scale_ * output_scale_};
}

void GaussianProcess::PredictBatch(const Eigen::MatrixXd& x, Eigen::VectorXd* mean,
                                   Eigen::VectorXd* variance) const {
  const double scale2 = output_scale_ * output_scale_;
  if (x_.cols() == 0) {
    *mean = Eigen::VectorXd::Constant(x.cols(), output_mean_);
    *variance = Eigen::VectorXd::Constant(x.cols(), kernel_.signal_variance() * scale2);
    return;
  }
  Eigen::MatrixXd cross = kernel_.Cross(x_, x);  // n x m
  *mean = ((cross.transpose() * alpha_).array() * output_scale_ + output_mean_).matrix();
  chol_lower_.triangularView<Eigen::Lower>().solveInPlace(cross);
  *variance =
      ((kernel_.signal_variance() - cross.colwise().squaredNorm().transpose().array()).max(0.0) *
       scale2)
          .matrix();
}

}  // namespace autotune::tuner
