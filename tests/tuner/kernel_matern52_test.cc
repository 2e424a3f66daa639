#include "tuner/kernel_matern52.h"

#include <gtest/gtest.h>

#include <cmath>

namespace autotune::tuner {
namespace {

TEST(Matern52KernelTest, ValueAtKnownDistance) {
  Matern52Kernel kernel(2);
  Eigen::VectorXd log_params(3);
  log_params << std::log(0.5), std::log(2.0), std::log(1.5);
  ASSERT_TRUE(kernel.SetLogParams(log_params).ok());
  Eigen::VectorXd a(2), b(2);
  a << 0.1, 0.2;
  b << 0.4, 0.6;
  // r = sqrt((0.3/0.5)^2 + (0.4/2)^2)
  const double r = std::sqrt(0.36 + 0.04);
  const double s5 = std::sqrt(5.0);
  const double expected = 1.5 * (1 + s5 * r + 5.0 / 3.0 * r * r) * std::exp(-s5 * r);
  EXPECT_NEAR(kernel.Evaluate(a, b), expected, 1e-14);
  EXPECT_DOUBLE_EQ(kernel.Evaluate(a, a), 1.5);
  // The matrix forms agree with Evaluate.
  Eigen::MatrixXd x(2, 2);
  x << a, b;
  EXPECT_NEAR(kernel.Gram(x)(0, 1), expected, 1e-14);
  EXPECT_NEAR(kernel.Cross(x, x)(1, 0), expected, 1e-12);
  EXPECT_NEAR(kernel.CrossVector(x, b)[0], expected, 1e-14);
}

TEST(Matern52KernelTest, GradientMatchesFiniteDifferences) {
  const int d = 3;
  Matern52Kernel kernel(d);
  Eigen::VectorXd log_params(d + 1);
  log_params << std::log(0.3), std::log(0.8), std::log(0.15), std::log(2.0);
  ASSERT_TRUE(kernel.SetLogParams(log_params).ok());
  Eigen::VectorXd a(d), b(d);
  a << 0.1, 0.5, 0.9;
  b << 0.3, 0.2, 0.85;
  Eigen::VectorXd gradient(d + 1);
  kernel.GradientLogParams(a, b, gradient);
  const double h = 1e-6;
  for (int i = 0; i < d + 1; ++i) {
    Matern52Kernel plus(d), minus(d);
    Eigen::VectorXd p = log_params, m = log_params;
    p[i] += h;
    m[i] -= h;
    ASSERT_TRUE(plus.SetLogParams(p).ok());
    ASSERT_TRUE(minus.SetLogParams(m).ok());
    const double numeric = (plus.Evaluate(a, b) - minus.Evaluate(a, b)) / (2 * h);
    EXPECT_NEAR(gradient[i], numeric, 1e-7 * std::max(1.0, std::fabs(numeric))) << "param " << i;
  }
  // At zero distance only the signal variance matters.
  kernel.GradientLogParams(a, a, gradient);
  EXPECT_EQ(gradient.head(d).norm(), 0.0);
  EXPECT_DOUBLE_EQ(gradient[d], 2.0);
}

TEST(Matern52KernelTest, RejectsBadParameters) {
  Matern52Kernel kernel(2);
  EXPECT_FALSE(kernel.SetLogParams(Eigen::VectorXd::Zero(2)).ok());
  Eigen::VectorXd bad(3);
  bad << 0.0, std::nan(""), 0.0;
  EXPECT_FALSE(kernel.SetLogParams(bad).ok());
  EXPECT_DOUBLE_EQ(kernel.length_scales()[0], 0.5);  // unchanged
}

}  // namespace
}  // namespace autotune::tuner
