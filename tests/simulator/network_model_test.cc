// NetworkModel: the alpha-beta formulas, the hierarchical composition, the fit to a
// calibration, interpolation and extrapolation, and bad calibrations.
#include "simulator/network_model.h"

#include <gtest/gtest.h>

#include <optional>
#include <random>

#include "simulator/curve.h"
#include "tests/support/sim_fixtures.h"
#include "tests/support/synthetic.h"

namespace autotune::sim {
namespace {

using testing::Topo;

// Intra-node fast and cheap, cross-node slow and expensive.
NetworkParams TwoLevelParams() {
  NetworkParams p;
  for (Op op : {Op::kAllreduce, Op::kAllgather}) {
    p.at(op, Level::kIntra) = {1.0, 1000.0};
    p.at(op, Level::kCross) = {50.0, 100.0};
    p.at(op, Level::kWorld) = {50.0, 100.0};
  }
  p.copy = {2.0, 5000.0};
  return p;
}

TEST(AlphaBetaTest, FlatAllreduceTwoRanksVersusFour) {
  const NetworkParams p = NetworkParams::Uniform(10.0, 100.0);
  const NetworkModel two = NetworkModel::FromParams(p, Topo(1, 2));
  const NetworkModel four = NetworkModel::FromParams(p, Topo(1, 4));
  // 2 ranks: 2*log2(2) steps * 10 us + 2*(1/2) * 1e6 B / 100 B/us.
  EXPECT_DOUBLE_EQ(two.FlatUs(Op::kAllreduce, 1000000), 20.0 + 10000.0);
  // 4 ranks: 2*log2(4) steps * 10 us + 2*(3/4) * 1e6 B / 100 B/us.
  EXPECT_DOUBLE_EQ(four.FlatUs(Op::kAllreduce, 1000000), 40.0 + 15000.0);
  EXPECT_DOUBLE_EQ(NetworkModel::FromParams(p, Topo(1, 1)).FlatUs(Op::kAllreduce, 1000000), 0.0);
}

TEST(AlphaBetaTest, AllgatherMovesAllButOwnShare) {
  const NetworkModel four =
      NetworkModel::FromParams(NetworkParams::Uniform(10.0, 100.0), Topo(1, 4));
  // Gathered output 4e6 bytes = 1e6 per rank: log2(4) steps + 3/4 of 4e6 bytes.
  EXPECT_DOUBLE_EQ(four.FlatUs(Op::kAllgather, 4000000), 20.0 + 30000.0);
  EXPECT_EQ(Log2Steps(1), 0);
  EXPECT_EQ(Log2Steps(5), 3);
  EXPECT_EQ(Log2Steps(1024), 10);
}

TEST(NetworkModelTest, HierarchicalAllreduceIsItsThreeSteps) {
  const NetworkModel m = NetworkModel::FromParams(TwoLevelParams(), Topo(2, 4));
  const HierarchicalSteps s = m.Hierarchical(Op::kAllreduce, 8000000);
  // Intra reduce-scatter of 8e6 B on 4 ranks: half of (2*2*1 + 2*(3/4)*8e6/1000).
  EXPECT_DOUBLE_EQ(s.intra_first_us, 6002.0);
  // Cross allreduce of 8e6/4 B on 2 nodes: 2*1*50 + 2*(1/2)*2e6/100.
  EXPECT_DOUBLE_EQ(s.cross_us, 20100.0);
  // Intra allgather of 2e6 B per rank on 4 ranks: 2*1 + 3*2e6/1000.
  EXPECT_DOUBLE_EQ(s.intra_last_us, 6002.0);
  EXPECT_DOUBLE_EQ(s.factor, 1.0);
  EXPECT_DOUBLE_EQ(m.HierarchicalUs(Op::kAllreduce, 8000000), 6002.0 + 20100.0 + 6002.0);
  EXPECT_DOUBLE_EQ(m.CollectiveUs(Op::kAllreduce, Algorithm::kHierarchical, 8000000), s.total_us());
  EXPECT_DOUBLE_EQ(s.intra_first_us, 0.5 * m.LevelUs(Op::kAllreduce, Level::kIntra, 8e6));
  EXPECT_DOUBLE_EQ(s.cross_us, m.LevelUs(Op::kAllreduce, Level::kCross, 2e6));
  EXPECT_DOUBLE_EQ(s.intra_last_us, m.LevelUs(Op::kAllgather, Level::kIntra, 2e6));
  // Hierarchy pays off here: the flat ring crosses the slow link with every byte.
  EXPECT_LT(s.total_us(), m.FlatUs(Op::kAllreduce, 8000000));
}

TEST(NetworkModelTest, HierarchicalAllgatherIsItsThreeSteps) {
  const NetworkModel m = NetworkModel::FromParams(TwoLevelParams(), Topo(2, 4));
  // 8e6 gathered bytes = 1e6 per rank.
  const HierarchicalSteps s = m.Hierarchical(Op::kAllgather, 8000000);
  EXPECT_DOUBLE_EQ(s.intra_first_us, 2.0 + 3.0 * 1e6 / 1000.0);  // gather on the node
  EXPECT_DOUBLE_EQ(s.cross_us, 50.0 + 4e6 / 100.0);              // node blocks across
  EXPECT_DOUBLE_EQ(s.intra_last_us, 2.0 + 3.0 * 2e6 / 1000.0);   // broadcast 8e6 B
  EXPECT_DOUBLE_EQ(m.HierarchicalUs(Op::kAllgather, 8000000), 3002.0 + 40050.0 + 6002.0);
}

TEST(NetworkModelTest, CopyIsLatencyPlusBytesOverBandwidth) {
  const NetworkModel m = NetworkModel::FromParams(TwoLevelParams(), Topo(2, 4));
  EXPECT_DOUBLE_EQ(m.CopyUs(5000000), 2.0 + 1000.0);
}

TEST(MeasuredCurveTest, InterpolatesLinearlyInBytesAndIsMonotone) {
  MeasuredCurve c({{1000, 10}, {4000, 34}, {2000, 25}, {2000, 15}, {8000, 30}});
  // 2000 B: median of 25 and 15 = 20; 8000 B (30) below 4000 B (34): both pooled to 32.
  ASSERT_EQ(c.size(), 4);
  EXPECT_DOUBLE_EQ(c.min_bytes(), 1000);
  EXPECT_DOUBLE_EQ(c.max_bytes(), 8000);
  EXPECT_DOUBLE_EQ(c.TimeUs(2000), 20.0);
  EXPECT_DOUBLE_EQ(c.TimeUs(4000), 32.0);
  EXPECT_DOUBLE_EQ(c.TimeUs(1500), 15.0);
  EXPECT_DOUBLE_EQ(c.TimeUs(3000), 26.0);
  EXPECT_DOUBLE_EQ(c.TimeUs(100), 10.0);  // clamped to the range
  EXPECT_DOUBLE_EQ(c.TimeUs(1e6), 32.0);
  double last = 0.0;
  for (double b = 500; b < 20000; b *= 1.1) {
    EXPECT_GE(c.TimeUs(b), last);
    last = c.TimeUs(b);
  }
  EXPECT_TRUE(MeasuredCurve({{-1, 3}, {5, 0}}).empty());
}

TEST(MeasuredCurveTest, ASpikeGetsItsNeighboursInterpolationAStepStays) {
  // 4000 B took 1000 us between 200 us at 2000 B and 800 us at 8000 B: 2.5x the log-log
  // interpolation (400 us) of its neighbours, a spike.
  MeasuredCurve spike({{1000, 100}, {2000, 200}, {4000, 1000}, {8000, 800}});
  EXPECT_NEAR(spike.TimeUs(4000), 400.0, 1e-9);
  EXPECT_NEAR(spike.TimeUs(8000), 800.0, 1e-9);
  EXPECT_NEAR(spike.TimeUs(3000), 300.0, 1e-9);
  // A change of algorithm at 4000 B moves the next size too: 700 us is 1.32x the
  // interpolation (529 us), kept as measured.
  MeasuredCurve step({{1000, 100}, {2000, 200}, {4000, 700}, {8000, 1400}});
  EXPECT_DOUBLE_EQ(step.TimeUs(4000), 700.0);
  // The end points have one neighbour and are never judged.
  MeasuredCurve ends({{1000, 900}, {2000, 200}, {4000, 400}, {8000, 5000}});
  EXPECT_DOUBLE_EQ(ends.TimeUs(8000), 5000.0);
  EXPECT_DOUBLE_EQ(ends.TimeUs(1000), 500.0);  // 900 pooled with 200 and 400 (isotonic)
}

// A synthesized calibration is Open MPI's (backend mpi): the truths it is made from route their
// world as Open MPI's allreduce does, so the fit (which takes its route from the backend)
// recovers them.
const WorldRoute kMpiRoute = RouteOf(BackendKind::kMpi);

TEST(NetworkFitTest, RecoversTheParametersItWasMeasuredFrom) {
  const NetworkModel truth = NetworkModel::FromParams(TwoLevelParams(), Topo(2, 2), kMpiRoute);
  NetworkModel fitted;
  ASSERT_TRUE(NetworkModel::Fit(SynthesizeCalibration(truth), &fitted).ok());
  for (Op op : {Op::kAllreduce, Op::kAllgather}) {
    for (Level level : {Level::kIntra, Level::kCross, Level::kWorld}) {
      EXPECT_NEAR(fitted.params().at(op, level).latency_us, truth.params().at(op, level).latency_us,
                  1e-6);
      EXPECT_NEAR(fitted.params().at(op, level).bytes_per_us,
                  truth.params().at(op, level).bytes_per_us,
                  1e-6 * truth.params().at(op, level).bytes_per_us);
    }
  }
  EXPECT_NEAR(fitted.params().copy.bytes_per_us, 5000.0, 1e-3);
  EXPECT_NEAR(fitted.params().hierarchical_factor[0], 1.0, 1e-9);
  // Inside the measured range, outside it (256 MiB) and below it (16 B): the same costs.
  for (int64_t bytes : {int64_t{16}, int64_t{3000}, int64_t{5} << 20, int64_t{256} << 20}) {
    for (Algorithm a : {Algorithm::kFlat, Algorithm::kHierarchical}) {
      EXPECT_NEAR(fitted.CollectiveUs(Op::kAllreduce, a, bytes),
                  truth.CollectiveUs(Op::kAllreduce, a, bytes),
                  1e-6 * truth.CollectiveUs(Op::kAllreduce, a, bytes));
    }
  }
}

TEST(NetworkFitTest, MeasuredPointsWinInsideTheirRange) {
  NetworkModel truth = NetworkModel::FromParams(NetworkParams::Uniform(20.0, 100.0), Topo(1, 2));
  Calibration cal = SynthesizeCalibration(truth);
  // Make the world allreduce at 1 MiB measure 1.4x slower than the line says (below the
  // 1.5x of a spike).
  for (CalibrationPoint& p : cal.points) {
    if (p.scope == Scope::kWorld && p.op == Op::kAllreduce && p.bytes == (1 << 20)) {
      p.median_us *= 1.4;
    }
  }
  NetworkModel fitted;
  ASSERT_TRUE(NetworkModel::Fit(cal, &fitted).ok());
  EXPECT_NEAR(fitted.FlatUs(Op::kAllreduce, 1 << 20), 1.4 * truth.FlatUs(Op::kAllreduce, 1 << 20),
              1e-6);
  // Beyond the largest measured size: the measured end scaled by the parametric ratio.
  const double end = fitted.FlatUs(Op::kAllreduce, int64_t{64} << 20);
  EXPECT_GT(fitted.FlatUs(Op::kAllreduce, int64_t{128} << 20), 1.9 * end);
  EXPECT_LT(fitted.FlatUs(Op::kAllreduce, int64_t{128} << 20), 2.0 * end);
}

TEST(NetworkFitTest, MeasuredHierarchicalCurveSetsTheCompositionFactor) {
  const NetworkModel truth = NetworkModel::FromParams(TwoLevelParams(), Topo(2, 2));
  Calibration cal = SynthesizeCalibration(truth);
  for (CalibrationPoint& p : cal.points) {
    if (p.scope == Scope::kHierarchical && p.op == Op::kAllreduce) p.median_us *= 1.5;
  }
  NetworkModel fitted;
  ASSERT_TRUE(NetworkModel::Fit(cal, &fitted).ok());
  EXPECT_NEAR(fitted.params().hierarchical_factor[0], 1.5, 1e-9);
  EXPECT_NEAR(fitted.HierarchicalUs(Op::kAllreduce, 1 << 20),
              1.5 * truth.HierarchicalUs(Op::kAllreduce, 1 << 20), 1e-6);
  // On 64 nodes there is no measured hierarchical curve: the factor carries over.
  NetworkModel big;
  ASSERT_TRUE(fitted.Retarget(Topo(64, 2), &big).ok());
  const NetworkModel big_truth = NetworkModel::FromParams(TwoLevelParams(), Topo(64, 2));
  EXPECT_NEAR(big.HierarchicalUs(Op::kAllreduce, 1 << 20),
              1.5 * big_truth.HierarchicalUs(Op::kAllreduce, 1 << 20),
              1e-6 * big_truth.HierarchicalUs(Op::kAllreduce, 1 << 20));
}

TEST(NetworkFitTest, ExtrapolatesToMoreNodesWithTheFittedParameters) {
  const NetworkModel truth = NetworkModel::FromParams(TwoLevelParams(), Topo(2, 2), kMpiRoute);
  NetworkModel fitted, big;
  ASSERT_TRUE(NetworkModel::Fit(SynthesizeCalibration(truth), &fitted).ok());
  ASSERT_TRUE(fitted.Retarget(Topo(256, 4), &big).ok());
  EXPECT_EQ(big.topology().world_size(), 1024);
  const NetworkModel big_truth =
      NetworkModel::FromParams(TwoLevelParams(), Topo(256, 4), kMpiRoute);
  for (Op op : {Op::kAllreduce, Op::kAllgather}) {
    const double want = big_truth.FlatUs(op, 1 << 20);
    EXPECT_NEAR(big.FlatUs(op, 1 << 20), want, 1e-6 * want);
  }
  // More ranks on the same links never make a flat allreduce cheaper.
  EXPECT_GT(big.FlatUs(Op::kAllreduce, 1 << 20), fitted.FlatUs(Op::kAllreduce, 1 << 20));
}

// A larger world has no curve of its own: it keeps the measured world curve's departure from
// its line (here 1.4x at 1 MiB, as a job's collectives slowed by its compute would show).
TEST(NetworkFitTest, ALargerWorldKeepsTheMeasuredCurvesRatioToItsLine) {
  const NetworkModel truth = NetworkModel::FromParams(TwoLevelParams(), Topo(2, 2), kMpiRoute);
  Calibration cal = SynthesizeCalibration(truth);
  for (CalibrationPoint& p : cal.points) {
    if (p.scope == Scope::kWorld && p.op == Op::kAllreduce && p.bytes == (1 << 20)) {
      p.median_us *= 1.4;
    }
  }
  NetworkModel fitted, big;
  ASSERT_TRUE(NetworkModel::Fit(cal, &fitted).ok());
  ASSERT_TRUE(fitted.Retarget(Topo(8, 2), &big).ok());
  const NetworkModel big_truth = NetworkModel::FromParams(TwoLevelParams(), Topo(8, 2), kMpiRoute);
  const double at_1m = big_truth.FlatUs(Op::kAllreduce, 1 << 20);
  EXPECT_NEAR(big.FlatUs(Op::kAllreduce, 1 << 20), 1.4 * at_1m, 0.03 * 1.4 * at_1m);
  // Where the measured curve is on its line, so is the larger world's.
  const double at_16m = big_truth.FlatUs(Op::kAllreduce, 16 << 20);
  EXPECT_NEAR(big.FlatUs(Op::kAllreduce, 16 << 20), at_16m, 0.03 * at_16m);
  EXPECT_NE(big.Describe().find("the measured 4-rank curve's ratio"), std::string::npos)
      << big.Describe();
}

// A world allreduce measured at one size (a DDP job's own collectives with one bucket size)
// fits no latency; the description says so, and says nothing of it with two sizes.
TEST(NetworkFitTest, OneMeasuredSizeIsSaidToLeaveTheLatencyOut) {
  const NetworkModel truth = NetworkModel::FromParams(TwoLevelParams(), Topo(2, 2));
  Calibration cal = SynthesizeCalibration(truth);
  std::vector<CalibrationPoint> kept;
  for (const CalibrationPoint& p : cal.points) {
    if (p.scope == Scope::kWorld && p.op == Op::kAllreduce &&
        (p.bytes == (16 << 20) || p.bytes == (1 << 20))) {
      kept.push_back(p);
    }
  }
  ASSERT_EQ(kept.size(), 2u);
  const std::string note = "one size: its latency is not measured";
  cal.points = {kept[0]};
  NetworkModel one;
  ASSERT_TRUE(NetworkModel::Fit(cal, &one).ok());
  EXPECT_NE(one.Describe().find("(1 sizes); " + note), std::string::npos) << one.Describe();
  cal.points = kept;
  NetworkModel two;
  ASSERT_TRUE(NetworkModel::Fit(cal, &two).ok());
  EXPECT_EQ(two.Describe().find(note), std::string::npos) << two.Describe();
}

// A job's own fused buffers, all megabytes, scattered by +-3% as a loaded job's are: their
// line's intercept is not told from 0 by them, so a small tensor is priced by the bytes alone
// (from the smallest point, in proportion), not by an intercept the scatter made up.
TEST(NetworkFitTest, ALatencyThePointsCannotTellIsZero) {
  const NetworkModel truth =
      NetworkModel::FromParams(NetworkParams::Uniform(50.0, 100.0), Topo(2, 2), kMpiRoute);
  Calibration cal;
  cal.topology = Topo(2, 2);
  const double scatter[] = {1.03, 0.97, 1.03, 0.97};
  const int64_t sizes[] = {int64_t{4} << 20, int64_t{8} << 20, int64_t{16} << 20,
                           int64_t{32} << 20};
  for (int i = 0; i < 4; ++i) {
    CalibrationPoint p;
    p.op = Op::kAllreduce;
    p.scope = Scope::kWorld;
    p.ranks = 4;
    p.bytes = sizes[i];
    p.repetitions = 10;
    p.median_us = p.min_us = p.max_us = truth.FlatUs(Op::kAllreduce, sizes[i]) * scatter[i];
    cal.points.push_back(p);
  }
  NetworkModel fitted;
  ASSERT_TRUE(NetworkModel::Fit(cal, kMpiRoute, &fitted).ok());
  EXPECT_EQ(fitted.params().at(Op::kAllreduce, Level::kWorld).latency_us, 0.0);
  const double smallest_us = cal.points[0].median_us;
  EXPECT_NEAR(fitted.FlatUs(Op::kAllreduce, 1024), smallest_us * 1024 / (4 << 20),
              1e-9 * smallest_us);
  // The same line's latency where the points reach down to where it shows (1 KiB up, the
  // same scatter): kept, within the scatter of the 50 us a step it was made with.
  for (int i = 0; i < 4; ++i) {
    const int64_t bytes = int64_t{1024} << (3 * i);
    cal.points[i].bytes = bytes;
    cal.points[i].median_us = cal.points[i].min_us = cal.points[i].max_us =
        truth.FlatUs(Op::kAllreduce, bytes) * scatter[i];
  }
  ASSERT_TRUE(NetworkModel::Fit(cal, kMpiRoute, &fitted).ok());
  EXPECT_NEAR(fitted.params().at(Op::kAllreduce, Level::kWorld).latency_us, 50.0, 0.1 * 50.0);
}

// The world's route (network_model.h): Open MPI's allreduce pairs a node's ranks first, so a
// node's link carries 2(N-1)/N of the buffer; a ring carries 2(p-1)/p. Hand-derived at
// latency 10 us and 100 B/us for a 1e6-byte buffer.
TEST(WorldRouteTest, OpenMpisAllreduceCrossesTheNodesOnce) {
  const AlphaBeta ab{10.0, 100.0};
  auto at = [&](Op op, int nodes, int ranks_per_node, WorldRoute route) {
    return WorldCost(op, Topo(nodes, ranks_per_node), ab, route).At(1e6);
  };
  const WorldRoute last = WorldRoute::kNodesLast;
  // 2x2: 2 log2(4) latencies; 2 (1/2) of the buffer over the link (the ring: 2 (3/4)).
  EXPECT_DOUBLE_EQ(at(Op::kAllreduce, 2, 2, last), 40.0 + 10000.0);
  EXPECT_DOUBLE_EQ(at(Op::kAllreduce, 2, 2, WorldRoute::kRing), 40.0 + 15000.0);
  // 4x1: one rank a node, every exchange crosses: the ring's 2 (3/4) either way.
  EXPECT_DOUBLE_EQ(at(Op::kAllreduce, 4, 1, last), 40.0 + 15000.0);
  // 2x4 and 4x2: 2 log2(8) latencies; 2 (1/2) and 2 (3/4) of the buffer.
  EXPECT_DOUBLE_EQ(at(Op::kAllreduce, 2, 4, last), 60.0 + 10000.0);
  EXPECT_DOUBLE_EQ(at(Op::kAllreduce, 4, 2, last), 60.0 + 15000.0);
  // 3 nodes is not the derivation's case: the 6-rank cost, 2 ceil(log2 6) latencies, 2 (5/6).
  EXPECT_NEAR(at(Op::kAllreduce, 3, 2, last), 60.0 + 2.0 * 5.0 / 6.0 * 1e4, 1e-9);
  // Allgather keeps the p-rank cost: log2(4) latencies, 3/4 of 4e6 gathered bytes.
  EXPECT_DOUBLE_EQ(WorldCost(Op::kAllgather, Topo(2, 2), ab, last).At(1e6), 20.0 + 30000.0);
  EXPECT_EQ(RouteOf(BackendKind::kMpi), WorldRoute::kNodesLast);
  EXPECT_EQ(RouteOf(BackendKind::kNccl), WorldRoute::kRing);
  EXPECT_EQ(RouteOf(BackendKind::kGloo), WorldRoute::kRing);
}

// A calibration holding only world allreduces on its line t(B) = 2 log2(p) alpha + B / beta'
// (beta' the bytes per us the curve shows for the whole buffer), of `backend`.
Calibration WorldAllreduceCalibration(const Topology& topology, BackendKind backend, double alpha,
                                      double bytes_per_us) {
  Calibration cal;
  cal.id = 7;
  cal.topology = topology;
  cal.backend = backend;
  for (int64_t bytes = 1 << 16; bytes <= (int64_t{16} << 20); bytes *= 4) {
    CalibrationPoint p;
    p.op = Op::kAllreduce;
    p.scope = Scope::kWorld;
    p.ranks = topology.world_size();
    p.bytes = bytes;
    p.repetitions = 1;
    p.median_us = 2.0 * Log2Steps(p.ranks) * alpha + static_cast<double>(bytes) / bytes_per_us;
    p.min_us = p.max_us = p.median_us;
    cal.points.push_back(p);
  }
  return cal;
}

// The model fitted to WorldAllreduceCalibration(topology, backend, ...), its route the
// backend's unless `route` is given.
NetworkModel FitWorld(const Topology& topology, BackendKind backend, double alpha,
                      double bytes_per_us, std::optional<WorldRoute> route = std::nullopt) {
  const Calibration cal = WorldAllreduceCalibration(topology, backend, alpha, bytes_per_us);
  NetworkModel m;
  const Status s = route ? NetworkModel::Fit(cal, *route, &m) : NetworkModel::Fit(cal, &m);
  EXPECT_TRUE(s.ok()) << s.message();
  return m;
}

// A 16 MiB buffer, the size the emulated cluster's calibrates were compared at.
constexpr int64_t kBuffer = int64_t{16} << 20;

// From 2 nodes of one rank (the only shape a 2-rank job's timeline shows), Open MPI's allreduce
// on 2 nodes of 2 ranks sends as much over each link: the same time but for two more
// latencies; on 4 nodes of one rank it sends 1.5x. A ring (gloo) sends 1.5x on both. Hand:
// alpha 50 us, 110 B/us, B = 16 MiB: 2x1 takes 100 + B / 110 us.
TEST(WorldRouteTest, TwoRanksOnTwoNodesPredictFourRanksByTheirRoute) {
  const double alpha = 50.0;
  const double bw = 110.0;
  const double b = static_cast<double>(kBuffer);
  const int64_t bytes = kBuffer;
  const NetworkModel mpi = FitWorld(Topo(2, 1), BackendKind::kMpi, alpha, bw);
  const NetworkModel gloo = FitWorld(Topo(2, 1), BackendKind::kGloo, alpha, bw);
  EXPECT_EQ(mpi.route(), WorldRoute::kNodesLast);
  EXPECT_EQ(gloo.route(), WorldRoute::kRing);
  NetworkModel out;
  std::string assumption;
  ASSERT_TRUE(mpi.Retarget(Topo(2, 2), &out, &assumption).ok());
  EXPECT_NEAR(out.FlatUs(Op::kAllreduce, bytes), 4 * alpha + b / bw, 1e-6 * b / bw);
  ASSERT_TRUE(mpi.Retarget(Topo(4, 1), &out).ok());
  EXPECT_NEAR(out.FlatUs(Op::kAllreduce, bytes), 4 * alpha + 1.5 * b / bw, 1e-6 * b / bw);
  ASSERT_TRUE(gloo.Retarget(Topo(2, 2), &out, &assumption).ok());
  EXPECT_NEAR(out.FlatUs(Op::kAllreduce, bytes), 4 * alpha + 1.5 * b / bw, 1e-6 * b / bw);
  // The route given explicitly wins over the calibration's library (a DDP job's own
  // collectives are recorded as mpi; its gloo runs a ring).
  const NetworkModel ring = FitWorld(Topo(2, 1), BackendKind::kMpi, alpha, bw, WorldRoute::kRing);
  ASSERT_TRUE(ring.Retarget(Topo(2, 2), &out, &assumption).ok());
  EXPECT_NEAR(out.FlatUs(Op::kAllreduce, bytes), 4 * alpha + 1.5 * b / bw, 1e-6 * b / bw);
}

// From 2 nodes of 2 ranks, Open MPI's allreduce on 4 nodes of one rank sends 1.5x the bytes
// over each link (2 (3/4) against 2 (1/2)); a ring sends the same 2 (3/4) on both. On its own
// shape the route changes nothing: the calibrated curve is the curve.
TEST(WorldRouteTest, FourRanksOnTwoNodesPredictFourNodesByTheirRoute) {
  const double alpha = 40.0;
  const double bw = 100.0;
  const double b = static_cast<double>(kBuffer);
  const int64_t bytes = kBuffer;
  const NetworkModel mpi = FitWorld(Topo(2, 2), BackendKind::kMpi, alpha, bw);
  const NetworkModel gloo = FitWorld(Topo(2, 2), BackendKind::kGloo, alpha, bw);
  NetworkModel out;
  EXPECT_NEAR(mpi.FlatUs(Op::kAllreduce, bytes), 4 * alpha + b / bw, 1e-9 * b);
  EXPECT_NEAR(gloo.FlatUs(Op::kAllreduce, bytes), 4 * alpha + b / bw, 1e-9 * b);
  // The fitted link bandwidth: the curve's 100 B/us for Open MPI's 1x the buffer; 150 for the
  // ring's 1.5x.
  EXPECT_NEAR(mpi.params().at(Op::kAllreduce, Level::kWorld).bytes_per_us, bw, 1e-6 * bw);
  EXPECT_NEAR(gloo.params().at(Op::kAllreduce, Level::kWorld).bytes_per_us, 1.5 * bw, 1e-6 * bw);
  ASSERT_TRUE(mpi.Retarget(Topo(4, 1), &out).ok());
  EXPECT_NEAR(out.FlatUs(Op::kAllreduce, bytes), 4 * alpha + 1.5 * b / bw, 1e-6 * b / bw);
  ASSERT_TRUE(gloo.Retarget(Topo(4, 1), &out).ok());
  EXPECT_NEAR(out.FlatUs(Op::kAllreduce, bytes), 4 * alpha + b / bw, 1e-6 * b / bw);
}

TEST(NetworkFitTest, RetargetNeedsTheLevelsItWillUse) {
  NetworkModel one_node;
  ASSERT_TRUE(NetworkModel::Fit(SynthesizeCalibration(NetworkModel::FromParams(
                                    NetworkParams::Uniform(5, 1000), Topo(1, 4))),
                                &one_node)
                  .ok());
  NetworkModel out;
  Status st = one_node.Retarget(Topo(4, 4), &out);
  EXPECT_EQ(st.code(), Status::Code::kNotSupported);
  EXPECT_NE(st.message().find("cross-node"), std::string::npos) << st.message();
  EXPECT_TRUE(one_node.Retarget(Topo(1, 8), &out).ok());
}

TEST(NetworkFitTest, RejectsBadCalibrations) {
  Calibration cal = SynthesizeCalibration(
      NetworkModel::FromParams(NetworkParams::Uniform(5, 1000), Topo(2, 2)), 42);
  NetworkModel m;
  Calibration empty = cal;
  empty.points.clear();
  Status st = NetworkModel::Fit(empty, &m);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("calibration 42 has no points"), std::string::npos);

