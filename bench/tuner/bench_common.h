// Shared by the tuner benchmarks: the standard test functions. Results are printed with
// bench/common/result.h.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "bench/common/result.h"
#include "tuner/space.h"

namespace autotune::tuner::bench {

inline double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  if (n == 0) return 0.0;
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

inline Space UnitCube(int dims) {
  Space space;
  for (int i = 0; i < dims; ++i) {
    (void)space.AddDimension(
        Dimension::Continuous("x" + std::to_string(i), 0.0, 1.0, Scale::kLinear, 0.5));
  }
  return space;
}

// Branin on x1 in [-5, 10], x2 in [0, 15]; minimum 0.397887 (three global minima).
inline constexpr double kBraninMinimum = 0.397887357729739;
inline double Branin(double x1, double x2) {
  const double a = 1.0, b = 5.1 / (4 * M_PI * M_PI), c = 5 / M_PI, r = 6, s = 10,
               t = 1 / (8 * M_PI);
  const double u = x2 - b * x1 * x1 + c * x1 - r;
  return a * u * u + s * (1 - t) * std::cos(x1) + s;
}

// Hartmann-6 on [0,1]^6; minimum -3.32237.
inline constexpr double kHartmann6Minimum = -3.32236801141551;
inline double Hartmann6(const std::vector<double>& x) {
  static const double alpha[4] = {1.0, 1.2, 3.0, 3.2};
  static const double a[4][6] = {{10, 3, 17, 3.5, 1.7, 8},
                                 {0.05, 10, 17, 0.1, 8, 14},
                                 {3, 3.5, 1.7, 10, 17, 8},
                                 {17, 8, 0.05, 10, 0.1, 14}};
  static const double p[4][6] = {{0.1312, 0.1696, 0.5569, 0.0124, 0.8283, 0.5886},
                                 {0.2329, 0.4135, 0.8307, 0.3736, 0.1004, 0.9991},
                                 {0.2348, 0.1451, 0.3522, 0.2883, 0.3047, 0.6650},
                                 {0.4047, 0.8828, 0.8732, 0.5743, 0.1091, 0.0381}};
  double sum = 0.0;
  for (int i = 0; i < 4; ++i) {
    double inner = 0.0;
    for (int j = 0; j < 6; ++j) inner += a[i][j] * (x[j] - p[i][j]) * (x[j] - p[i][j]);
    sum += alpha[i] * std::exp(-inner);
  }
  return -sum;
}

// Forrester et al. (2008) pair on [0,1]: the expensive function and its biased cheap version.
inline constexpr double kForresterMinimum = -6.020740055766;
inline double ForresterHigh(double x) { return (6 * x - 2) * (6 * x - 2) * std::sin(12 * x - 4); }
inline double ForresterLow(double x) { return 0.5 * ForresterHigh(x) + 10 * (x - 0.5) - 5; }

}  // namespace autotune::tuner::bench
