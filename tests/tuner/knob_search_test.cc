#include "tuner/knob_search.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "traces/knob_table.h"

namespace autotune::tuner {
namespace {

double At(const Space& space, const Point& point, const std::string& name) {
  const int i = space.IndexOf(name);
  EXPECT_GE(i, 0) << name;
  return i < 0 ? -1.0 : point[i];
}

bool IsConstant(const Space& space, const std::string& name) {
  const int i = space.IndexOf(name);
  EXPECT_GE(i, 0) << name;
  return i >= 0 && space.is_constant(i);
}

Knobs Sample() {
  Knobs k;
  k.fusion_threshold_mb = 32;
  k.cycle_time_ms = 2.5;
  k.cache_capacity = 0;
  k.hierarchical_allreduce = true;
  k.num_groups = 4;
  k.mpi_allreduce_algorithm = 3;
  k.nccl_algo = "ring";  // not a dimension of the MPI space
  return k;
}

TEST(KnobSearchTest, KnobsToPointAndBack) {
  const Space space = KnobSearchSpace(BackendKind::kMpi);
  Point point;
  ASSERT_TRUE(KnobsToPoint(space, Sample(), &point).ok());
  EXPECT_EQ(At(space, point, "fusion_threshold_mb"), 32.0);
  EXPECT_EQ(At(space, point, "cycle_time_ms"), 2.5);
  EXPECT_EQ(At(space, point, "cache_capacity"), 0.0);
  EXPECT_EQ(At(space, point, "hierarchical_allreduce"), 1.0);
  EXPECT_EQ(At(space, point, "hierarchical_allgather"), 0.0);
  EXPECT_EQ(At(space, point, "num_groups"), 4.0);
  EXPECT_EQ(At(space, point, "mpi_allreduce_algorithm"), 3.0);  // category "3" is index 3
  // Back over a base: the point's values, the base's knobs outside the space.
  Knobs base;
  base.nccl_algo = "tree";
  Knobs back;
  ASSERT_TRUE(PointToKnobs(space, point, base, &back).ok());
  Knobs expected = Sample();
  expected.nccl_algo = "tree";
  EXPECT_EQ(back, expected);
  // A value the space has no place for.
  Knobs odd;
  odd.nccl_algo = "bogus";
  const Status refused = KnobsToPoint(KnobSearchSpace(BackendKind::kNccl), odd, &point);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("nccl_algo"), std::string::npos) << refused.message();
}

TEST(KnobSearchTest, OnlineKnobsAreTheFiveRuntimeOnes) {
  for (const char* name : {"fusion_threshold_mb", "cycle_time_ms", "cache_capacity",
                           "hierarchical_allreduce", "hierarchical_allgather"}) {
    EXPECT_TRUE(IsOnlineKnob(name)) << name;
  }
  for (const char* name : {"num_groups", "nccl_algo", "mpi_allreduce_algorithm", "bogus"}) {
    EXPECT_FALSE(IsOnlineKnob(name)) << name;
  }
}

// The knobs record --autotune moves: a Horovod run's five runtime knobs, a DDP run's three.
TEST(KnobSearchTest, OnlineKnobNamesAreTheFrameworksRuntimeKnobs) {
  EXPECT_EQ(OnlineKnobNames(Framework::kHorovod),
            (std::vector<std::string>{"fusion_threshold_mb", "cycle_time_ms", "cache_capacity",
                                      "hierarchical_allreduce", "hierarchical_allgather"}));
  EXPECT_EQ(OnlineKnobNames(Framework::kDdp),
            (std::vector<std::string>{"ddp_bucket_cap_mb", "ddp_first_bucket_mb",
                                      "ddp_gradient_as_bucket_view"}));
}

// num_groups, a training-script argument, is the one knob searched only on request.
TEST(KnobSearchTest, NumGroupsIsTheOneKnobSearchedOnRequest) {
  std::vector<std::string> on_request;
  for (const KnobSpec& spec : KnobTable()) {
    if (KnobSearchedOnRequest(spec)) on_request.push_back(spec.name);
  }
  EXPECT_EQ(on_request, std::vector<std::string>{"num_groups"});
}

TEST(KnobSearchTest, SpaceFromKnobsAndConstants) {
  const Knobs base = Sample();
  const std::set<std::string> constants = {"cycle_time_ms", "nccl_algo"};
  Space space;
  // search: constants and the backend algorithm knobs stay.
  ASSERT_TRUE(KnobSpace(BackendKind::kMpi, base, constants, FreeKnobs::kAllButBackend, {}, &space).ok());
  EXPECT_TRUE(IsConstant(space, "cycle_time_ms"));
  EXPECT_EQ(At(space, space.Default(), "cycle_time_ms"), 2.5);
  EXPECT_TRUE(IsConstant(space, "mpi_allreduce_algorithm"));
  EXPECT_EQ(At(space, space.Default(), "mpi_allreduce_algorithm"), 3.0);
  EXPECT_FALSE(IsConstant(space, "fusion_threshold_mb"));
  EXPECT_TRUE(IsConstant(space, "num_groups"));  // only on request
  EXPECT_EQ(At(space, space.Default(), "num_groups"), 4.0);
  // search --tune-backend-knobs: only the constants stay.
  ASSERT_TRUE(KnobSpace(BackendKind::kMpi, base, constants, FreeKnobs::kAll, {}, &space).ok());
  EXPECT_FALSE(IsConstant(space, "mpi_allreduce_algorithm"));
  EXPECT_TRUE(IsConstant(space, "cycle_time_ms"));
  // record --autotune: only the online knobs move, and not the constant one.
  ASSERT_TRUE(KnobSpace(BackendKind::kMpi, base, constants, FreeKnobs::kOnline, {}, &space).ok());
  EXPECT_TRUE(IsConstant(space, "num_groups"));
  EXPECT_EQ(At(space, space.Default(), "num_groups"), 4.0);
  EXPECT_TRUE(IsConstant(space, "cycle_time_ms"));
  EXPECT_FALSE(IsConstant(space, "fusion_threshold_mb"));
  EXPECT_FALSE(IsConstant(space, "hierarchical_allgather"));
  // A constant whose value has no place in the space is named.
  Knobs odd = base;
  odd.nccl_algo = "bogus";
  const Status refused = KnobSpace(BackendKind::kNccl, odd, constants, FreeKnobs::kAllButBackend, {}, &space);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.message().rfind("constant nccl_algo", 0), 0u) << refused.message();
}

