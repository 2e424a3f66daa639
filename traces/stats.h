// Statistics for comparing runs: spread and a bootstrap confidence interval.
#pragma once

#include <cstdint>
#include <vector>

namespace autotune {

struct RatioInterval {
  double ratio = 0.0;  // median(a) / median(b)
  double low = 0.0;    // confidence interval bounds
  double high = 0.0;
};

// Percentile bootstrap of median(a) / median(b), resampling the steps of each run
// independently. Deterministic for a given seed. REQUIRES: a and b non-empty, positive.
RatioInterval BootstrapMedianRatio(const std::vector<double>& a, const std::vector<double>& b,
                                   double confidence = 0.95, int resamples = 2000,
                                   uint64_t seed = 1);

}  // namespace autotune
