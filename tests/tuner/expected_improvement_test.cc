#include "tuner/expected_improvement.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tuner/gaussian_process.h"

namespace autotune::tuner {
namespace {

TEST(ExpectedImprovementTest, ClosedFormAtKnownPoints) {
  // z = 0: EI = sigma * phi(0) = sigma / sqrt(2 pi).
  EXPECT_NEAR(ExpectedImprovement(5.0, 4.0, 5.0, 0.0), 2.0 / std::sqrt(2 * M_PI), 1e-15);
  // z = 1 (mean - best = sigma = 2): EI = 2 Phi(1) + 2 phi(1), Phi(1) = 0.8413447460685429,
  // phi(1) = 0.24197072451914337.
  EXPECT_NEAR(ExpectedImprovement(7.0, 4.0, 5.0, 0.0),
              2 * 0.8413447460685429 + 2 * 0.24197072451914337, 1e-14);
  // z = -1 through xi: improvement -2, sigma 2: EI = -2 Phi(-1) + 2 phi(1).
  EXPECT_NEAR(ExpectedImprovement(5.0, 4.0, 5.0, 2.0),
              -2 * (1 - 0.8413447460685429) + 2 * 0.24197072451914337, 1e-14);
  // No uncertainty: the plain improvement, never negative.
  EXPECT_DOUBLE_EQ(ExpectedImprovement(6.0, 0.0, 5.0, 0.5), 0.5);
  EXPECT_DOUBLE_EQ(ExpectedImprovement(4.0, 0.0, 5.0, 0.0), 0.0);
  // More uncertainty, or a higher mean, never lowers EI.
  EXPECT_GT(ExpectedImprovement(5.0, 9.0, 5.0, 0.0), ExpectedImprovement(5.0, 4.0, 5.0, 0.0));
  EXPECT_GT(ExpectedImprovement(5.5, 4.0, 5.0, 0.0), ExpectedImprovement(5.0, 4.0, 5.0, 0.0));
}

// A model whose posterior is known everywhere: EI peaks where the mean bump is.
class BumpModel : public SurrogateModel {
 public:
  int input_dims() const override { return 3; }
  Prediction Predict(const Eigen::VectorXd& x) const override {
    double bump = std::exp(-20 * ((x[0] - 0.7) * (x[0] - 0.7)));
    // Coordinate 1 is a boolean (1 is better); coordinate 2 too (0 is better).
    return {bump + 0.3 * x[1] - 0.3 * x[2], 0.01};
  }
};

TEST(ExpectedImprovementTest, MaximizerFindsTheBumpOverMixedDimensions) {
  Space space;
  ASSERT_TRUE(space.AddDimension(Dimension::Continuous("x", 0, 1, Scale::kLinear, 0.5)).ok());
  ASSERT_TRUE(space.AddDimension(Dimension::Boolean("b1", false)).ok());
  ASSERT_TRUE(space.AddDimension(Dimension::Boolean("b2", true)).ok());
  BumpModel model;
  AcquisitionOptions options;
  StatusOr<AcquisitionResult> result = MaximizeExpectedImprovement(model, space, 1.0, options);
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_NEAR(result->point[0], 0.7, 0.01);
  EXPECT_EQ(result->point[1], 1.0);
  EXPECT_EQ(result->point[2], 0.0);
  EXPECT_NEAR(result->expected_improvement, ExpectedImprovement(1.3, 0.01, 1.0, 0.0), 1e-4);
  // The returned encoding is a snapped one (booleans exactly 0/1).
  EXPECT_EQ(result->encoded[1], 1.0);
  EXPECT_EQ(result->encoded[2], 0.0);
}

TEST(ExpectedImprovementTest, NothingToTuneIsAnError) {
  Space space;
  ASSERT_TRUE(space.AddDimension(Dimension::Boolean("b", false)).ok());
  ASSERT_TRUE(space.SetConstant("b", 1).ok());
  GaussianProcess gp(0);
  StatusOr<AcquisitionResult> result = MaximizeExpectedImprovement(gp, space, 0.0, {});
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("constant"), std::string::npos);
}

}  // namespace
}  // namespace autotune::tuner
