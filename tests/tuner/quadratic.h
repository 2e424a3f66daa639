// A smooth two-dimensional test objective for the search tests: maximum 0 at (0.3, 0.7) on
// [0, 1]^2, default point (0.5, 0.5).
#pragma once

#include <gtest/gtest.h>

#include "tuner/space.h"

namespace autotune::tuner::testing {

inline Space QuadraticSpace() {
  Space space;
  EXPECT_TRUE(space.AddDimension(Dimension::Continuous("x", 0, 1, Scale::kLinear, 0.5)).ok());
  EXPECT_TRUE(space.AddDimension(Dimension::Continuous("y", 0, 1, Scale::kLinear, 0.5)).ok());
  return space;
}

inline double Quadratic(const Point& p) {
  return -((p[0] - 0.3) * (p[0] - 0.3) + (p[1] - 0.7) * (p[1] - 0.7));
}

}  // namespace autotune::tuner::testing
