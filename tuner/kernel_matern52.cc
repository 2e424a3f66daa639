#include "tuner/kernel_matern52.h"

#include <algorithm>
#include <cmath>

namespace autotune::tuner {
namespace {
const double kSqrt5 = std::sqrt(5.0);
}  // namespace

Matern52Kernel::Matern52Kernel(int input_dims)
    : length_scales_(Eigen::VectorXd::Constant(input_dims, 0.5)) {}

Eigen::VectorXd Matern52Kernel::log_params() const {
  Eigen::VectorXd p(num_log_params());
  p.head(input_dims()) = length_scales_.array().log().matrix();
  p[input_dims()] = std::log(signal_variance_);
  return p;
}

Status Matern52Kernel::SetLogParams(const Eigen::VectorXd& log_params) {
  if (log_params.size() != num_log_params()) {
    return Status::InvalidArgument("Matern-5/2 kernel: expected " +
                                   std::to_string(num_log_params()) + " log parameters, got " +
                                   std::to_string(log_params.size()));
  }
  Eigen::VectorXd values = log_params.array().exp().matrix();
  if (!log_params.allFinite() || !values.allFinite() || (values.array() <= 0.0).any()) {
    return Status::InvalidArgument("Matern-5/2 kernel: non-finite hyperparameter");
  }
  length_scales_ = values.head(input_dims());
  signal_variance_ = values[input_dims()];
  return Status::Ok();
}

double Matern52Kernel::CovarianceAtDistance(double r) const {
  return signal_variance_ * (1.0 + kSqrt5 * r + (5.0 / 3.0) * r * r) * std::exp(-kSqrt5 * r);
}

double Matern52Kernel::NegativeDerivativeOverDistance(double r) const {
  return signal_variance_ * (5.0 / 3.0) * (1.0 + kSqrt5 * r) * std::exp(-kSqrt5 * r);
}

double Matern52Kernel::Evaluate(const Eigen::Ref<const Eigen::VectorXd>& a,
                                const Eigen::Ref<const Eigen::VectorXd>& b) const {
  double r = ((a - b).array() / length_scales_.array()).matrix().norm();
  return CovarianceAtDistance(r);
}

void Matern52Kernel::GradientLogParams(const Eigen::Ref<const Eigen::VectorXd>& a,
                                       const Eigen::Ref<const Eigen::VectorXd>& b,
                                       Eigen::Ref<Eigen::VectorXd> gradient) const {
  Eigen::ArrayXd scaled = (a - b).array() / length_scales_.array();
  double r = scaled.matrix().norm();
  // dk/dlog l_i = (-dk/dr / r) * ((a_i - b_i) / l_i)^2; finite at r = 0 (it is 0 there).
  gradient.head(input_dims()) = (NegativeDerivativeOverDistance(r) * scaled.square()).matrix();
  gradient[input_dims()] = CovarianceAtDistance(r);  // dk/dlog s = k
}

Eigen::MatrixXd Matern52Kernel::Cross(const Eigen::MatrixXd& x, const Eigen::MatrixXd& y) const {
  Eigen::ArrayXd inverse_scale = length_scales_.array().inverse();
  Eigen::MatrixXd xs = x.array().colwise() * inverse_scale;
  Eigen::MatrixXd ys = y.array().colwise() * inverse_scale;
  // Squared distances by |a|^2 + |b|^2 - 2 a.b, clamped at 0 against cancellation.
  Eigen::VectorXd x_norms = xs.colwise().squaredNorm().transpose();
  Eigen::RowVectorXd y_norms = ys.colwise().squaredNorm();
  Eigen::MatrixXd squared = (-2.0 * xs.transpose() * ys).colwise() + x_norms;
  squared.rowwise() += y_norms;
  return squared.unaryExpr(
      [this](double s) { return CovarianceAtDistance(std::sqrt(std::max(s, 0.0))); });
}

Eigen::MatrixXd Matern52Kernel::Gram(const Eigen::MatrixXd& x) const {
  const Eigen::Index n = x.cols();
  Eigen::MatrixXd gram(n, n);
  Eigen::ArrayXd inverse_scale = length_scales_.array().inverse();
  Eigen::MatrixXd xs = x.array().colwise() * inverse_scale;
  for (Eigen::Index j = 0; j < n; ++j) {
    gram(j, j) = signal_variance_;
    for (Eigen::Index i = j + 1; i < n; ++i) {
      double r = (xs.col(i) - xs.col(j)).norm();
      gram(i, j) = gram(j, i) = CovarianceAtDistance(r);
    }
  }
  return gram;
}

Eigen::VectorXd Matern52Kernel::CrossVector(const Eigen::MatrixXd& x,
                                            const Eigen::VectorXd& point) const {
  Eigen::ArrayXd inverse_scale = length_scales_.array().inverse();
  Eigen::VectorXd distances = ((x.colwise() - point).array().colwise() * inverse_scale)
                                  .matrix()
                                  .colwise()
                                  .norm()
                                  .transpose();
  return distances.unaryExpr([this](double r) { return CovarianceAtDistance(r); });
}

}  // namespace autotune::tuner
