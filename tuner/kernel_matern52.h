// Matern52Kernel: the Matérn-5/2 covariance with one length scale per input (ARD).
//
//   r = sqrt(sum_i ((a_i - b_i) / length_scale_i)^2)
//   k(a, b) = signal_variance * (1 + sqrt(5) r + 5/3 r^2) * exp(-sqrt(5) r)
//
// Hyperparameters are exposed as logs, [log length_scale_1 .. log length_scale_d,
// log signal_variance], the coordinates the marginal likelihood is optimized in.
#pragma once

#include <Eigen/Core>

#include "traces/status.h"

namespace autotune::tuner {

class Matern52Kernel {
 public:
  // All length scales 0.5 (inputs live in [0,1]) and signal variance 1.
  explicit Matern52Kernel(int input_dims);

  int input_dims() const { return static_cast<int>(length_scales_.size()); }
  int num_log_params() const { return input_dims() + 1; }
  const Eigen::VectorXd& length_scales() const { return length_scales_; }
  double signal_variance() const { return signal_variance_; }

  Eigen::VectorXd log_params() const;
  // Fails (kInvalidArgument) on a wrong size or a non-finite value; then nothing changes.
  Status SetLogParams(const Eigen::VectorXd& log_params);

  // k(a, b). REQUIRES: a.size() == b.size() == input_dims().
  double Evaluate(const Eigen::Ref<const Eigen::VectorXd>& a,
                  const Eigen::Ref<const Eigen::VectorXd>& b) const;
  // d k(a, b) / d log_params, written to `gradient` (size num_log_params()).
  void GradientLogParams(const Eigen::Ref<const Eigen::VectorXd>& a,
                         const Eigen::Ref<const Eigen::VectorXd>& b,
                         Eigen::Ref<Eigen::VectorXd> gradient) const;
  // K(i, j) = k(x.col(i), x.col(j)) for inputs stored one per column (d x n).
  Eigen::MatrixXd Gram(const Eigen::MatrixXd& x) const;
  // K(i, j) = k(x.col(i), y.col(j)).
  Eigen::MatrixXd Cross(const Eigen::MatrixXd& x, const Eigen::MatrixXd& y) const;
  // k(x.col(i), point) for every column i.
  Eigen::VectorXd CrossVector(const Eigen::MatrixXd& x, const Eigen::VectorXd& point) const;

  // k as a function of the scaled distance r.
  double CovarianceAtDistance(double r) const;
  // -(1/r) dk/dr = signal_variance * 5/3 * (1 + sqrt(5) r) * exp(-sqrt(5) r): the factor every
  // length-scale derivative shares (finite at r = 0).
  double NegativeDerivativeOverDistance(double r) const;

 private:
  Eigen::VectorXd length_scales_;
  double signal_variance_ = 1.0;
};

}  // namespace autotune::tuner
