#include "tuner/cokriging.h"

#include <gtest/gtest.h>

#include <cmath>

namespace autotune::tuner {
namespace {

double Simulated(double x) { return std::sin(8 * x); }
double Residual(double x) { return 0.3 + 0.5 * x; }
double Measured(double x) { return 2.0 * Simulated(x) + Residual(x); }

TEST(CoKrigingTest, RecoversRhoAndTheResidual) {
  CoKriging model(1);
  const int ns = 30, nm = 10;
  Eigen::MatrixXd xs(1, ns);
  Eigen::VectorXd ys(ns);
  for (int j = 0; j < ns; ++j) {
    xs(0, j) = j / (ns - 1.0);
    ys[j] = Simulated(xs(0, j));
  }
  ASSERT_TRUE(model.FitSimulated(xs, ys).ok());
  Eigen::MatrixXd xm(1, nm);
  Eigen::VectorXd ym(nm);
  for (int j = 0; j < nm; ++j) {
    xm(0, j) = 0.03 + 0.94 * j / (nm - 1.0);
    ym[j] = Measured(xm(0, j));
  }
  ASSERT_TRUE(model.FitMeasured(xm, ym).ok());
  // Least squares with an intercept on these points gives 1.972 (the residual's slope leaks a
  // little into rho); the truth is 2.
  EXPECT_NEAR(model.rho(), 2.0, 0.04);
  for (double t : {0.1, 0.35, 0.62, 0.88}) {
    Eigen::VectorXd at = Eigen::VectorXd::Constant(1, t);
    EXPECT_NEAR(model.Predict(at).mean, Measured(t), 0.05) << "at " << t;
    // The residual GP holds delta plus the small leaked part (2 - rho) * simulated.
    EXPECT_NEAR(model.residual_model().Predict(at).mean, Residual(t), 0.06) << "at " << t;
  }
}

TEST(CoKrigingTest, DegenerateCasesAreStated) {
  CoKriging model(1);
  Eigen::MatrixXd x(1, 3);
  x << 0.1, 0.5, 0.9;
  Eigen::VectorXd y(3);
  y << 1.0, 2.0, 1.5;
  // Measured only: rho 0, a plain GP on the measured scores.
  ASSERT_TRUE(model.FitMeasured(x, y).ok());
  EXPECT_EQ(model.rho(), 0.0);
  EXPECT_NEAR(model.Predict(Eigen::VectorXd::Constant(1, 0.5)).mean, 2.0, 0.05);
  // Simulated only: the simulated GP's prediction.
  CoKriging simulated_only(1);
  ASSERT_TRUE(simulated_only.FitSimulated(x, y).ok());
  Eigen::VectorXd at = Eigen::VectorXd::Constant(1, 0.3);
  EXPECT_DOUBLE_EQ(simulated_only.Predict(at).mean,
                   simulated_only.simulated_model().Predict(at).mean);
  // Fewer than three measured samples: rho 1.
  ASSERT_TRUE(simulated_only.FitMeasured(x.leftCols(2), y.head(2) * 3).ok());
  EXPECT_EQ(simulated_only.rho(), 1.0);
  // Three measured samples of two settings (one of them run twice, as a search's default is):
  // still two settings, so rho stays 1, whatever the scores; the same scores at three
  // settings are enough to estimate it, and they do not make it 1.
  Eigen::MatrixXd repeated(1, 3);
  repeated << 0.1, 0.5, 0.1;
  Eigen::VectorXd scores(3);
  scores << 0.2, 0.2, 0.21;  // flat: the likelihood alone would make rho 0
  ASSERT_TRUE(simulated_only.FitMeasured(repeated, scores).ok());
  EXPECT_EQ(simulated_only.rho(), 1.0);
  ASSERT_TRUE(simulated_only.FitMeasured(x, scores).ok());
  EXPECT_NE(simulated_only.rho(), 1.0);
  // New simulated data make the measured part stale until it is refit.
  ASSERT_TRUE(simulated_only.AddSimulated(Eigen::VectorXd::Constant(1, 0.7), 1.8).ok());
  EXPECT_TRUE(simulated_only.measured_stale());
  ASSERT_TRUE(simulated_only.RefitMeasured().ok());
  EXPECT_FALSE(simulated_only.measured_stale());
}

}  // namespace
}  // namespace autotune::tuner
