#include "traces/stats.h"

#include <algorithm>
#include <random>

#include "traces/trace.h"

namespace autotune {
namespace {

double ResampledMedian(const std::vector<double>& v, std::mt19937_64& rng,
                       std::vector<double>& scratch) {
  std::uniform_int_distribution<size_t> pick(0, v.size() - 1);
  scratch.resize(v.size());
  for (double& x : scratch) x = v[pick(rng)];
  size_t mid = scratch.size() / 2;
  std::nth_element(scratch.begin(), scratch.begin() + mid, scratch.end());
  double upper = scratch[mid];
  if (scratch.size() % 2 == 1) return upper;
  double lower = *std::max_element(scratch.begin(), scratch.begin() + mid);
  return 0.5 * (lower + upper);
}

}  // namespace

RatioInterval BootstrapMedianRatio(const std::vector<double>& a, const std::vector<double>& b,
                                   double confidence, int resamples, uint64_t seed) {
  RatioInterval out;
  out.ratio = Median(a) / Median(b);
  std::mt19937_64 rng(seed);
  std::vector<double> ratios, scratch;
  ratios.reserve(resamples);
  for (int i = 0; i < resamples; ++i) {
    double ma = ResampledMedian(a, rng, scratch);
    double mb = ResampledMedian(b, rng, scratch);
    ratios.push_back(ma / mb);
  }
  std::sort(ratios.begin(), ratios.end());
  double tail = (1.0 - confidence) / 2.0;
  auto at = [&](double q) {
    size_t i = static_cast<size_t>(q * (ratios.size() - 1) + 0.5);
    return ratios[std::min(i, ratios.size() - 1)];
  };
  out.low = at(tail);
  out.high = at(1.0 - tail);
  return out;
}

}  // namespace autotune
