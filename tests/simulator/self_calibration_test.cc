// Self-calibration: a hand-made trace whose collectives took known times gives a network
// model that predicts those times; merging with a calibrate keeps the job's own points where
// they measured and the calibrate's elsewhere.
#include "simulator/self_calibration.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tests/support/sim_fixtures.h"

namespace autotune::sim {
namespace {

using testing::MakeTrace;
using testing::MakeWorkload;
using testing::PlainKnobs;
using testing::Topo;

// Known cost on the world of 4 ranks: 250 us + 8 ns per byte (the allreduce's bytes).
double KnownUs(int64_t bytes) { return 250.0 + 0.008 * static_cast<double>(bytes); }

// The backward pass of TraceWithCollectives's steps ends here (1 ms forward + 2 ms backward).
constexpr double kComputeEndUs = 3000.0;

// A trace of `steps` steps, each with one allreduce per size in `sizes` that took exactly
// KnownUs(size) (copy-in 1 us per KiB before it), one after another from start_us (by
// default after the compute: the network alone).
Trace TraceWithCollectives(const std::vector<int64_t>& sizes, int steps,
                           double start_us = kComputeEndUs) {
  Trace trace = MakeTrace(MakeWorkload({1 << 20}, {1.0}, 1.0, 2.0, 1.0), Topo(2, 2),
                          PlainKnobs(64, 1), 4000.0, 10.0, steps);
  trace.run.kind = RunKind::kImported;
  for (StepTrace& st : trace.steps) {
    double t = start_us;
    for (size_t i = 0; i < sizes.size(); ++i) {
      CollectiveRecord c;
      c.seq = static_cast<int>(i);
      c.bytes = sizes[i];
      c.tensors = {0};
      c.start_us = t;
      c.copy_in_end_us = t + sizes[i] / 1024.0;
      c.comm_end_us = c.copy_in_end_us + KnownUs(sizes[i]);
      c.end_us = c.comm_end_us;
      t = c.end_us;
      st.collectives.push_back(c);
    }
  }
  return trace;
}

// The world-level points the self-calibration makes from `trace` alone (none, with a
// failure, where it makes no calibration).
std::vector<CalibrationPoint> WorldPoints(const Trace& trace) {
  const Trace* traces[] = {&trace};
  StatusOr<Calibration> self = CalibrationFromTraces(traces);
  EXPECT_TRUE(self.ok()) << self.status().message();
  std::vector<CalibrationPoint> points;
  if (!self.ok()) return points;
  for (const CalibrationPoint& p : self->points) {
    if (p.scope == Scope::kWorld) points.push_back(p);
  }
  return points;
}

// Their sizes, in the calibration's order.
std::vector<int64_t> WorldSizes(const Trace& trace) {
  std::vector<int64_t> sizes;
  for (const CalibrationPoint& p : WorldPoints(trace)) sizes.push_back(p.bytes);
  return sizes;
}

TEST(SelfCalibrationTest, TheJobsOwnCollectiveTimesComeBackFromTheModelFittedToThem) {
  const std::vector<int64_t> sizes = {64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20};
  const Trace trace = TraceWithCollectives(sizes, 3);
  const Trace* traces[] = {&trace};
  StatusOr<Calibration> self = CalibrationFromTraces(traces);
  ASSERT_TRUE(self.ok()) << self.status().message();
  EXPECT_EQ(self->topology.key(), "2x2");
  NetworkModel model;
  ASSERT_TRUE(NetworkModel::Fit(*self, &model).ok());
  for (int64_t bytes : sizes) {
    EXPECT_NEAR(model.FlatUs(Op::kAllreduce, bytes) / KnownUs(bytes), 1.0, 0.02) << bytes;
  }
  // Between the measured sizes too (2 MiB was never measured).
  EXPECT_NEAR(model.FlatUs(Op::kAllreduce, 2 << 20) / KnownUs(2 << 20), 1.0, 0.02);
  // The copies: 1 us per KiB, from the copy points (64 KiB and larger).
  EXPECT_NEAR(model.CopyUs(4 << 20) / 4096.0, 1.0, 0.02);
}

TEST(SelfCalibrationTest, EachTracesTimesAreScaledToTheFirstTracesLoadBeforePooling) {
  // The same collective times in both traces; the second's scaled by 1.5 (measured under a
  // lighter load than the first's): the bin's mean over 2 + 1 collectives is (1 + 1 + 1.5) / 3
  // of the known time, and its slowest the scaled one.
  const Trace a = TraceWithCollectives({1 << 20}, 2);
  Trace b = TraceWithCollectives({1 << 20}, 1);
  b.run.id = 8;
  const Trace* traces[] = {&a, &b};
  const double scales[] = {1.0, 1.5};
  StatusOr<Calibration> self = CalibrationFromTraces(traces, scales);
  ASSERT_TRUE(self.ok()) << self.status().message();
  int world_points = 0;
  for (const CalibrationPoint& p : self->points) {
    if (p.scope == Scope::kWorld) {
      ++world_points;
      EXPECT_NEAR(p.median_us, 3.5 / 3.0 * KnownUs(1 << 20), 1e-9);
      EXPECT_NEAR(p.max_us, 1.5 * KnownUs(1 << 20), 1e-9);
      EXPECT_NEAR(p.min_us, KnownUs(1 << 20), 1e-9);
    } else {
      // The copy point (1 us per KiB): scaled alike.
      EXPECT_NEAR(p.median_us, 3.5 / 3.0 * 1024.0, 1e-9);
    }
  }
  EXPECT_EQ(world_points, 1);
}

TEST(SelfCalibrationTest, TracesOfOneJobArePooledAndEachBinTakesTheMean) {
  Trace a = TraceWithCollectives({1 << 20}, 2);
  Trace b = TraceWithCollectives({1 << 20}, 1);
  // b's one collective took twice as long: the mean of 1, 1 and 2 units is 4/3 of the known
  // time (what three such collectives cost in a step, on average).
  b.steps[0].collectives[0].comm_end_us =
      b.steps[0].collectives[0].copy_in_end_us + 2.0 * KnownUs(1 << 20);
  b.run.id = 8;
  const Trace* traces[] = {&a, &b};
  StatusOr<Calibration> self = CalibrationFromTraces(traces);
  ASSERT_TRUE(self.ok()) << self.status().message();
  const CalibrationPoint* world = nullptr;
  for (const CalibrationPoint& p : self->points) {
    if (p.scope == Scope::kWorld) world = &p;
  }
  ASSERT_NE(world, nullptr);
  EXPECT_EQ(world->repetitions, 3);
  EXPECT_NEAR(world->median_us, 4.0 / 3.0 * KnownUs(1 << 20), 1e-9);
  EXPECT_DOUBLE_EQ(world->max_us, 2.0 * KnownUs(1 << 20));
  EXPECT_NE(self->hardware.find("run 7, 8"), std::string::npos) << self->hardware;
}

// The tail of a size: its median and mean over the same collectives the points take. Three
// steps of 1 MiB at 1, 1 and 4 units (a stall in the last): median 1 unit, mean 2.
TEST(SelfCalibrationTest, ATailIsTheMedianAndMeanOfTheSameCollectives) {
  Trace trace = TraceWithCollectives({1 << 20, 64 << 10}, 3);
  CollectiveRecord& stalled = trace.steps[2].collectives[0];
  stalled.comm_end_us = stalled.copy_in_end_us + 4.0 * KnownUs(1 << 20);
  const Trace* traces[] = {&trace};
  const std::vector<CollectiveTail> tails = CollectiveTailsFromTraces(traces);
  ASSERT_EQ(tails.size(), 2u);
  const CollectiveTail& big = tails[0].bytes == (1 << 20) ? tails[0] : tails[1];
  const CollectiveTail& small = tails[0].bytes == (1 << 20) ? tails[1] : tails[0];
  EXPECT_EQ(big.op, Op::kAllreduce);
  EXPECT_EQ(big.count, 3);
  EXPECT_NEAR(big.median_us, KnownUs(1 << 20), 1e-9);
  EXPECT_NEAR(big.mean_us, 2.0 * KnownUs(1 << 20), 1e-9);
  EXPECT_EQ(small.bytes, 64 << 10);
  EXPECT_NEAR(small.median_us, small.mean_us, 1e-9);
  // The calibration's point of that size is the mean, as before.
  for (const CalibrationPoint& p : WorldPoints(trace)) {
    if (p.bytes == (1 << 20)) {
      EXPECT_NEAR(p.median_us, big.mean_us, 1e-9);
    }
  }
  // A scale (another tracer's load) multiplies the trace's times: 1.5 and 3 units.
  const double scales[] = {1.5};
  int scaled = 0;
  for (const CollectiveTail& t : CollectiveTailsFromTraces(traces, scales)) {
    if (t.bytes != (1 << 20)) continue;
    ++scaled;
    EXPECT_NEAR(t.median_us, 1.5 * KnownUs(1 << 20), 1e-9);
    EXPECT_NEAR(t.mean_us, 3.0 * KnownUs(1 << 20), 1e-9);
  }
  EXPECT_EQ(scaled, 1);
}

TEST(SelfCalibrationTest, CollectivesBesideTheComputeStayOutWhereEnoughRanAlone) {
  // Per step, a 64 KiB collective beside the compute at 3x its known time (the compute's
  // cores slow it), then 1 MiB ones after the compute ends, at their known time.
  auto with_one_beside = [](int steps) {
    Trace trace = TraceWithCollectives({1 << 20}, steps);
    for (StepTrace& st : trace.steps) {
      CollectiveRecord c = st.collectives[0];
      c.seq = 1;
      c.bytes = 64 << 10;
      c.start_us = 100.0;
      c.copy_in_end_us = 164.0;
      c.comm_end_us = c.copy_in_end_us + 3.0 * KnownUs(64 << 10);
      c.end_us = c.comm_end_us;
      st.collectives.push_back(c);
    }
    return trace;
  };
  // Three steps: three collectives ran alone, the 1 MiB ones; they alone make the points.
  std::vector<CalibrationPoint> points = WorldPoints(with_one_beside(3));
  ASSERT_EQ(points.size(), 1u);
  EXPECT_EQ(points[0].bytes, 1 << 20);
  EXPECT_NEAR(points[0].median_us, KnownUs(1 << 20), 1e-9);
  // Two steps: too few ran alone (2 < 3): every collective counts, the 64 KiB one as measured.
  points = WorldPoints(with_one_beside(2));
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0].bytes, 64 << 10);
  EXPECT_NEAR(points[0].median_us, 3.0 * KnownUs(64 << 10), 1e-9);
}

