// Suggestion time with 200 samples in 8 dimensions: one Observe (O(n^2) Cholesky update) plus
// one Suggest (EI maximized: DIRECT-L, random batch, BOBYQA polish); median over repetitions.
// Target: at most 50 ms. Also prints, for information, a full hyperparameter refit at 200.
//
//   bench_tuner_suggest_time [--repetitions R (15)]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <random>
#include <vector>

#include "bench/tuner/bench_common.h"
#include "tuner/bayes_search.h"

int main(int argc, char** argv) {
  using namespace autotune::tuner;
  using namespace autotune::tuner::bench;
  using autotune::StatusOr;
  using Clock = std::chrono::steady_clock;
  int repetitions = 15;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--repetitions") && i + 1 < argc)
      repetitions = std::atoi(argv[++i]);
    else {
      std::cerr << "usage: bench_tuner_suggest_time [--repetitions R]\n";
      return 2;
    }
  }
  const int dims = 8, samples = 200;
  auto objective = [](const Point& p) {
    double s = 0.0;
    for (int i = 0; i < dims; ++i) s -= (p[i] - 0.1 * (i + 1)) * (p[i] - 0.1 * (i + 1));
    return s + 0.1 * std::sin(5 * p[0] * p[1]);
  };
  SearchOptions options;
  options.refit_all_below = 0;
  options.refit_period = 1000000;  // hyperparameters refit only when asked below
  BayesSearch search(UnitCube(dims), options);
  std::mt19937_64 rng(42);
  Space space = UnitCube(dims);
  for (int i = 0; i < samples - 1; ++i) {
    Point p = space.Random(rng);
    autotune::Status st = search.Observe({p, Fidelity::kMeasured, objective(p)});
    if (!st.ok()) {
      std::cerr << st.message() << "\n";
      return 1;
    }
  }
  auto refit_start = Clock::now();
  autotune::Status refit = search.RefitHyperparameters();
  double refit_ms = std::chrono::duration<double, std::milli>(Clock::now() - refit_start).count();
  if (!refit.ok()) {
    std::cerr << refit.message() << "\n";
    return 1;
  }
  std::vector<double> times_ms;
  for (int r = 0; r < repetitions; ++r) {
    Point p = space.Random(rng);
    auto start = Clock::now();
    autotune::Status st = search.Observe({p, Fidelity::kMeasured, objective(p)});
    StatusOr<Suggestion> next = search.Suggest(Fidelity::kMeasured);
    times_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    if (!st.ok() || !next.ok()) {
      std::cerr << (st.ok() ? next.status() : st).message() << "\n";
      return 1;
    }
  }
  const double value = Median(times_ms);
  autotune::bench::PrintFigure(
      {.bench = "tuner.suggest_time.median_observe_plus_suggest_at_200_samples_8_dims",
       .value = value,
       .unit = "ms",
       .anchor = "target",
       .anchor_value = 50.0,
       .target = autotune::bench::RatioAtMost(1.0)});
  std::printf(
      "# %d repetitions at %d..%d samples; hyperparameter refit (5 L-BFGS starts) at "
      "%d samples took %.0f ms (done every refit_period samples, not per suggestion)\n",
      repetitions, samples, samples + repetitions - 1, samples - 1, refit_ms);
  return 0;
}
