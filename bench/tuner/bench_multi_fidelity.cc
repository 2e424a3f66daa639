// Multi-fidelity benefit on the Forrester pair (an expensive function and a biased cheap one):
// the number of expensive evaluations co-kriging BO needs (after a cheap simulated phase) to
// reach the final regret of single-fidelity BO with N expensive evaluations; median over seeds.
// Target: at most half of N.
//
//   bench_tuner_multi_fidelity [--seeds S (30)] [--budget N (10)] [--cheap M (20)]
//                              [--cheap-initial R (auto)] [--rho-prior-sd S (0.5)]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "bench/tuner/bench_common.h"
#include "tuner/search_loop.h"

namespace autotune::tuner::bench {
namespace {

double Regret(const Point& p) { return ForresterHigh(p[0]) - kForresterMinimum; }

// Regret of the incumbent after each expensive evaluation.
StatusOr<std::vector<double>> RegretTrace(int budget, int cheap, uint64_t seed, int initial,
                                          double rho_prior_sd) {
  SearchOptions options;
  options.stop.max_measured_samples = budget;
  options.simulated_budget = cheap;
  options.initial_design = initial;
  options.model.rho_prior_sd = rho_prior_sd;
  options.seed = seed;
  options.model.simulated_gp.seed = seed;
  options.model.residual_gp.seed = seed;
  std::vector<double> trace;
  Objective measured = [](const Point& p) -> StatusOr<double> { return -ForresterHigh(p[0]); };
  Objective simulated = [](const Point& p) -> StatusOr<double> { return -ForresterLow(p[0]); };
  SearchProgress progress = [&](BayesSearch& search, const Observation& observation) {
    if (observation.fidelity != Fidelity::kMeasured) return;
    StatusOr<Incumbent> best = search.Best(Fidelity::kMeasured);
    trace.push_back(best.ok() ? Regret(best->point) : INFINITY);
  };
  StatusOr<SearchResult> result = RunBayesSearch(UnitCube(1), options, measured,
                                                 cheap > 0 ? simulated : Objective(), {}, progress);
  if (!result.ok()) return result.status();
  return trace;
}

// 1-based index of the first evaluation whose regret is <= target; budget + 1 when none.
int EvaluationsToReach(const std::vector<double>& trace, double target) {
  for (size_t k = 0; k < trace.size(); ++k) {
    if (trace[k] <= target) return static_cast<int>(k) + 1;
  }
  return static_cast<int>(trace.size()) + 1;
}

}  // namespace
}  // namespace autotune::tuner::bench

int main(int argc, char** argv) {
  using namespace autotune::tuner;
  using namespace autotune::tuner::bench;
  using autotune::StatusOr;
  int seeds = 30, budget = 10, cheap = 20, initial = 0;
  double rho_prior_sd = CoKrigingOptions().rho_prior_sd;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = i + 1 < argc ? argv[i] : "";
    if (flag == "--seeds") {
      seeds = std::atoi(argv[++i]);
    } else if (flag == "--budget") {
      budget = std::atoi(argv[++i]);
    } else if (flag == "--cheap") {
      cheap = std::atoi(argv[++i]);
    } else if (flag == "--cheap-initial") {
      initial = std::atoi(argv[++i]);
    } else if (flag == "--rho-prior-sd") {
      rho_prior_sd = std::atof(argv[++i]);
    } else {
      std::cerr << "usage: bench_tuner_multi_fidelity [--seeds S] [--budget N] [--cheap M] "
                   "[--cheap-initial R] [--rho-prior-sd S]\n";
      return 2;
    }
  }
  auto start = std::chrono::steady_clock::now();
  std::vector<std::vector<double>> single, multi;
  for (int seed = 1; seed <= seeds; ++seed) {
    StatusOr<std::vector<double>> s = RegretTrace(budget, 0, seed, 0, rho_prior_sd);
    StatusOr<std::vector<double>> m = RegretTrace(budget, cheap, seed, initial, rho_prior_sd);
    if (!s.ok() || !m.ok()) {
      std::cerr << "seed " << seed << ": " << (s.ok() ? m.status() : s.status()).message() << "\n";
      return 1;
    }
    single.push_back(*s);
    multi.push_back(*m);
  }
  std::vector<double> final_single;
  for (const auto& t : single) final_single.push_back(t.back());
  const double target = Median(final_single);
  std::vector<double> k_single, k_multi, final_multi;
  int unreached = 0;
  for (int i = 0; i < seeds; ++i) {
    k_single.push_back(EvaluationsToReach(single[i], target));
    int k = EvaluationsToReach(multi[i], target);
    unreached += k > budget;
    k_multi.push_back(k);
    final_multi.push_back(multi[i].back());
  }
  const double value = Median(k_multi);
  const std::string name =
      "tuner.multi_fidelity.forrester.median_expensive_evals_to_single_fidelity_final_regret";
  autotune::bench::PrintFigure({.bench = name,
                                .value = value,
                                .unit = "evals",
                                .anchor = "single_fidelity_budget",
                                .anchor_value = static_cast<double>(budget),
                                .target = autotune::bench::RatioAtMost(0.5)});
  autotune::bench::PrintFigure({.bench = name,
                                .value = value,
                                .unit = "evals",
                                .anchor = "single_fidelity_evals_to_same_regret",
                                .anchor_value = Median(k_single),
                                .target = autotune::bench::RatioAtMost(0.5)});
  auto mean = [](const std::vector<double>& v) {
    double sum = 0.0;
    for (double x : v) sum += x;
    return v.empty() ? 0.0 : sum / static_cast<double>(v.size());
  };
  std::printf(
      "# mean expensive evaluations to the target regret: multi-fidelity %.2f, "
      "single-fidelity %.2f (unreached counted as budget + 1)\n",
      mean(k_multi), mean(k_single));
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "# %d seeds, cheap evaluations %d, target regret %.3g (single-fidelity median after "
      "%d), multi-fidelity final median regret %.3g, seeds never reaching it %d, %.1f s\n",
      seeds, cheap, target, budget, Median(final_multi), unreached, seconds);
  return 0;
}