TEST(SelfCalibrationTest, ACollectiveAfterTheComputeBesideAnotherIsNotTakenAsAlone) {
  // Per step a 16 MiB collective from 2000 us (beside the compute, across its end at 3000 us)
  // at its known time, and a 256 KiB one: launched at `start_us` with `slow` x its known time.
  // A DDP job over gloo: two collectives in flight at once.
  auto trace_with = [](double start_us, double slow) {
    Trace trace = TraceWithCollectives({16 << 20}, 4, 2000.0);
    trace.run.framework = Framework::kDdp;
    for (StepTrace& st : trace.steps) {
      CollectiveRecord& big = st.collectives[0];
      big.copy_in_end_us = big.start_us;  // no copy: its communication runs from 2000 us
      big.comm_end_us = big.copy_in_end_us + KnownUs(16 << 20);
      big.end_us = big.comm_end_us;
      CollectiveRecord c = big;
      c.seq = 1;
      c.bytes = 256 << 10;
      c.start_us = start_us;
      c.copy_in_end_us = c.start_us;
      c.comm_end_us = c.copy_in_end_us + slow * KnownUs(256 << 10);
      c.end_us = c.comm_end_us;
      st.collectives.push_back(c);
    }
    return trace;
  };
  // At 3100 us (after the compute's end), at 4x or 1x its time: within the 16 MiB one's
  // flight (2000 to 136,717 us) all its time, so it did not run alone; with none alone, every
  // collective makes a point.
  for (double slow : {4.0, 1.0}) {
    EXPECT_EQ(WorldSizes(trace_with(3100.0, slow)),
              (std::vector<int64_t>{256 << 10, 16 << 20}))
        << "slow " << slow;
  }
  // Launched when the 16 MiB one ends (nothing else in flight), the 256 KiB ones ran alone:
  // four of them, so they alone make the points.
  EXPECT_EQ(WorldSizes(trace_with(2000.0 + KnownUs(16 << 20), 4.0)),
            (std::vector<int64_t>{256 << 10}));
  // One in flight at a time (not DDP: our executor's background thread): a 256 KiB one
  // launched at 3100 us waited for the 16 MiB one and ended KnownUs after it. Queued, not
  // shared: its time from the 16 MiB one's end is its time alone, and the four make the point.
  Trace queued = trace_with(3100.0, 1.0);
  queued.run.framework = Framework::kHorovod;
  for (StepTrace& st : queued.steps) {
    st.collectives[1].comm_end_us = st.collectives[0].comm_end_us + KnownUs(256 << 10);
    st.collectives[1].end_us = st.collectives[1].comm_end_us;
  }
  const std::vector<CalibrationPoint> world = WorldPoints(queued);
  ASSERT_EQ(world.size(), 1u);
  EXPECT_EQ(world[0].bytes, 256 << 10);
  EXPECT_NEAR(world[0].median_us, KnownUs(256 << 10), 1e-6);
}

