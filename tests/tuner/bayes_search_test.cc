#include "tuner/bayes_search.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

namespace autotune::tuner {
namespace {

Space QuadraticSpace() {
  Space space;
  EXPECT_TRUE(space.AddDimension(Dimension::Continuous("x", 0, 1, Scale::kLinear, 0.5)).ok());
  EXPECT_TRUE(space.AddDimension(Dimension::Continuous("y", 0, 1, Scale::kLinear, 0.5)).ok());
  return space;
}

double Quadratic(const Point& p) {
  return -((p[0] - 0.3) * (p[0] - 0.3) + (p[1] - 0.7) * (p[1] - 0.7));
}

TEST(BayesSearchTest, FindsTheOptimumOfASmoothFunction) {
  SearchOptions options;
  options.max_measured_samples = 20;
  Objective measured = [](const Point& p) -> StatusOr<double> { return Quadratic(p); };
  StatusOr<SearchResult> result = RunBayesSearch(QuadraticSpace(), options, measured, nullptr);
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->stop_reason, StopReason::kBudgetSpent);
  EXPECT_EQ(result->measured_evaluations, 20);
  EXPECT_GT(Quadratic(result->best.point), -1e-3);
}

TEST(BayesSearchTest, ConstantsAreNeverMoved) {
  Space space;
  ASSERT_TRUE(space.AddDimension(Dimension::Continuous("x", 0, 1, Scale::kLinear, 0.5)).ok());
  ASSERT_TRUE(space.AddDimension(Dimension::Boolean("b", false)).ok());
  ASSERT_TRUE(space.AddDimension(Dimension::Categorical("c", {"p", "q", "r"}, 0)).ok());
  ASSERT_TRUE(space.AddDimension(Dimension::Continuous("cycle", 0.1, 100, Scale::kLog, 1)).ok());
  ASSERT_TRUE(space.SetConstant("b", 0).ok());  // the objective would prefer 1
  ASSERT_TRUE(space.SetConstant("cycle", 7.5).ok());
  int moved = 0;
  auto objective = [&](const Point& p) -> StatusOr<double> {
    if (p[1] != 0.0 || p[3] != 7.5) ++moved;
    return -(p[0] - 0.6) * (p[0] - 0.6) + p[1] + 0.1 * p[2];
  };
  SearchOptions options;
  options.simulated_budget = 10;
  options.max_measured_samples = 8;
  StatusOr<SearchResult> result = RunBayesSearch(space, options, objective, objective);
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(moved, 0);
  // The simulated budget, plus one simulation per measured point not simulated before.
  EXPECT_GE(result->simulated_evaluations, 10);
  EXPECT_LE(result->simulated_evaluations, 10 + 8);
  EXPECT_EQ(result->measured_evaluations, 8);
  EXPECT_EQ(result->best.point[1], 0.0);
  EXPECT_EQ(result->best.point[3], 7.5);
  EXPECT_EQ(result->best.point[2], 2.0);  // the free categorical was found
  // A prior observation with a moved constant is refused, naming it.
  StatusOr<SearchResult> refused =
      RunBayesSearch(space, options, objective, nullptr,
                     {Observation{{0.5, 1.0, 0.0, 7.5}, Fidelity::kMeasured, 1.0}});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("'b'"), std::string::npos);
}

// A 7 x 7 grid of candidates: every suggestion is one of them, none is measured twice while
// others are left, and the grid's best is found well before the grid is exhausted.
TEST(BayesSearchTest, CandidatesRestrictTheSearchToAGrid) {
  SearchOptions options;
  for (int i = 0; i < 7; ++i) {
    for (int j = 0; j < 7; ++j) options.candidates.push_back({i / 6.0, j / 6.0});
  }
  const std::set<Point> grid(options.candidates.begin(), options.candidates.end());
  Point grid_best;
  for (const Point& c : options.candidates) {
    if (grid_best.empty() || Quadratic(c) > Quadratic(grid_best)) grid_best = c;
  }
  options.max_measured_samples = 15;
  std::set<Point> measured_points;
  int repeats = 0, off_grid = 0;
  Objective measured = [&](const Point& p) -> StatusOr<double> {
    if (!grid.count(p)) ++off_grid;
    if (!measured_points.insert(p).second) ++repeats;
    return Quadratic(p);
  };
  StatusOr<SearchResult> result = RunBayesSearch(QuadraticSpace(), options, measured, nullptr);
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(off_grid, 0);
  EXPECT_EQ(repeats, 0);
  EXPECT_EQ(result->best.point, grid_best);
  // A candidate outside the space is refused, naming it.
  options.candidates.push_back({0.5, 2.0});
  StatusOr<SearchResult> refused = RunBayesSearch(QuadraticSpace(), options, measured, nullptr);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("candidate 49"), std::string::npos)
      << refused.status().message();
}

TEST(BayesSearchTest, StopsOnLowExpectedImprovementAndSaysSo) {
  SearchOptions options;
  options.max_measured_samples = 40;
  options.min_expected_improvement_ratio = 1e-3;
  // A flat objective far from zero: nothing left to gain once the model has seen a few points.
  Objective flat = [](const Point& p) -> StatusOr<double> { return 100.0 + 1e-3 * p[0]; };
  StatusOr<SearchResult> result = RunBayesSearch(QuadraticSpace(), options, flat, nullptr);
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->stop_reason, StopReason::kExpectedImprovementBelowThreshold);
  EXPECT_LT(result->measured_evaluations, 40);
  EXPECT_STREQ(StopReasonName(result->stop_reason), "expected improvement below threshold");
}

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
  EXPECT_EQ(next->origin, "simulated optimum");
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

TEST(BayesSearchTest, ObjectiveFailureAbortsWithItsStatus) {
  SearchOptions options;
  Objective failing = [](const Point&) -> StatusOr<double> {
    return Status::IoError("launcher exited with 3");
  };
  StatusOr<SearchResult> result = RunBayesSearch(QuadraticSpace(), options, failing, nullptr);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("launcher exited with 3"), std::string::npos);
  EXPECT_NE(result.status().message().find("measured objective"), std::string::npos);
}

}  // namespace
}  // namespace autotune::tuner
