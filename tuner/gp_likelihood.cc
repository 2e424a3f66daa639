// GaussianProcess: the log marginal likelihood, its gradient and the hyperparameter fit.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <random>
#include <vector>

#include "tuner/gaussian_process.h"
#include "tuner/nlopt_runner.h"

namespace autotune::tuner {

StatusOr<double> GaussianProcess::LogMarginalLikelihood(const Eigen::VectorXd& log_params,
                                                        Eigen::VectorXd* gradient) const {
  const int d = input_dims();
  if (log_params.size() != d + 2) {
    return Status::InvalidArgument("Gaussian process: expected " + std::to_string(d + 2) +
                                   " log hyperparameters");
  }
  const Eigen::Index n = x_.cols();
  if (n == 0) return Status::InvalidArgument("Gaussian process: no data for the likelihood");
  Matern52Kernel kernel(d);
  AUTOTUNE_RETURN_IF_ERROR(kernel.SetLogParams(log_params.head(d + 1)));
  const double noise_variance = std::exp(log_params[d + 1]);
  Eigen::MatrixXd lower;
  double jitter = 0.0;
  AUTOTUNE_RETURN_IF_ERROR(Factor(kernel, noise_variance, x_, &lower, &jitter));

  const Eigen::VectorXd target = Standardized(y_);
  auto l = lower.triangularView<Eigen::Lower>();
  Eigen::VectorXd alpha = l.solve(target);
  l.transpose().solveInPlace(alpha);
  const double log_det_half = lower.diagonal().array().log().sum();
  const double value = -0.5 * target.dot(alpha) - log_det_half -
                       0.5 * static_cast<double>(n) * std::log(2.0 * std::numbers::pi);
  if (!std::isfinite(value)) {
    return Status::Internal("Gaussian process: non-finite log marginal likelihood");
  }
  if (gradient == nullptr) return value;

  // d LML / d theta = 1/2 tr(W dK/dtheta), W = alpha alpha' - K^-1.
  Eigen::MatrixXd inverse = Eigen::MatrixXd::Identity(n, n);
  l.solveInPlace(inverse);                               // L^-1
  Eigen::MatrixXd w = -(inverse.transpose() * inverse);  // -K^-1
  w.noalias() += alpha * alpha.transpose();
  gradient->setZero(d + 2);
  const Eigen::ArrayXd inverse_scale = kernel.length_scales().array().inverse();
  const Eigen::MatrixXd scaled = x_.array().colwise() * inverse_scale;
  double signal_term = 0.0;
  Eigen::ArrayXd length_terms = Eigen::ArrayXd::Zero(d);
  for (Eigen::Index j = 0; j < n; ++j) {
    signal_term += 0.5 * w(j, j) * kernel.signal_variance();
    for (Eigen::Index i = j + 1; i < n; ++i) {
      Eigen::ArrayXd diff = (scaled.col(i) - scaled.col(j)).array();
      double r = std::sqrt(diff.square().sum());
      // Off-diagonal pairs appear twice in the trace: 2 * 1/2 = 1.
      signal_term += w(i, j) * kernel.CovarianceAtDistance(r);
      length_terms += (w(i, j) * kernel.NegativeDerivativeOverDistance(r)) * diff.square();
    }
  }
  gradient->head(d) = length_terms.matrix();
  (*gradient)[d] = signal_term;
  (*gradient)[d + 1] = 0.5 * noise_variance * w.trace();  // dK/dlog noise = noise I
  if (!gradient->allFinite()) {
    return Status::Internal("Gaussian process: non-finite likelihood gradient");
  }
  return value;
}

double GaussianProcess::LogHyperparameterPrior(const Eigen::VectorXd& log_params,
                                               Eigen::VectorXd* gradient) const {
  if (!options_.hyperparameter_prior) return 0.0;
  const int d = input_dims();
  double log_density = 0.0;
  auto term = [&](int i, double median, double log_sd) {
    const double z = (log_params[i] - std::log(median)) / log_sd;
    log_density -= 0.5 * z * z;
    if (gradient != nullptr) (*gradient)[i] -= z / log_sd;
  };
  for (int i = 0; i < d; ++i) {
    term(i, options_.length_scale_prior_median, options_.length_scale_prior_log_sd);
  }
  term(d, options_.signal_variance_prior_median, options_.signal_variance_prior_log_sd);
  if (options_.fixed_noise_stddev < 0.0) {
    term(d + 1, options_.noise_variance_prior_median, options_.noise_variance_prior_log_sd);
  }
  return log_density;
}

namespace {

// Bounds of the fitted log hyperparameters [log length scales, log signal variance,
// log noise variance when learned], from the options.
struct LogParamBox {
  std::vector<double> lower;
  std::vector<double> upper;
};

LogParamBox HyperparameterBox(const GpOptions& options, int d, bool learn_noise) {
  const int num_params = d + 1 + (learn_noise ? 1 : 0);
  LogParamBox box{std::vector<double>(num_params), std::vector<double>(num_params)};
  for (int i = 0; i < d; ++i) {
    box.lower[i] = std::log(options.min_length_scale);
    box.upper[i] = std::log(options.max_length_scale);
  }
  box.lower[d] = std::log(options.min_signal_variance);
  box.upper[d] = std::log(options.max_signal_variance);
  if (learn_noise) {
    box.lower[d + 1] = std::log(options.min_noise_variance);
    box.upper[d + 1] = std::log(options.max_noise_variance);
  }
  return box;
}

// Optimizer starts in the box's coordinates: the current hyperparameters (kernel,
// noise_variance), a default, then options.random_restarts random ones drawn with a seed
// mixed from options.seed and num_samples.
std::vector<std::vector<double>> HyperparameterStarts(const GpOptions& options,
                                                      const LogParamBox& box,
                                                      const Matern52Kernel& kernel,
                                                      double noise_variance, int64_t num_samples) {
  const int d = kernel.input_dims();
  const int num_params = static_cast<int>(box.lower.size());
  const bool learn_noise = num_params > d + 1;  // the box has a noise coordinate
  std::vector<std::vector<double>> starts;
  std::vector<double> current(num_params);
  for (int i = 0; i < d; ++i) current[i] = std::log(kernel.length_scales()[i]);
  current[d] = std::log(kernel.signal_variance());
  if (learn_noise) {
    current[d + 1] = std::log(std::max(noise_variance, options.min_noise_variance));
  }
  starts.push_back(current);
  std::vector<double> fallback(num_params, std::log(0.3));
  fallback[d] = 0.0;
  if (learn_noise) fallback[d + 1] = std::log(std::max(1e-2, options.min_noise_variance));
  starts.push_back(fallback);
  std::mt19937_64 rng(options.seed + 7919 * static_cast<uint64_t>(num_samples));
  for (int r = 0; r < options.random_restarts; ++r) {
    std::vector<double> start(num_params);
    for (int i = 0; i < num_params; ++i) {
      double lo = box.lower[i], hi = box.upper[i];
      if (i < d) {  // typical length scales of inputs in [0,1]
        lo = std::max(lo, std::log(0.05));
        hi = std::min(hi, std::log(2.0));
      }
      start[i] = std::uniform_real_distribution<double>(lo, hi)(rng);
    }
    starts.push_back(start);
  }
  return starts;
}

// Runs LD_LBFGS in the box from every start and returns the best point found; empty when
// every run failed. Counts starts, failures and evaluations into *report.
std::vector<double> MinimizeFromStarts(const std::vector<std::vector<double>>& starts,
                                       const LogParamBox& box, const GpOptions& options,
                                       const BoxObjective& objective, FitReport* report) {
  std::vector<double> best;
  double best_value = std::numeric_limits<double>::infinity();
  for (const std::vector<double>& start : starts) {
    NloptProblem problem;
    problem.algorithm = nlopt::LD_LBFGS;
    problem.lower = box.lower;
    problem.upper = box.upper;
    problem.start = start;
    problem.max_evaluations = options.max_evaluations_per_restart;
    problem.relative_x_tolerance = 1e-4;
    problem.relative_f_tolerance = 1e-8;
    ++report->starts;
    StatusOr<NloptOutcome> outcome =
        MinimizeInBox(problem, objective, "Gaussian process hyperparameter fit");
    if (!outcome.ok()) {
      ++report->failed_starts;
      report->last_failure = outcome.status().message();
      continue;
    }
    report->evaluations += outcome->evaluations;
    if (outcome->best_value < best_value) {
      best_value = outcome->best_value;
      best = outcome->best_x;
    }
  }
  return best;
}

}  // namespace

Status GaussianProcess::Fit(const Eigen::MatrixXd& x, const Eigen::VectorXd& y) {
  AUTOTUNE_RETURN_IF_ERROR(CheckData(x, y));
  if (x.cols() == 0) return Status::InvalidArgument("Gaussian process: no samples to fit");
  const int d = input_dims();
  const bool learn_noise = options_.fixed_noise_stddev < 0.0;

  // Work on a copy so that a failed fit leaves this model as it was.
  GaussianProcess trial = *this;
  trial.x_ = x;
  trial.y_ = y;
  const double mean = y.mean();
  const double spread = std::sqrt((y.array() - mean).square().mean());
  trial.output_mean_ = mean;
  // A single sample, or identical ones, has no spread: scale by the magnitude instead.
  trial.output_scale_ = spread > 1e-12 * std::max(1.0, std::fabs(mean))
                            ? spread
                            : (std::fabs(mean) > 0.0 ? std::fabs(mean) : 1.0);

  const LogParamBox box = HyperparameterBox(options_, d, learn_noise);
  const int num_params = static_cast<int>(box.lower.size());
  const double fixed_log_noise = learn_noise ? 0.0 : std::log(std::max(noise_variance_, 1e-300));
  auto full_params = [&](const std::vector<double>& p) {
    Eigen::VectorXd full(d + 2);
    for (int i = 0; i <= d; ++i) full[i] = p[i];
    full[d + 1] = learn_noise ? p[d + 1] : fixed_log_noise;
    return full;
  };
  BoxObjective negative_lml = [&](const std::vector<double>& p, std::vector<double>* grad) {
    Eigen::VectorXd gradient;
    Eigen::VectorXd full = full_params(p);
    StatusOr<double> lml = trial.LogMarginalLikelihood(full, grad ? &gradient : nullptr);
    if (!lml.ok()) return std::numeric_limits<double>::quiet_NaN();
    const double log_prior = trial.LogHyperparameterPrior(full, grad ? &gradient : nullptr);
    if (grad != nullptr) {
      for (int i = 0; i < num_params; ++i) (*grad)[i] = -gradient[i];
    }
    return -(*lml + log_prior);
  };

  FitReport report;
  const std::vector<double> best =
      MinimizeFromStarts(HyperparameterStarts(options_, box, kernel_, noise_variance_, x.cols()),
                         box, options_, negative_lml, &report);
  if (best.empty()) {
    return Status::Internal("Gaussian process: every hyperparameter start failed (" +
                            report.last_failure + ")");
  }
  Eigen::VectorXd chosen = full_params(best);
  StatusOr<double> chosen_lml = trial.LogMarginalLikelihood(chosen, nullptr);
  if (!chosen_lml.ok()) return chosen_lml.status();
  report.log_marginal_likelihood = *chosen_lml;
  AUTOTUNE_RETURN_IF_ERROR(trial.kernel_.SetLogParams(chosen.head(d + 1)));
  trial.noise_variance_ = std::exp(chosen[d + 1]);
  AUTOTUNE_RETURN_IF_ERROR(
      trial.Factor(trial.kernel_, trial.noise_variance_, x, &trial.chol_lower_, &trial.jitter_));
  trial.SolveAlpha();
  trial.last_fit_ = report;
  *this = std::move(trial);
  return Status::Ok();
}

}  // namespace autotune::tuner
