#include "tuner/gaussian_process.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace autotune::tuner {
namespace {

double Matern52(double r, double signal_variance) {
  const double s5 = std::sqrt(5.0);
  return signal_variance * (1 + s5 * r + 5.0 / 3.0 * r * r) * std::exp(-s5 * r);
}

Hyperparameters MakeHyperparameters(Eigen::VectorXd length_scales, double signal, double noise) {
  Hyperparameters hp;
  hp.length_scales = std::move(length_scales);
  hp.signal_variance = signal;
  hp.noise_variance = noise;
  return hp;
}

// Two samples in 1-d with fixed hyperparameters; the expected posterior is written out from
// mean = k*' K^-1 y, variance = k** - k*' K^-1 k* with the 2x2 inverse by hand.
TEST(GaussianProcessTest, TwoPointPosteriorByHand) {
  const double length = 0.4, signal = 1.3, noise = 0.01;
  GaussianProcess gp(1);
  ASSERT_TRUE(gp.SetHyperparameters(
                    MakeHyperparameters(Eigen::VectorXd::Constant(1, length), signal, noise))
                  .ok());
  Eigen::MatrixXd x(1, 2);
  x << 0.2, 0.7;
  Eigen::VectorXd y(2);
  y << 1.0, -0.5;
  ASSERT_TRUE(gp.SetData(x, y).ok());

  const double k11 = signal + noise, k22 = signal + noise;
  const double k12 = Matern52(0.5 / length, signal);
  const double det = k11 * k22 - k12 * k12;
  const double i11 = k22 / det, i22 = k11 / det, i12 = -k12 / det;
  for (double t : {0.0, 0.2, 0.45, 0.9}) {
    const double a = Matern52(std::fabs(t - 0.2) / length, signal);
    const double b = Matern52(std::fabs(t - 0.7) / length, signal);
    const double mean = a * (i11 * y[0] + i12 * y[1]) + b * (i12 * y[0] + i22 * y[1]);
    const double variance = signal - (a * a * i11 + 2 * a * b * i12 + b * b * i22);
    Prediction p = gp.Predict(Eigen::VectorXd::Constant(1, t));
    EXPECT_NEAR(p.mean, mean, 1e-12) << "at " << t;
    EXPECT_NEAR(p.variance, variance, 1e-12) << "at " << t;
  }
  // The batch path agrees.
  Eigen::MatrixXd at(1, 2);
  at << 0.45, 0.9;
  Eigen::VectorXd means, variances;
  gp.PredictBatch(at, &means, &variances);
  EXPECT_NEAR(means[0], gp.Predict(Eigen::VectorXd::Constant(1, 0.45)).mean, 1e-12);
  EXPECT_NEAR(variances[1], gp.Predict(Eigen::VectorXd::Constant(1, 0.9)).variance, 1e-12);
}

TEST(GaussianProcessTest, StandardizationMapsBackToOriginalUnits) {
  GaussianProcess gp(1);
  ASSERT_TRUE(
      gp.SetHyperparameters(MakeHyperparameters(Eigen::VectorXd::Constant(1, 0.3), 1.0, 1e-4))
          .ok());
  ASSERT_TRUE(gp.SetStandardization(2e9, 1e8).ok());
  Eigen::MatrixXd x(1, 1);
  x << 0.5;
  ASSERT_TRUE(gp.SetData(x, Eigen::VectorXd::Constant(1, 2.1e9)).ok());
  // One sample: mean = k/(1 + noise) * standardized y, variance = 1 - k^2/(1 + noise).
  const double k = Matern52(0.1 / 0.3, 1.0);
  Prediction p = gp.Predict(Eigen::VectorXd::Constant(1, 0.6));
  EXPECT_NEAR(p.mean, 2e9 + 1e8 * k / (1 + 1e-4) * 1.0, 1e-3);
  EXPECT_NEAR(p.variance, 1e16 * (1.0 - k * k / (1 + 1e-4)), 1e4);
}

TEST(GaussianProcessTest, LikelihoodGradientMatchesFiniteDifferences) {
  const int d = 3, n = 9;
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> unit(0, 1);
  Eigen::MatrixXd x(d, n);
  Eigen::VectorXd y(n);
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < d; ++i) x(i, j) = unit(rng);
    y[j] = std::sin(4 * x(0, j)) + x(1, j) * x(2, j);
  }
  GaussianProcess gp(d);
  ASSERT_TRUE(gp.SetData(x, y).ok());
  Eigen::VectorXd params(d + 2);
  params << std::log(0.4), std::log(0.9), std::log(0.25), std::log(1.7), std::log(0.05);
  Eigen::VectorXd gradient;
  StatusOr<double> lml = gp.LogMarginalLikelihood(params, &gradient);
  ASSERT_TRUE(lml.ok()) << lml.status().message();
  const double h = 1e-6;
  for (int i = 0; i < d + 2; ++i) {
    Eigen::VectorXd p = params, m = params;
    p[i] += h;
    m[i] -= h;
    const double numeric =
        (*gp.LogMarginalLikelihood(p, nullptr) - *gp.LogMarginalLikelihood(m, nullptr)) / (2 * h);
    EXPECT_NEAR(gradient[i], numeric, 1e-5 * std::max(1.0, std::fabs(numeric))) << "param " << i;
  }
}

