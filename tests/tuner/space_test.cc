#include "tuner/space.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "traces/knobs.h"
#include "tuner/knob_space.h"

namespace autotune::tuner {
namespace {

Space MixedSpace() {
  Space space;
  EXPECT_TRUE(
      space.AddDimension(Dimension::Continuous("threshold_mb", 0, 512, Scale::kLog1p, 128)).ok());
  EXPECT_TRUE(space.AddDimension(Dimension::Continuous("cycle_ms", 0.1, 100, Scale::kLog, 1)).ok());
  EXPECT_TRUE(space.AddDimension(Dimension::Integer("cache", 0, 4096, Scale::kLog1p, 1024)).ok());
  EXPECT_TRUE(space.AddDimension(Dimension::Boolean("hier", false)).ok());
  EXPECT_TRUE(space
                  .AddDimension(
                      Dimension::Categorical("algo", {"", "ring", "tree"}, 0, Lifetime::kPerLaunch))
                  .ok());
  return space;
}

TEST(SpaceTest, EncodesLogScalesAndOneHot) {
  Space space = MixedSpace();
  EXPECT_EQ(space.encoded_size(), 1 + 1 + 1 + 1 + 3);
  Eigen::VectorXd u = space.Encode({0.0, 0.1, 4096, 1, 2});
  EXPECT_DOUBLE_EQ(u[0], 0.0);  // log(1 + 0) is the lower end
  EXPECT_DOUBLE_EQ(u[1], 0.0);
  EXPECT_DOUBLE_EQ(u[2], 1.0);
  EXPECT_DOUBLE_EQ(u[3], 1.0);
  EXPECT_DOUBLE_EQ(u[4], 0.0);
  EXPECT_DOUBLE_EQ(u[5], 0.0);
  EXPECT_DOUBLE_EQ(u[6], 1.0);
  // cycle 1 ms on log [0.1, 100] sits at 1/3; threshold 31 MB at log(32)/log(513).
  u = space.Encode({31.0, 1.0, 0, 0, 0});
  EXPECT_NEAR(u[0], std::log(32.0) / std::log(513.0), 1e-12);
  EXPECT_NEAR(u[1], 1.0 / 3.0, 1e-12);
}

TEST(SpaceTest, DecodeRoundsIntegersAndPicksCategories) {
  Space space = MixedSpace();
  Eigen::VectorXd u(7);
  u << 0.5, 0.5, 0.5, 0.49, 0.2, 0.7, 0.3;
  Point p = space.Decode(u);
  EXPECT_NEAR(p[0], std::expm1(0.5 * std::log(513.0)), 1e-9);
  EXPECT_NEAR(p[1], std::sqrt(10.0), 1e-9);  // geometric middle of [0.1, 100]
  EXPECT_EQ(p[2], std::round(std::expm1(0.5 * std::log(4097.0))));
  EXPECT_EQ(p[3], 0.0);
  EXPECT_EQ(p[4], 1.0);  // "ring" has the largest one-hot coordinate
  EXPECT_EQ(space.ValueText(p, 4), "ring");
  EXPECT_EQ(space.ValueText(p, 3), "false");
}

TEST(SpaceTest, RoundTripOfRandomPoints) {
  Space space = MixedSpace();
  std::mt19937_64 rng(3);
  for (int i = 0; i < 200; ++i) {
    Point p = space.Random(rng);
    ASSERT_TRUE(space.Validate(p).ok()) << space.Describe(p);
    Point back = space.Decode(space.Encode(p));
    for (int d = 0; d < space.num_dimensions(); ++d) {
      EXPECT_NEAR(back[d], p[d], 1e-9 * std::max(1.0, std::fabs(p[d]))) << space.dimension(d).name;
    }
  }
}

TEST(SpaceTest, ConstantsHaveNoCoordinatesAndNeverMove) {
  Space space = MixedSpace();
  ASSERT_TRUE(space.SetConstantText("hier", "true").ok());
  ASSERT_TRUE(space.SetConstant("cycle_ms", 3.5).ok());
  EXPECT_EQ(space.encoded_size(), 5);
  std::mt19937_64 rng(5);
  for (int i = 0; i < 100; ++i) {
    Eigen::VectorXd u = Eigen::VectorXd::Random(space.encoded_size()).array().abs();
    Point p = space.Decode(u);
    EXPECT_EQ(p[1], 3.5);
    EXPECT_EQ(p[3], 1.0);
    Point r = space.Random(rng);
    EXPECT_EQ(r[1], 3.5);
    EXPECT_EQ(r[3], 1.0);
  }
  Point moved = space.Default();
  moved[1] = 2.0;
  Status status = space.Validate(moved);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("cycle_ms"), std::string::npos);
}

TEST(SpaceTest, RuntimeOnlyFixesPerLaunchDimensions) {
  Space space = MixedSpace();
  Point fixed = space.Default();
  fixed[4] = 2;  // tree
  Space runtime = space.RuntimeOnly(fixed);
  EXPECT_TRUE(runtime.is_constant(4));
  EXPECT_FALSE(runtime.is_constant(0));
  EXPECT_EQ(runtime.encoded_size(), 4);
  EXPECT_EQ(runtime.Decode(Eigen::VectorXd::Zero(4))[4], 2.0);
}

TEST(SpaceTest, RejectsBadDimensionsAndValues) {
  Space space;
  EXPECT_FALSE(space.AddDimension(Dimension::Continuous("x", 0, 1, Scale::kLog, 0.5)).ok());
  EXPECT_FALSE(space.AddDimension(Dimension::Continuous("x", 1, 1, Scale::kLinear, 1)).ok());
  EXPECT_FALSE(space.AddDimension(Dimension::Continuous("x", 0, 1, Scale::kLinear, 2)).ok());
  EXPECT_FALSE(space.AddDimension(Dimension::Categorical("c", {"a", "a"}, 0)).ok());
  ASSERT_TRUE(space.AddDimension(Dimension::Integer("n", 0, 10, Scale::kLinear, 3)).ok());
  EXPECT_FALSE(space.AddDimension(Dimension::Integer("n", 0, 10, Scale::kLinear, 3)).ok());
  EXPECT_FALSE(space.SetConstant("n", 2.5).ok());
  EXPECT_FALSE(space.SetConstant("n", 11).ok());
  EXPECT_FALSE(space.SetConstant("missing", 1).ok());
  EXPECT_FALSE(space.ParseValue(0, "abc").ok());
  EXPECT_EQ(space.encoded_size(), 1);
}

// kZeroOrLog: 0 owns the first fifth of the coordinate, [1, 1000] the rest on a log scale
// (1 at 0.2, 1000 at 1, 10^1.5 = 31.6... half-way at 0.6); nothing between 0 and 1 decodes.
TEST(SpaceTest, ZeroOrLogDecodesToZeroOrTheRange) {
  Space space;
  ASSERT_TRUE(
      space.AddDimension(Dimension::Continuous("t", 1, 1000, Scale::kZeroOrLog, 0)).ok());
  auto decode = [&](double u) { return space.Decode(Eigen::VectorXd::Constant(1, u))[0]; };
  auto encode = [&](double x) { return space.Encode({x})[0]; };
  EXPECT_EQ(decode(0.0), 0.0);
  EXPECT_EQ(decode(0.19), 0.0);
  EXPECT_DOUBLE_EQ(decode(0.2), 1.0);
  EXPECT_NEAR(decode(0.6), std::pow(10.0, 1.5), 1e-9);
  EXPECT_DOUBLE_EQ(decode(1.0), 1000.0);
  EXPECT_EQ(encode(0.0), 0.0);
  EXPECT_DOUBLE_EQ(encode(1.0), 0.2);
  EXPECT_DOUBLE_EQ(encode(1000.0), 1.0);
  EXPECT_DOUBLE_EQ(encode(0.5), 0.2);  // clamped to the range's end
  // Snap: the point a coordinate stands for.
  EXPECT_EQ(space.Snap(Eigen::VectorXd::Constant(1, 0.1))[0], 0.0);
  EXPECT_DOUBLE_EQ(space.Snap(Eigen::VectorXd::Constant(1, 0.6))[0], 0.6);
  EXPECT_TRUE(space.CheckValue(0, 0.0).ok());
  EXPECT_TRUE(space.CheckValue(0, 1.0).ok());
  EXPECT_FALSE(space.CheckValue(0, 0.5).ok());
  EXPECT_FALSE(space.CheckValue(0, 1001.0).ok());

  // Two-valued (lower == upper): 0 or 404, half the coordinate each; integers.
  Space cache;
  ASSERT_TRUE(cache.AddDimension(Dimension::Integer("c", 404, 404, Scale::kZeroOrLog, 404)).ok());
  EXPECT_EQ(cache.Decode(Eigen::VectorXd::Constant(1, 0.49))[0], 0.0);
  EXPECT_EQ(cache.Decode(Eigen::VectorXd::Constant(1, 0.5))[0], 404.0);
  EXPECT_EQ(cache.Encode({404.0})[0], 1.0);
  EXPECT_FALSE(cache.CheckValue(0, 42.0).ok());
  // lower == upper is a range only on this scale; a log scale needs lower > 0.
  EXPECT_FALSE(cache.AddDimension(Dimension::Integer("d", 4, 4, Scale::kLog, 4)).ok());
  EXPECT_FALSE(cache.AddDimension(Dimension::Integer("e", 0, 4, Scale::kZeroOrLog, 0)).ok());
  // RuntimeOnly keeps a per-launch 0 at 0.
  Space per_launch;
  ASSERT_TRUE(per_launch
                  .AddDimension(Dimension::Continuous("t", 1, 1000, Scale::kZeroOrLog, 0,
                                                      Lifetime::kPerLaunch))
                  .ok());
  EXPECT_EQ(per_launch.RuntimeOnly({0.0}).Default()[0], 0.0);
}

TEST(KnobSpaceTest, MatchesTheDesignTable) {
  Space space = KnobSearchSpace(BackendKind::kMpi);
  Point d = space.Default();
  EXPECT_EQ(space.ValueText(d, space.IndexOf("fusion_threshold_mb")), "128");
  EXPECT_EQ(space.ValueText(d, space.IndexOf("cycle_time_ms")), "1");
  EXPECT_EQ(space.ValueText(d, space.IndexOf("cache_capacity")), "1024");
  EXPECT_EQ(space.ValueText(d, space.IndexOf("hierarchical_allreduce")), "false");
  EXPECT_EQ(space.ValueText(d, space.IndexOf("num_groups")), "0");
  EXPECT_EQ(space.dimension(space.IndexOf("mpi_allreduce_algorithm")).lifetime,
            Lifetime::kPerLaunch);
  EXPECT_TRUE(space.Validate(d).ok());
  Space nccl = KnobSearchSpace(BackendKind::kNccl);
  EXPECT_GE(nccl.IndexOf("nccl_proto"), 0);
  EXPECT_LT(nccl.IndexOf("mpi_allreduce_algorithm"), 0);
}

TEST(SpaceTest, BooleansTakeTheKnobTablesSpellingsAndBoundsAreExact) {
  Space space = MixedSpace();
  ASSERT_TRUE(space.SetConstantText("hier", "True").ok());  // as a YAML file writes it
  EXPECT_EQ(space.Default()[3], 1.0);
  EXPECT_FALSE(space.ParseValue(3, "maybe").ok());
  // No slack around the bounds: values travel as numbers, never printed and parsed back.
  EXPECT_TRUE(space.CheckValue(0, 512.0).ok());
  EXPECT_FALSE(space.CheckValue(0, 512.0 * (1 + 1e-12)).ok());
  EXPECT_FALSE(space.CheckValue(1, 0.1 * (1 - 1e-12)).ok());
}

TEST(KnobSpaceTest, KnobValuesMoveAsNumbersAtTheirTextsPrecision) {
  Space space = KnobSearchSpace(BackendKind::kNccl);
  Point proposed = space.Default();
  proposed[space.IndexOf("cycle_time_ms")] = 0.439251818493754;
  proposed[space.IndexOf("fusion_threshold_mb")] = 511.9999999;
  Knobs written;
  for (int i = 0; i < space.num_dimensions(); ++i) SetKnobCoordinate(space, proposed, i, &written);
  // Six significant digits, as HOROVOD_CYCLE_TIME and the config file carry them.
  EXPECT_EQ(written.cycle_time_ms, 0.439252);
  EXPECT_EQ(written.fusion_threshold_mb, 512.0);
  Knobs knobs;
  knobs.fusion_threshold_mb = 32.125;
  knobs.cycle_time_ms = 0.1;  // the lower bound itself
  knobs.hierarchical_allreduce = true;
  knobs.nccl_algo = "tree";
  Point point(space.num_dimensions());
  for (int i = 0; i < space.num_dimensions(); ++i) {
    StatusOr<double> value = KnobCoordinate(space, i, knobs);
    ASSERT_TRUE(value.ok()) << value.status().message();
    point[i] = *value;
  }
  EXPECT_EQ(point[space.IndexOf("fusion_threshold_mb")], 32.125);
  EXPECT_EQ(point[space.IndexOf("hierarchical_allreduce")], 1.0);
  EXPECT_EQ(point[space.IndexOf("nccl_algo")], 2.0);  // search choices "", ring, tree
  Knobs back;
  for (int i = 0; i < space.num_dimensions(); ++i) SetKnobCoordinate(space, point, i, &back);
  EXPECT_EQ(back, knobs);
  // A value with no place in the space is refused, naming the knob.
  knobs.nccl_algo = "nvls";  // a valid NCCL_ALGO, but not among the searched choices
  StatusOr<double> refused = KnobCoordinate(space, space.IndexOf("nccl_algo"), knobs);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("nccl_algo"), std::string::npos);
  // Fixing a dimension at a knob's value.
  ASSERT_TRUE(FixKnobAt(&space, "cycle_time_ms", knobs).ok());
  EXPECT_TRUE(space.is_constant(space.IndexOf("cycle_time_ms")));
  EXPECT_EQ(space.Default()[space.IndexOf("cycle_time_ms")], 0.1);
}

}  // namespace
}  // namespace autotune::tuner