// The target decides whether hierarchical collectives are searched; --tune-groups whether
// num_groups is.
TEST(KnobSearchTest, TheSpaceIsWhatTheTargetRunsAndApplyCanSet) {
  const Knobs base = Sample();
  auto free_names = [&](const SpaceScope& scope) {
    Space space;
    EXPECT_TRUE(KnobSpace(BackendKind::kMpi, base, {}, FreeKnobs::kAllButBackend, scope, &space)
                    .ok());
    std::set<std::string> names;
    for (int i = 0; i < space.num_dimensions(); ++i) {
      if (!space.is_constant(i)) names.insert(space.dimension(i).name);
    }
    return names;
  };
  using Names = std::set<std::string>;
  EXPECT_EQ(free_names({Target::kCpu, false}),
            (Names{"fusion_threshold_mb", "cycle_time_ms", "cache_capacity"}));
  EXPECT_EQ(free_names({Target::kExecutor, false}),
            (Names{"fusion_threshold_mb", "cycle_time_ms", "cache_capacity",
                   "hierarchical_allreduce", "hierarchical_allgather"}));
  EXPECT_EQ(free_names({Target::kNccl, false}), free_names({Target::kExecutor, false}));
  EXPECT_EQ(free_names({Target::kCpu, true}),
            (Names{"fusion_threshold_mb", "cycle_time_ms", "cache_capacity", "num_groups"}));
  // A DDP run's space holds DDP's knobs and none of Horovod's, whatever the target.
  for (Target t : {Target::kCpu, Target::kExecutor}) {
    EXPECT_EQ(free_names({t, true, Framework::kDdp}),
              (Names{"ddp_bucket_cap_mb", "ddp_first_bucket_mb", "ddp_gradient_as_bucket_view"}));
  }
  Target target = Target::kExecutor;
  for (Target t : {Target::kCpu, Target::kNccl, Target::kExecutor}) {
    ASSERT_TRUE(ParseTarget(TargetName(t), &target).ok());
    EXPECT_EQ(target, t);
  }
  EXPECT_STREQ(TargetName(Target::kCpu), "cpu");
  const Status bad = ParseTarget("gpu", &target);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("gpu"), std::string::npos) << bad.message();
}