TEST(GaussianProcessTest, FitRaisesTheLikelihoodAndPredictsTheData) {
  const int n = 12;
  Eigen::MatrixXd x(1, n);
  Eigen::VectorXd y(n);
  for (int j = 0; j < n; ++j) {
    x(0, j) = j / (n - 1.0);
    y[j] = 3e9 + 1e8 * std::sin(6 * x(0, j));
  }
  GaussianProcess gp(1);
  ASSERT_TRUE(gp.Fit(x, y).ok());
  EXPECT_EQ(gp.last_fit().failed_starts, 0);
  EXPECT_GE(gp.last_fit().starts, 2);
  EXPECT_NEAR(gp.output_mean(), y.mean(), 1.0);
  Prediction p = gp.Predict(Eigen::VectorXd::Constant(1, 0.5));
  EXPECT_NEAR(p.mean, 3e9 + 1e8 * std::sin(3.0), 2e6);  // between samples, 2% of the swing
  // The fitted hyperparameters beat the defaults' likelihood.
  Eigen::VectorXd fitted(3), defaults(3);
  Hyperparameters hp = gp.hyperparameters();
  fitted << std::log(hp.length_scales[0]), std::log(hp.signal_variance),
      std::log(hp.noise_variance);
  defaults << std::log(0.5), 0.0, std::log(1e-3);
  EXPECT_GT(*gp.LogMarginalLikelihood(fitted, nullptr),
            *gp.LogMarginalLikelihood(defaults, nullptr));
}

TEST(GaussianProcessTest, FixedNoiseIsKeptByTheFit) {
  GpOptions options;
  options.fixed_noise_stddev = 0.8;  // Horovod's default --autotune-gaussian-process-noise
  GaussianProcess gp(1, options);
  Eigen::MatrixXd x(1, 4);
  x << 0.1, 0.4, 0.6, 0.9;
  Eigen::VectorXd y(4);
  y << 1, 2, 1.5, 0.5;
  ASSERT_TRUE(gp.Fit(x, y).ok());
  EXPECT_DOUBLE_EQ(gp.hyperparameters().noise_variance, 0.64);
}

