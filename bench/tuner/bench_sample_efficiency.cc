// Sample efficiency of the BO loop on Branin (2-d) and Hartmann-6: simple regret of the
// recommended point (the incumbent by posterior mean) after N evaluations, median over seeds,
// against random search with N and with 2N evaluations (best observed value).
//
//   bench_tuner_sample_efficiency [--seeds S (30)] [--only branin|hartmann6]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "bench/tuner/bench_common.h"
#include "tuner/search_loop.h"

namespace autotune::tuner::bench {
namespace {

struct Problem {
  std::string name;
  int dims;
  std::function<double(const Point&)> minimize;  // on the unit cube
  double minimum;
  int budget;
};

double RandomSearchBest(const Problem& problem, int evaluations, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  double best = INFINITY;
  Point p(problem.dims);
  for (int e = 0; e < evaluations; ++e) {
    for (double& v : p) v = unit(rng);
    best = std::min(best, problem.minimize(p));
  }
  return best;
}

int Run(const Problem& problem, int seeds) {
  auto start = std::chrono::steady_clock::now();
  std::vector<double> bo, random_same, random_double;
  for (int seed = 0; seed < seeds; ++seed) {
    SearchOptions options;
    options.stop.max_measured_samples = problem.budget;
    options.seed = 1 + seed;
    options.model.residual_gp.seed = 1 + seed;
    Objective measured = [&](const Point& p) -> StatusOr<double> { return -problem.minimize(p); };
    StatusOr<SearchResult> result =
        RunBayesSearch(UnitCube(problem.dims), options, measured, nullptr);
    if (!result.ok()) {
      std::cerr << problem.name << " seed " << seed << ": " << result.status().message() << "\n";
      return 1;
    }
    bo.push_back(problem.minimize(result->best.point) - problem.minimum);
    random_same.push_back(RandomSearchBest(problem, problem.budget, 7777 + seed) - problem.minimum);
    random_double.push_back(RandomSearchBest(problem, 2 * problem.budget, 9999 + seed) -
                            problem.minimum);
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::string name = "tuner.sample_efficiency." + problem.name +
                           ".median_simple_regret_after_" + std::to_string(problem.budget);
  const double value = Median(bo);
  for (int times : {1, 2}) {
    autotune::bench::PrintFigure(
        {.bench = name,
         .value = value,
         .unit = "f",
         .anchor = "random_search_" + std::to_string(times * problem.budget),
         .anchor_value = Median(times == 1 ? random_same : random_double),
         .target = autotune::bench::RatioBelow(1.0)});
  }
  std::printf(
      "# %s: %d seeds, %.1f s total, regret quartiles BO %.3g/%.3g/%.3g\n", problem.name.c_str(),
      seeds, seconds,
      [&] {
        std::vector<double> v = bo;
        std::sort(v.begin(), v.end());
        return v[v.size() / 4];
      }(),
      value,
      [&] {
        std::vector<double> v = bo;
        std::sort(v.begin(), v.end());
        return v[3 * v.size() / 4];
      }());
  return 0;
}

}  // namespace
}  // namespace autotune::tuner::bench

int main(int argc, char** argv) {
  using namespace autotune::tuner::bench;
  int seeds = 30;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--seeds") && i + 1 < argc)
      seeds = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--only") && i + 1 < argc)
      only = argv[++i];
    else {
      std::cerr << "usage: bench_tuner_sample_efficiency [--seeds S] [--only branin|hartmann6]\n";
      return 2;
    }
  }
  std::vector<Problem> problems = {
      {"branin", 2,
       [](const autotune::tuner::Point& p) { return Branin(-5 + 15 * p[0], 15 * p[1]); },
       kBraninMinimum, 30},
      {"hartmann6", 6, [](const autotune::tuner::Point& p) { return Hartmann6(p); },
       kHartmann6Minimum, 60},
  };
  int status = 0;
  for (const Problem& problem : problems) {
    if (!only.empty() && only != problem.name) continue;
    status |= Run(problem, seeds);
  }
  return status;
}