struct Heard {
  Knobs knobs;
  Fidelity fidelity;
  double score;
};

// A search over the online knobs with cycle_time_ms constant at 2.5.
class KnobSearchLoopTest : public ::testing::Test {
 protected:
  KnobSearch MakeSearch(int max_measured) {
    Knobs base;
    base.cycle_time_ms = 2.5;
    Space space;
    EXPECT_TRUE(
        KnobSpace(BackendKind::kMpi, base, {"cycle_time_ms"}, FreeKnobs::kOnline, {}, &space).ok());
    SearchOptions options;
    options.stop.max_measured_samples = max_measured;
    return KnobSearch(space, base, options, [this](const Knobs& k, Fidelity f, double score) {
      heard_.push_back({k, f, score});
    });
  }
  std::vector<Heard> heard_;
};

TEST_F(KnobSearchLoopTest, MeasuredSamplesAreHeardAndMovedConstantsRefused) {
  KnobSearch search = MakeSearch(20);
  Knobs sample = search.base();
  sample.fusion_threshold_mb = 64;
  ASSERT_TRUE(search.ObserveMeasured(sample, 5e9).ok());
  EXPECT_EQ(search.measured(), 1);
  ASSERT_EQ(heard_.size(), 1u);
  EXPECT_EQ(heard_[0].knobs, sample);
  EXPECT_EQ(heard_[0].fidelity, Fidelity::kMeasured);
  EXPECT_EQ(heard_[0].score, 5e9);
  Knobs moved = sample;
  moved.cycle_time_ms = 1.0;
  EXPECT_FALSE(search.ToPoint(moved).ok());
  EXPECT_FALSE(search.ObserveMeasured(moved, 6e9).ok());
  EXPECT_EQ(search.measured(), 1);
  EXPECT_EQ(heard_.size(), 1u);
}

// The prior simulates the measured setting and the default first (nested designs), then its
// budget; every simulated setting keeps the constant.
TEST_F(KnobSearchLoopTest, SimulatedPriorNestsTheMeasuredSettingAndTheDefault) {
  KnobSearch search = MakeSearch(20);
  Knobs sample = search.base();
  sample.fusion_threshold_mb = 64;
  ASSERT_TRUE(search.ObserveMeasured(sample, 5e9).ok());
  int calls = 0;
  auto simulate = [&](const Knobs& k) {
    ++calls;
    return 1e9 + k.fusion_threshold_mb * 1e6;
  };
  ASSERT_TRUE(search.SimulatePrior(simulate, 4).ok());
  EXPECT_EQ(calls, 2 + 4);
  EXPECT_EQ(search.simulated(), 6);
  ASSERT_EQ(heard_.size(), 1u + 6u);
  EXPECT_EQ(heard_[1].knobs, sample);
  EXPECT_EQ(heard_[2].knobs, search.base());  // the default: base, nothing moved
  for (size_t i = 1; i < heard_.size(); ++i) {
    EXPECT_EQ(heard_[i].fidelity, Fidelity::kSimulated);
    EXPECT_EQ(heard_[i].knobs.cycle_time_ms, 2.5);
    EXPECT_EQ(heard_[i].score, 1e9 + heard_[i].knobs.fusion_threshold_mb * 1e6);
  }
}

TEST_F(KnobSearchLoopTest, NextMeasuredKeepsConstantsAndStopsOnTheBudget) {
  KnobSearch search = MakeSearch(2);
  ASSERT_TRUE(search.ObserveMeasured(search.base(), 5e9).ok());
  StatusOr<KnobSearch::Next> next = search.NextMeasured();
  ASSERT_TRUE(next.ok()) << next.status().message();
  ASSERT_EQ(next->stop, StopReason::kNotStopped);
  EXPECT_EQ(next->knobs.cycle_time_ms, 2.5);
  EXPECT_EQ(next->knobs.num_groups, 0);
  ASSERT_TRUE(search.ObserveMeasured(next->knobs, 6e9).ok());
  next = search.NextMeasured();
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->stop, StopReason::kBudgetSpent);
  StatusOr<Reported> best = search.Incumbent();
  ASSERT_TRUE(best.ok()) << best.status().message();
  EXPECT_EQ(best->measured.count, 1);
}

}  // namespace
}  // namespace autotune::tuner