// What a collective waited for its predecessor is the predecessor's. Per step two layers, each
// a 256 KiB collective and three 1 KiB ones back to back, all at their known times, except
// that the 1 KiB one after each 256 KiB one waited for it too: 200 us in the first layer, 600
// us in the second. Moved: the 1 KiB ones all at their known time, the 256 KiB ones at theirs
// plus 400 us on average, and the step's total unchanged. Not moved: where the 1 KiB one
// started 1 ms after the 256 KiB one ended (it did not run back to back), where fewer than 10
// followed a 256 KiB one, where two run at once (DDP over gloo: a collective's time is then
// what the sharing rule says), or onto a smaller predecessor.
TEST(SelfCalibrationTest, WhatACollectiveWaitedForItsPredecessorIsThePredecessors) {
  constexpr int64_t kLayer = 256 << 10;
  constexpr int64_t kSmall = 1 << 10;
  auto trace_with = [&](int steps, double gap_us) {
    Trace trace = TraceWithCollectives(
        {kLayer, kSmall, kSmall, kSmall, kLayer, kSmall, kSmall, kSmall}, steps);
    for (StepTrace& st : trace.steps) {
      double shift_us = 0.0;
      for (CollectiveRecord& c : st.collectives) {
        const bool waits = c.seq == 1 || c.seq == 5;
        if (waits) shift_us += gap_us;
        c.start_us += shift_us;
        c.copy_in_end_us += shift_us;
        if (waits) shift_us += c.seq == 1 ? 200.0 : 600.0;
        c.comm_end_us += shift_us;
        c.end_us += shift_us;
      }
    }
    return trace;
  };
  auto point_at = [](const std::vector<CalibrationPoint>& points, int64_t bytes) {
    for (const CalibrationPoint& p : points) {
      if (p.bytes == bytes) return p;
    }
    ADD_FAILURE() << "no point at " << bytes << " bytes";
    return CalibrationPoint{};
  };
  std::vector<CalibrationPoint> points = WorldPoints(trace_with(5, 0.0));  // 10 per group
  EXPECT_NEAR(point_at(points, kLayer).median_us, KnownUs(kLayer) + 400.0, 1e-6);
  EXPECT_NEAR(point_at(points, kLayer).min_us, KnownUs(kLayer) + 200.0, 1e-6);
  EXPECT_NEAR(point_at(points, kLayer).max_us, KnownUs(kLayer) + 600.0, 1e-6);
  EXPECT_NEAR(point_at(points, kSmall).median_us, KnownUs(kSmall), 1e-6);
  EXPECT_NEAR(point_at(points, kSmall).max_us, KnownUs(kSmall), 1e-6);
  // As recorded: the 1 KiB mean carries the waits (800 us over six), the 256 KiB one none.
  const double recorded_small_us = KnownUs(kSmall) + 800.0 / 6.0;
  for (const Trace& unmoved : {trace_with(5, 1000.0), trace_with(4, 0.0)}) {
    points = WorldPoints(unmoved);
    EXPECT_NEAR(point_at(points, kLayer).median_us, KnownUs(kLayer), 1e-6);
    EXPECT_NEAR(point_at(points, kSmall).median_us, recorded_small_us, 1e-6);
  }
  Trace gloo = trace_with(5, 0.0);
  gloo.run.framework = Framework::kDdp;
  points = WorldPoints(gloo);
  EXPECT_NEAR(point_at(points, kLayer).median_us, KnownUs(kLayer), 1e-6);
  EXPECT_NEAR(point_at(points, kSmall).median_us, recorded_small_us, 1e-6);
  // Nor onto a smaller predecessor: per step 1 KiB, 256 KiB, 1 MiB, 256 KiB, ten steps, the
  // 256 KiB one after the 1 KiB one 500 us slower than after the 1 MiB one. A 1 KiB one does
  // not spread its ends over milliseconds: the 256 KiB bin keeps its mean (known + 250 us), the
  // 1 KiB one its known time.
  Trace smaller = TraceWithCollectives({kSmall, kLayer, 1 << 20, kLayer}, 10);
  for (StepTrace& st : smaller.steps) {
    for (CollectiveRecord& c : st.collectives) {
      const double shift_us = c.seq >= 1 ? 500.0 : 0.0;
      if (c.seq >= 2) c.start_us += shift_us;
      if (c.seq >= 2) c.copy_in_end_us += shift_us;
      if (c.seq >= 1) c.comm_end_us += shift_us;
      if (c.seq >= 1) c.end_us += shift_us;
    }
  }
  points = WorldPoints(smaller);
  EXPECT_NEAR(point_at(points, kLayer).median_us, KnownUs(kLayer) + 250.0, 1e-6);
  EXPECT_NEAR(point_at(points, kSmall).median_us, KnownUs(kSmall), 1e-6);
}

