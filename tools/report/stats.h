// How well one series predicts another, as the report prints it under the simulated-against-
// measured scatter: mean absolute percentage error and Spearman's rank correlation.
#pragma once

#include <optional>
#include <vector>

namespace autotune::cli {

// mean(|predicted - actual| / actual), a fraction (0.05 = 5%). nullopt when the series are
// empty or of different lengths, or an actual value is not positive.
std::optional<double> MeanAbsolutePercentError(const std::vector<double>& actual,
                                               const std::vector<double>& predicted);

// Spearman's rank correlation of a and b: Pearson's correlation of their ranks, tied values
// sharing their mean rank. nullopt with fewer than 2 pairs, different lengths, or a series
// whose values are all equal (no ranking).
std::optional<double> SpearmanRankCorrelation(const std::vector<double>& a,
                                              const std::vector<double>& b);

}  // namespace autotune::cli
