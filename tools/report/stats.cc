#include "tools/report/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace autotune::cli {
namespace {

// 1-based ranks of values, ties sharing the mean of the ranks they span.
std::vector<double> Ranks(const std::vector<double>& values) {
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t i, size_t j) { return values[i] < values[j]; });
  std::vector<double> ranks(values.size());
  for (size_t begin = 0; begin < order.size();) {
    size_t end = begin + 1;
    while (end < order.size() && values[order[end]] == values[order[begin]]) ++end;
    const double mean_rank = (static_cast<double>(begin + 1) + static_cast<double>(end)) / 2.0;
    for (size_t k = begin; k < end; ++k) ranks[order[k]] = mean_rank;
    begin = end;
  }
  return ranks;
}

}  // namespace

std::optional<double> MeanAbsolutePercentError(const std::vector<double>& actual,
                                               const std::vector<double>& predicted) {
  if (actual.empty() || actual.size() != predicted.size()) return std::nullopt;
  double sum = 0.0;
  for (size_t i = 0; i < actual.size(); ++i) {
    if (!(actual[i] > 0.0)) return std::nullopt;
    sum += std::fabs(predicted[i] - actual[i]) / actual[i];
  }
  return sum / static_cast<double>(actual.size());
}

std::optional<double> SpearmanRankCorrelation(const std::vector<double>& a,
                                              const std::vector<double>& b) {
  if (a.size() < 2 || a.size() != b.size()) return std::nullopt;
  const std::vector<double> ra = Ranks(a), rb = Ranks(b);
  const double mean = (static_cast<double>(a.size()) + 1.0) / 2.0;  // of ranks 1..n
  double cov = 0.0, va = 0.0, vb = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    cov += (ra[i] - mean) * (rb[i] - mean);
    va += (ra[i] - mean) * (ra[i] - mean);
    vb += (rb[i] - mean) * (rb[i] - mean);
  }
  if (va == 0.0 || vb == 0.0) return std::nullopt;
  return cov / std::sqrt(va * vb);
}

}  // namespace autotune::cli