TEST(SelfCalibrationTest, TooFewCollectivesIsNotFound) {
  const Trace trace = TraceWithCollectives({1 << 20}, 2);
  const Trace* traces[] = {&trace};
  StatusOr<Calibration> self = CalibrationFromTraces(traces);
  EXPECT_EQ(self.status().code(), Status::Code::kNotFound);
}

TEST(SelfCalibrationTest, MergeKeepsTheCalibratesPointsOutsideTheJobsRange) {
  Calibration measured;
  measured.id = 3;
  measured.topology = Topo(2, 2);
  for (int64_t bytes : {1 << 10, 64 << 10, 1 << 20, 4 << 20, 64 << 20}) {
    measured.points.push_back({Op::kAllreduce, Scope::kWorld, 4, bytes, 5, 999.0, 999.0, 999.0});
  }
  Calibration self;
  for (int64_t bytes : {1 << 20, 4 << 20}) {
    self.points.push_back({Op::kAllreduce, Scope::kWorld, 4, bytes, 5, 111.0, 111.0, 111.0});
  }
  const Calibration merged = MergeCalibrations(measured, self);
  EXPECT_EQ(merged.id, 3);
  std::vector<std::pair<int64_t, double>> points;
  for (const CalibrationPoint& p : merged.points) points.push_back({p.bytes, p.median_us});
  std::sort(points.begin(), points.end());
  const std::vector<std::pair<int64_t, double>> want = {
      {1 << 10, 999.0}, {64 << 10, 999.0}, {1 << 20, 111.0}, {4 << 20, 111.0}, {64 << 20, 999.0}};
  EXPECT_EQ(points, want);
}

