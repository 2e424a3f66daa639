#include "tuner/bayes_search.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "tests/tuner/quadratic.h"

namespace autotune::tuner {
namespace {

using testing::Quadratic;
using testing::QuadraticSpace;

TEST(BayesSearchTest, IncumbentIsTheBestPosteriorMeanNotTheLuckiestScore) {
  Space space;
  ASSERT_TRUE(space.AddDimension(Dimension::Continuous("x", 0, 1, Scale::kLinear, 0.5)).ok());
  SearchOptions options;
  options.model.residual_gp.fixed_noise_stddev = 0.5;  // noisy measurements
  BayesSearch search(space, options);
  for (int i = 0; i < 21; ++i) {
    double x = i / 20.0;
    double score = -(x - 0.8) * (x - 0.8);
    if (i == 4) score += 0.5;  // one lucky measurement at x = 0.2, far from the optimum
    ASSERT_TRUE(search.Observe({{x}, Fidelity::kMeasured, score}).ok());
  }
  StatusOr<Incumbent> best = search.Best(Fidelity::kMeasured);
  ASSERT_TRUE(best.ok());
  EXPECT_NEAR(best->point[0], 0.8, 0.1);
  EXPECT_LT(best->observed_score, 0.14);  // not the lucky 0.14 at x = 0.2
}

TEST(BayesSearchTest, FirstMeasuredSuggestionAfterSimulationIsTheSimulatedOptimum) {
  BayesSearch search(QuadraticSpace(), SearchOptions{});
  for (double x : {0.1, 0.3, 0.5, 0.9}) {
    for (double y : {0.2, 0.7}) {
      ASSERT_TRUE(search.Observe({{x, y}, Fidelity::kSimulated, Quadratic({x, y})}).ok());
    }
  }
  StatusOr<Suggestion> next = search.Suggest(Fidelity::kMeasured);
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->origin, SuggestionOrigin::kSimulatedOptimum);
  EXPECT_STREQ(SuggestionOriginName(next->origin), "simulated optimum");
  EXPECT_EQ(next->point, (Point{0.3, 0.7}));
}

TEST(BayesSearchTest, BatchSuggestionsAreDistinct) {
  BayesSearch search(QuadraticSpace(), SearchOptions{});
  for (int i = 0; i < 6; ++i) {
    Point p{0.1 + 0.15 * i, 0.9 - 0.13 * i};
    ASSERT_TRUE(search.Observe({p, Fidelity::kMeasured, Quadratic(p)}).ok());
  }
  StatusOr<std::vector<Suggestion>> batch = search.SuggestBatch(Fidelity::kMeasured, 4);
  ASSERT_TRUE(batch.ok()) << batch.status().message();
  ASSERT_EQ(batch->size(), 4u);
  std::set<Point> distinct;
  for (const Suggestion& s : *batch) distinct.insert(s.point);
  EXPECT_EQ(distinct.size(), 4u);
  EXPECT_EQ(search.count(Fidelity::kMeasured), 6);  // the search itself is unchanged
}

}  // namespace
}  // namespace autotune::tuner
