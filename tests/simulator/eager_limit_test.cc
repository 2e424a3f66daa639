// What a setting's mpi_tcp_eager_limit does to a replay (simulator/eager_limit.h): the job's
// collectives scaled by the ratio of two calibrates of its topology, one at the setting's
// limit and one at the job's, only at the sizes where some message can lie between the two
// limits; a limit with no calibrate between is held.
#include "simulator/eager_limit.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "simulator/simulation.h"
#include "tests/support/sim_fixtures.h"
#include "tests/support/synthetic.h"

namespace autotune::sim {
namespace {

using testing::MakeSimulation;
using testing::MakeTrace;
using testing::MakeWorkload;
using testing::PlainKnobs;
using testing::Topo;

// A calibrate of 2x1 off a uniform network of `latency_us` per step and `bytes_per_us`.
Calibration CalibrateAt(double latency_us, double bytes_per_us, int limit, int64_t id) {
  NetworkParams params = NetworkParams::Uniform(latency_us, bytes_per_us);
  params.copy = {0.0, 1e12};
  Calibration c = SynthesizeCalibration(NetworkModel::FromParams(params, Topo(2, 1)), id);
  c.mpi_tcp_eager_limit = limit;
  return c;
}

// The job at Open MPI's own limit (5 us, 200 B/us); a calibrate at 1 MiB whose every
// collective takes half as long (2.5 us, 400 B/us), and one at 256 KiB 0.8 as long.
EagerLimitEffect TwoLimits() {
  EagerLimitEffect e;
  const Status s = EagerLimitEffect::Fit(
      0, CalibrateAt(5.0, 200.0, 0, 1),
      {CalibrateAt(2.5, 400.0, 1 << 20, 2), CalibrateAt(4.0, 250.0, 256 << 10, 3)}, &e);
  EXPECT_TRUE(s.ok()) << s.message();
  return e;
}

TEST(EagerLimitTest, ChoosesTheCalibratedLimitNearestTheSettingOnTheJobsSide) {
  const EagerLimitEffect e = TwoLimits();
  ASSERT_FALSE(e.empty());
  EXPECT_EQ(e.Choose(0), -1);      // the job's own
  EXPECT_EQ(e.Choose(65536), -1);  // Open MPI's own, spelled out
  EXPECT_EQ(e.Choose(131072), -1);  // above the job's, below every calibrate
  EXPECT_EQ(e.Choose(32768), -1);   // below the job's: none calibrated there
  const int at_256k = e.Choose(256 << 10);
  const int at_1m = e.Choose(1 << 20);
  ASSERT_GE(at_256k, 0);
  ASSERT_GE(at_1m, 0);
  EXPECT_EQ(e.limit(at_256k), 256 << 10);
  EXPECT_EQ(e.limit(at_1m), 1 << 20);
  EXPECT_EQ(e.Choose(512 << 10), at_256k);  // not the larger limit it does not reach
  EXPECT_EQ(e.Choose(4 << 20), at_1m);
  EXPECT_EQ(e.calibration_id(at_1m), 2);
  EXPECT_EQ(e.base_calibration_id(), 1);
}

TEST(EagerLimitTest, BelowTheJobsLimitTakesTheNearestCalibrateAtOrAboveTheSetting) {
  // The job ran at 1 MiB; calibrates at Open MPI's own (twice as slow) and at 1 MiB.
  EagerLimitEffect e;
  ASSERT_TRUE(EagerLimitEffect::Fit(1 << 20, CalibrateAt(2.5, 400.0, 1 << 20, 1),
                                    {CalibrateAt(5.0, 200.0, 0, 2)}, &e)
                  .ok());
  EXPECT_EQ(e.Choose(1 << 20), -1);
  EXPECT_EQ(e.Choose(131072), -1);  // between 64 KiB and 1 MiB: no calibrate
  const int own = e.Choose(0);
  ASSERT_GE(own, 0);
  EXPECT_EQ(e.limit(own), 0);
  EXPECT_NEAR(e.Ratio(own, Op::kAllreduce, 1000000), 2.0, 1e-9);
}

TEST(EagerLimitTest, RatioIsTheCalibratesRatioWhereAMessageCanCrossAndOneElsewhere) {
  const EagerLimitEffect e = TwoLimits();
  const int at_1m = e.Choose(1 << 20);
  // Uniform networks: at every size the 1 MiB calibrate is exactly half the job's.
  EXPECT_NEAR(e.Ratio(at_1m, Op::kAllreduce, 1000000), 0.5, 1e-9);
  EXPECT_NEAR(e.Ratio(at_1m, Op::kAllgather, 1000000), 0.5, 1e-9);
  EXPECT_NEAR(e.Ratio(at_1m, Op::kAllreduce, 40000), 0.5, 1e-9);  // above 64 KiB / 2
  // At most 32 KiB: every message is eager under both limits.
  EXPECT_EQ(e.Ratio(at_1m, Op::kAllreduce, 32768), 1.0);
  EXPECT_EQ(e.Ratio(at_1m, Op::kAllreduce, 4096), 1.0);
  // Over 2 ranks, pieces of more than twice 1 MiB: rendezvous under both.
  EXPECT_EQ(e.Ratio(at_1m, Op::kAllreduce, int64_t{5} << 20), 1.0);
  EXPECT_NEAR(e.Ratio(at_1m, Op::kAllreduce, int64_t{4} << 20), 0.5, 1e-9);
  EXPECT_EQ(e.Ratio(-1, Op::kAllreduce, 1000000), 1.0);
  const std::string line = e.Describe();
  EXPECT_NE(line.find("262144 by calibration 3 against 1 at the job's 0"), std::string::npos)
      << line;
  EXPECT_NE(line.find("the flat allreduce 0.80-0.80x"), std::string::npos) << line;
  EXPECT_NE(line.find("1048576 by calibration 2 against 1 at the job's 0"), std::string::npos)
      << line;
  EXPECT_NE(line.find("the flat allreduce 0.50-0.50x"), std::string::npos) << line;
}

// A calibrate of 2x2 with world allreduce points (bytes, median, mean; mean 0: not measured).
Calibration Points(int64_t id, int limit,
                   const std::vector<std::tuple<int64_t, double, double>>& points) {
  Calibration c;
  c.id = id;
  c.topology = Topo(2, 2);
  c.mpi_tcp_eager_limit = limit;
  for (const auto& [bytes, median, mean] : points) {
    c.points.push_back({.op = Op::kAllreduce, .scope = Scope::kWorld, .ranks = 4, .bytes = bytes,
                        .repetitions = 10, .median_us = median, .min_us = median,
                        .max_us = 4 * mean, .mean_us = mean});
  }
  return c;
}

// The rendezvous is a tail: the same median at both limits, a mean far above it at Open MPI's
// own. Where both calibrates measured means, the ratio is of the means (interpolated in log
// bytes between the sizes, the nearest size's beyond them); where one did not, of the medians.
TEST(EagerLimitTest, TheTailCountsWhereBothCalibratesMeasuredMeans) {
  const Calibration base = Points(1, 0, {{131072, 800.0, 1000.0}, {262144, 2100.0, 3000.0},
                                         {524288, 4400.0, 4400.0}});
  const Calibration eager = Points(2, 524288, {{131072, 800.0, 800.0}, {262144, 2100.0, 2100.0},
                                               {524288, 4400.0, 4400.0}});
  EagerLimitEffect e;
  ASSERT_TRUE(EagerLimitEffect::Fit(0, base, {eager}, &e).ok());
  const int i = e.Choose(524288);
  ASSERT_GE(i, 0);
  EXPECT_NEAR(e.Ratio(i, Op::kAllreduce, 262144), 0.7, 1e-12);
  EXPECT_NEAR(e.Ratio(i, Op::kAllreduce, 131072), 0.8, 1e-12);
  EXPECT_NEAR(e.Ratio(i, Op::kAllreduce, 185364), 0.75, 1e-5);  // sqrt(2) x 128 KiB: halfway
  EXPECT_NEAR(e.Ratio(i, Op::kAllreduce, 2000000), 1.0, 1e-12);   // beyond: 512 KiB's
  EXPECT_NEAR(e.Ratio(i, Op::kAllreduce, 40000), 0.8, 1e-12);     // before: 128 KiB's
  EXPECT_NE(e.Describe().find("their means"), std::string::npos) << e.Describe();

  // One calibrate without means (made before schema 8): the medians, equal at every size.
  Calibration old = base;
  for (CalibrationPoint& p : old.points) p.mean_us = 0.0;
  ASSERT_TRUE(EagerLimitEffect::Fit(0, old, {eager}, &e).ok());
  EXPECT_EQ(e.Ratio(e.Choose(524288), Op::kAllreduce, 262144), 1.0);
  EXPECT_NE(e.Describe().find("their medians: the flat allreduce unchanged at every size"),
            std::string::npos)
      << e.Describe();
}

// The job's own allreduces of `bytes`: `count` of them, their median and mean.
CollectiveTail AllreduceTail(int64_t bytes, int count, double median_us, double mean_us) {
  return {.op = Op::kAllreduce,
          .bytes = bytes,
          .bin = SelfCalibrationBin(static_cast<double>(bytes)),
          .count = count,
          .median_us = median_us,
          .mean_us = mean_us};
}

// Where the job's own collectives show a size (10 or more), a higher limit takes out the
// job's own tail: its median over its mean, times the higher limit's calibrate mean over the
// job's limit's calibrate median. Fewer than 10 of a size, or a lower limit (a stall added,
// not removed), take the calibrates' ratio.
// Calibrates at Open MPI's own limit and at 524288: 256 KiB with the same median (2000 us), its
// mean 3000 at the first and 2100 at the second; 128 KiB's mean 1000 and 800.
Calibration TailedBase() {
  return Points(1, 0, {{131072, 800.0, 1000.0}, {262144, 2000.0, 3000.0},
                       {524288, 4400.0, 4400.0}});
}
Calibration TailedEager() {
  return Points(2, 524288, {{131072, 800.0, 800.0}, {262144, 2000.0, 2100.0},
                            {524288, 4400.0, 4400.0}});
}

TEST(EagerLimitTest, AHigherLimitTakesOutTheJobsOwnTailWhereItShowsTheSize) {
  const Calibration base = TailedBase();
  const Calibration eager = TailedEager();
  EagerLimitEffect e;
  ASSERT_TRUE(EagerLimitEffect::Fit(0, base, {eager}, &e).ok());
  const int i = e.Choose(524288);
  EXPECT_NEAR(e.Ratio(i, Op::kAllreduce, 262144), 0.7, 1e-12);  // 2100 / 3000, no tails yet
  // The job's 256 KiB allreduces: median 1500, mean 2000 (lighter than the calibrate's tail).
  e.SetJobTails(
      {AllreduceTail(262144, 40, 1500.0, 2000.0), AllreduceTail(131072, 9, 500.0, 1000.0)});
  EXPECT_NEAR(e.Ratio(i, Op::kAllreduce, 262144), 0.75 * (2100.0 / 2000.0), 1e-12);
  EXPECT_NEAR(e.Ratio(i, Op::kAllreduce, 131072), 0.8, 1e-12);  // 9 collectives: not enough

  // The job at 512 KiB, a setting at Open MPI's own: the calibrates' ratio, tails or not.
  EagerLimitEffect down;
  ASSERT_TRUE(EagerLimitEffect::Fit(524288, eager, {base}, &down).ok());
  down.SetJobTails({AllreduceTail(262144, 40, 1500.0, 2000.0)});
  EXPECT_NEAR(down.Ratio(down.Choose(0), Op::kAllreduce, 262144), 3000.0 / 2100.0, 1e-12);
}

TEST(EagerLimitTest, TheJobsOwnRunsAtALimitStandForTheCalibratesWhereTheyShowTheSize) {
  EagerLimitEffect e;
  ASSERT_TRUE(EagerLimitEffect::Fit(0, TailedBase(), {TailedEager()}, &e).ok());
  const int i = e.Choose(524288);
  e.SetJobTails({AllreduceTail(262144, 40, 1500.0, 2000.0)});
  // The job's own runs at 524288: 256 KiB allreduces at a mean of 1800 us against 2000 at its
  // own limit (0.9, in place of the tail rule's 0.75 x 2100 / 2000); 128 KiB ones (40 at
  // 524288, 30 at the job's limit) 1100 against 1000: slower at a higher limit, held at 1.
  const std::vector<CollectiveTail> at_job = {AllreduceTail(262144, 40, 1500.0, 2000.0),
                                              AllreduceTail(131072, 30, 900.0, 1000.0)};
  e.SetJobAtLimit(524288, {AllreduceTail(262144, 40, 1700.0, 1800.0),
                           AllreduceTail(131072, 40, 1000.0, 1100.0)},
                  at_job);
  EXPECT_NEAR(e.Ratio(i, Op::kAllreduce, 262144), 0.9, 1e-12);
  EXPECT_EQ(e.Ratio(i, Op::kAllreduce, 131072), 1.0);
  EXPECT_NE(e.Describe().find("(the job's own runs at 524288 where they show the size: 2 sizes)"),
            std::string::npos)
      << e.Describe();
  // 9 collectives at the limit are too few: the tail rule again.
  e.SetJobAtLimit(524288, {AllreduceTail(262144, 9, 1700.0, 1800.0)}, at_job);
  EXPECT_NEAR(e.Ratio(i, Op::kAllreduce, 262144), 0.75 * (2100.0 / 2000.0), 1e-12);
  EXPECT_EQ(e.Describe().find("the job's own runs"), std::string::npos) << e.Describe();
  // A limit with no calibrate is kept for none: the calibrated limit's ratio stays.
  e.SetJobAtLimit(1 << 20, {AllreduceTail(262144, 40, 1000.0, 1000.0)}, at_job);
  EXPECT_NEAR(e.Ratio(i, Op::kAllreduce, 262144), 0.75 * (2100.0 / 2000.0), 1e-12);
}

// A higher limit only takes a handshake away, a lower one only adds it: where the calibrates
// say otherwise, the size is held (ratio 1), with or without the job's own tail; below the
// job's limit, a calibrate faster than the job's limit's is held the same way. The points are
// bench/horovod's pair of 2026-12-06 17:36-17:38 (median, mean us), whose few stalls among 30
// repetitions at 524288 put its means above Open MPI's own limit's at 128 and 256 KiB.
TEST(EagerLimitTest, NoiseThatWouldMakeAHigherLimitSlowerIsHeld) {
  const Calibration base = Points(1, 0, {{131072, 805.0, 807.0}, {262144, 2245.0, 3649.0},
                                         {524288, 4625.0, 5760.0}});
  const Calibration eager = Points(2, 524288, {{131072, 809.0, 1468.0}, {262144, 2142.0, 5942.0},
                                               {524288, 4331.0, 4382.0}});
  EagerLimitEffect e;
  ASSERT_TRUE(EagerLimitEffect::Fit(0, base, {eager}, &e).ok());
  const int i = e.Choose(524288);
  ASSERT_GE(i, 0);
  EXPECT_EQ(e.Ratio(i, Op::kAllreduce, 131072), 1.0);
  EXPECT_EQ(e.Ratio(i, Op::kAllreduce, 262144), 1.0);
  EXPECT_NEAR(e.Ratio(i, Op::kAllreduce, 524288), 4382.0 / 5760.0, 1e-12);  // still taken
  // The job's own 256 KiB tail (median 1,986, mean 2,845 us): 0.698 x 5942 / 2245 = 1.85.
  e.SetJobTails({AllreduceTail(262144, 3000, 1986.0, 2845.0)});
  EXPECT_EQ(e.Ratio(i, Op::kAllreduce, 262144), 1.0);
  // The job at 512 KiB, a setting at Open MPI's own: 128 KiB 807 / 1468 would be 0.55.
  EagerLimitEffect down;
  ASSERT_TRUE(EagerLimitEffect::Fit(524288, eager, {base}, &down).ok());
  EXPECT_EQ(down.Ratio(down.Choose(0), Op::kAllreduce, 131072), 1.0);
  EXPECT_NEAR(down.Ratio(down.Choose(0), Op::kAllreduce, 524288), 5760.0 / 4382.0, 1e-12);
}

// A calibrate at another limit that measured none of the base's sizes is not used: the limit
// is held, and a prediction is still made.
TEST(EagerLimitTest, ACalibrateOfOtherSizesIsLeftOut) {
  const Calibration base = Points(1, 0, {{262144, 2000.0, 3000.0}});
  const Calibration other = Points(2, 524288, {{300000, 2000.0, 2100.0}});
  EagerLimitEffect e;
  ASSERT_TRUE(EagerLimitEffect::Fit(0, base, {other}, &e).ok());
  EXPECT_TRUE(e.empty());
  EXPECT_EQ(e.Choose(524288), -1);
}

TEST(EagerLimitTest, RefusesACalibrateOfAnotherTopology) {
  NetworkParams params = NetworkParams::Uniform(5.0, 200.0);
  Calibration other = SynthesizeCalibration(NetworkModel::FromParams(params, Topo(4, 1)), 9);
  other.mpi_tcp_eager_limit = 131072;
  EagerLimitEffect e;
  const Status s = EagerLimitEffect::Fit(0, CalibrateAt(5.0, 200.0, 0, 1), {other}, &e);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("calibration 9"), std::string::npos) << s.message();
}

// One tensor of 1e6 bytes ready 2.3 ms into the backward pass on 2 ranks, a 1 ms cycle: it
// waits for the 3 ms cycle, then 10 us latency + 5000 us transfer, then the 1 ms tail
// (simulation_score_test.cc's case). At a limit whose calibrate is half the job's, the
// collective takes half: 3000 + 2505 + 1000 us.
TEST(EagerLimitTest, ASettingsLimitScalesItsCollectivesInTheReplay) {
  Knobs job = PlainKnobs(0.0, 1.0);
  const Trace trace =
      MakeTrace(MakeWorkload({1000000}, {2.3}, 0.0, 2.5, 1.0), Topo(2, 1), job, 9000.0, 10.0);
  NetworkParams params = NetworkParams::Uniform(5.0, 200.0);
  params.copy = {0.0, 1e12};
  Simulation sim = MakeSimulation(trace, NetworkModel::FromParams(params, Topo(2, 1)));
  sim.set_eager_limits(std::make_shared<const EagerLimitEffect>(TwoLimits()));

  EXPECT_NEAR(sim.Evaluate(job).step_ms_median * 1000.0, 3000.0 + 5010.0 + 1000.0, 1e-3);
  Knobs eager = job;
  eager.mpi_tcp_eager_limit = 1 << 20;
  EXPECT_NEAR(sim.Evaluate(eager).step_ms_median * 1000.0, 3000.0 + 2505.0 + 1000.0, 1e-3);
  EXPECT_EQ(sim.EagerLimitHeld(eager), "");
  // 256 KiB: its calibrate is 0.8 as long (4 us x 2 + 1e6 / 250 B/us).
  eager.mpi_tcp_eager_limit = 256 << 10;
  EXPECT_NEAR(sim.Evaluate(eager).step_ms_median * 1000.0, 3000.0 + 4008.0 + 1000.0, 1e-3);
  // No calibrate between Open MPI's own and 128 KiB: held at the job's, and said so.
  eager.mpi_tcp_eager_limit = 131072;
  EXPECT_NEAR(sim.Evaluate(eager).step_ms_median * 1000.0, 3000.0 + 5010.0 + 1000.0, 1e-3);
  const std::string held = sim.EagerLimitHeld(eager);
  EXPECT_NE(held.find("mpi_tcp_eager_limit 131072 is held"), std::string::npos) << held;
  EXPECT_NE(held.find("--mpi-tcp-eager-limit 131072"), std::string::npos) << held;
}

}  // namespace
}  // namespace autotune::sim