TEST(SelfCalibrationTest, AgreementIsTheJobsTimeOverTheCalibratesModel) {
  // A calibrate model with no latency (1 byte/us on every level); the job took twice that at
  // 1 MiB and three times at 4 MiB.
  NetworkParams params = NetworkParams::Uniform(0.0, 1.0);
  const NetworkModel uniform = NetworkModel::FromParams(params, Topo(2, 2));
  Calibration self;
  for (int64_t bytes : {1 << 20, 4 << 20}) {
    const double factor = bytes == (1 << 20) ? 2.0 : 3.0;
    const double us = factor * uniform.FlatUs(Op::kAllreduce, bytes);
    self.points.push_back({Op::kAllreduce, Scope::kWorld, 4, bytes, 5, us, us, us});
  }
  const CalibrationAgreement a = CompareCalibrations(self, uniform);
  EXPECT_EQ(a.points, 2);
  EXPECT_NEAR(a.min_ratio, 2.0, 1e-9);
  EXPECT_NEAR(a.max_ratio, 3.0, 1e-9);
  // Over their time: the model's time is proportional to the bytes (no latency), so the 4 MiB
  // point weighs 4 to the 1 MiB one's 1: (2 x 1 + 3 x 4) / (1 + 4).
  EXPECT_NEAR(a.time_ratio, 14.0 / 5.0, 1e-9);
}

}  // namespace
}  // namespace autotune::sim