TEST(GaussianProcessTest, DuplicatePointsWithoutNoiseNeedJitter) {
  GpOptions options;
  options.fixed_noise_stddev = 0.0;
  GaussianProcess gp(2, options);
  ASSERT_TRUE(
      gp.SetHyperparameters(MakeHyperparameters(Eigen::VectorXd::Constant(2, 0.5), 1.0, 0.0)).ok());
  Eigen::MatrixXd x(2, 3);
  x << 0.3, 0.3, 0.8, 0.6, 0.6, 0.1;
  Eigen::VectorXd y(3);
  y << 1.0, 3.0, -1.0;
  ASSERT_TRUE(gp.SetData(x, y).ok());
  EXPECT_GT(gp.jitter(), 0.0);
  EXPECT_LE(gp.jitter(), 1e-4);
  // With jitter as the only noise, the duplicated point's posterior is their average.
  Eigen::VectorXd at(2);
  at << 0.3, 0.6;
  Prediction p = gp.Predict(at);
  EXPECT_NEAR(p.mean, 2.0, 1e-3);
  EXPECT_TRUE(std::isfinite(p.variance));
  // The incremental path meets the same duplicate and falls back to a jittered refactor.
  GaussianProcess grown(2, options);
  ASSERT_TRUE(grown.SetHyperparameters(gp.hyperparameters()).ok());
  ASSERT_TRUE(grown.SetData(x.leftCols(1), y.head(1)).ok());
  EXPECT_EQ(grown.jitter(), 0.0);
  ASSERT_TRUE(grown.AddSample(x.col(1), y[1]).ok());
  EXPECT_GT(grown.jitter(), 0.0);
  EXPECT_NEAR(grown.Predict(at).mean, 2.0, 1e-3);
}

TEST(GaussianProcessTest, IncrementalUpdateEqualsFullRefit) {
  const int d = 4, n = 14;
  std::mt19937_64 rng(21);
  std::uniform_real_distribution<double> unit(0, 1);
  Eigen::MatrixXd x(d, n);
  Eigen::VectorXd y(n);
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < d; ++i) x(i, j) = unit(rng);
    y[j] = 5.0 + x.col(j).squaredNorm() - 2 * x(0, j);
  }
  GaussianProcess incremental(d);
  ASSERT_TRUE(incremental.Fit(x.leftCols(8), y.head(8)).ok());
  for (int j = 8; j < n; ++j) ASSERT_TRUE(incremental.AddSample(x.col(j), y[j]).ok());
  EXPECT_EQ(incremental.num_samples(), n);

  GaussianProcess full(d);
  ASSERT_TRUE(full.SetHyperparameters(incremental.hyperparameters()).ok());
  ASSERT_TRUE(full.SetStandardization(incremental.output_mean(), incremental.output_scale()).ok());
  ASSERT_TRUE(full.SetData(x, y).ok());
  for (int t = 0; t < 20; ++t) {
    Eigen::VectorXd at(d);
    for (int i = 0; i < d; ++i) at[i] = unit(rng);
    Prediction a = incremental.Predict(at), b = full.Predict(at);
    EXPECT_NEAR(a.mean, b.mean, 1e-9 * std::max(1.0, std::fabs(b.mean)));
    EXPECT_NEAR(a.variance, b.variance, 1e-9);
  }
}

TEST(GaussianProcessTest, ReportsBadInput) {
  GaussianProcess gp(2);
  Eigen::MatrixXd x(2, 2);
  x << 0.1, 0.2, 0.3, 0.4;
  Eigen::VectorXd y(2);
  y << 1.0, std::nan("");
  EXPECT_FALSE(gp.Fit(x, y).ok());
  EXPECT_FALSE(gp.SetData(x, Eigen::VectorXd::Zero(3)).ok());
  EXPECT_FALSE(gp.Fit(Eigen::MatrixXd(3, 2), Eigen::VectorXd::Zero(2)).ok());
  EXPECT_FALSE(gp.Fit(Eigen::MatrixXd(2, 0), Eigen::VectorXd(0)).ok());
  EXPECT_FALSE(gp.AddSample(Eigen::VectorXd::Zero(3), 1.0).ok());
  Hyperparameters bad = gp.hyperparameters();
  bad.signal_variance = -1;
  EXPECT_FALSE(gp.SetHyperparameters(bad).ok());
  EXPECT_EQ(gp.num_samples(), 0);  // nothing was taken in
  EXPECT_FALSE(gp.LogMarginalLikelihood(Eigen::VectorXd::Zero(4), nullptr).ok());  // no data
}

}  // namespace
}  // namespace autotune::tuner