  Calibration negative = cal;
  negative.points[3].median_us = -1.0;
  st = NetworkModel::Fit(negative, &m);
  EXPECT_EQ(st.code(), Status::Code::kCorruption);
  EXPECT_NE(st.message().find("point 3"), std::string::npos) << st.message();

  Calibration too_many_ranks = cal;
  too_many_ranks.points[0].ranks = 9;
  st = NetworkModel::Fit(too_many_ranks, &m);
  EXPECT_EQ(st.code(), Status::Code::kCorruption);

  Calibration copy_only = cal;
  std::erase_if(copy_only.points,
                [](const CalibrationPoint& p) { return p.scope != Scope::kCopy; });
  st = NetworkModel::Fit(copy_only, &m);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("no allreduce curve"), std::string::npos) << st.message();
}

TEST(NetworkModelTest, MoreBandwidthNeverCostsMore) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int trial = 0; trial < 200; ++trial) {
    NetworkParams slow;
    for (Op op : {Op::kAllreduce, Op::kAllgather}) {
      for (Level l : {Level::kIntra, Level::kCross, Level::kWorld}) {
        slow.at(op, l) = {1.0 + 100.0 * unit(rng), 10.0 + 10000.0 * unit(rng)};
      }
    }
    NetworkParams fast = slow;
    const double gain = 1.0 + 3.0 * unit(rng);
    for (auto& per_op : fast.collective) {
      for (AlphaBeta& ab : per_op) ab.bytes_per_us *= gain;
    }
    const Topology topo =
        Topo(1 + static_cast<int>(8 * unit(rng)), 1 + static_cast<int>(8 * unit(rng)));
    const NetworkModel s = NetworkModel::FromParams(slow, topo);
    const NetworkModel f = NetworkModel::FromParams(fast, topo);
    const int64_t bytes = static_cast<int64_t>(std::exp(unit(rng) * std::log(1e9)));
    for (Op op : {Op::kAllreduce, Op::kAllgather}) {
      for (Algorithm a : {Algorithm::kFlat, Algorithm::kHierarchical}) {
        EXPECT_LE(f.CollectiveUs(op, a, bytes), s.CollectiveUs(op, a, bytes));
      }
    }
  }
}

}  // namespace
}  // namespace autotune::sim
