// The search space shaped by the job (tuner/job_space.h), on a small workload whose bounds are
// worked out by hand below; the shared fixtures' bounds are checked in
// tests/tools/search_space_fixture_test.cc.
#include "tuner/job_space.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>
#include <string>

#include "traces/knob_table.h"
#include "tuner/knob_search.h"

namespace autotune::tuner {
namespace {

TensorSpec Tensor(const std::string& name, std::vector<int64_t> shape,
                  DType dtype = DType::kFloat32, Op op = Op::kAllreduce) {
  TensorSpec t;
  t.name = name;
  t.shape = std::move(shape);
  t.dtype = dtype;
  t.op = op;
  return t;
}

// Seven tensors of three kinds:
//   allreduce float32: 1000*4 = 4,000; 256*4 = 1,024 (twice); 1000*256*4 = 1,024,000;
//     3072*256*4 = 3,145,728 bytes. Two smallest together 2,048 B = 0.001953125 MB, which
//     at the knob's 6 significant digits rounded up is 0.00195313 MB; all together
//     4,175,776 B = 3.982330322265625 MB, rounded up 3.98234 MB.
//   allgather int64: 10*8 = 80 bytes, 320 in the fusion buffer on 4 ranks: alone of its kind.
//   allreduce float16: 8*2 = 16 bytes: alone of its kind.
Workload SevenTensors() {
  Workload w;
  w.name = "seven";
  w.tensors = {Tensor("fc.bias", {1000}),
               Tensor("ln.weight", {256}),
               Tensor("ln.bias", {256}),
               Tensor("fc.weight", {1000, 256}),
               Tensor("embedding", {3072, 256}),
               Tensor("count", {10}, DType::kInt64, Op::kAllgather),
               Tensor("half", {8}, DType::kFloat16)};
  return w;
}

Topology Nodes(int nodes, int ranks_per_node) {
  Topology t;
  t.nodes = nodes;
  t.ranks_per_node = ranks_per_node;
  return t;
}

JobFacts Facts(double step_ms = 200.0, Topology topology = Nodes(2, 2)) {
  JobFacts job;
  job.workload = SevenTensors();
  job.topology = topology;
  job.step_ms = step_ms;
  return job;
}

std::set<std::string> HeldNames(const JobSpace& space) {
  std::set<std::string> names;
  for (const KnobShape& s : space.knobs) {
    if (s.held) names.insert(s.knob);
  }
  return names;
}

TEST(JobSpaceTest, FusionThresholdIsZeroOrBetweenTheSmallestPairAndTheStepsBytes) {
  const JobSpace space = ShapeSpaceForJob(Facts(), Target::kExecutor, Framework::kHorovod);
  const KnobShape* fusion = space.Find("fusion_threshold_mb");
  ASSERT_NE(fusion, nullptr);
  EXPECT_FALSE(fusion->held);
  EXPECT_EQ(fusion->scale, Scale::kZeroOrLog);
  EXPECT_EQ(fusion->lower, std::strtod("0.00195313", nullptr));
  EXPECT_EQ(fusion->upper, std::strtod("3.98234", nullptr));
  EXPECT_TRUE(fusion->same_above);
  EXPECT_TRUE(fusion->zero_below);
  EXPECT_FALSE(fusion->integer);

  // A second float16 tensor makes the smallest pair that kind's: 16 + 16 = 32 B =
  // 3.0517578125e-05 MB, rounded up 3.05176e-05 MB. The largest kind stays float32's.
  JobFacts job = Facts();
  job.workload.tensors.push_back(Tensor("half2", {8}, DType::kFloat16));
  const JobSpace with_pair = ShapeSpaceForJob(job, Target::kExecutor, Framework::kHorovod);
  const KnobShape* paired = with_pair.Find("fusion_threshold_mb");
  ASSERT_NE(paired, nullptr);
  EXPECT_EQ(paired->lower, std::strtod("3.05176e-05", nullptr));
  EXPECT_EQ(paired->upper, std::strtod("3.98234", nullptr));

  // One tensor of each kind: nothing can ever be fused.
  job.workload.tensors = {Tensor("a", {4}), Tensor("b", {4}, DType::kFloat16)};
  const JobSpace singles = ShapeSpaceForJob(job, Target::kExecutor, Framework::kHorovod);
  const KnobShape* alone = singles.Find("fusion_threshold_mb");
  ASSERT_NE(alone, nullptr);
  EXPECT_TRUE(alone->held);

  // Two tensors: fuse both or none.
  job.workload.tensors = {Tensor("a", {256}), Tensor("b", {256})};
  const JobSpace pair = ShapeSpaceForJob(job, Target::kExecutor, Framework::kHorovod);
  const KnobShape* two = pair.Find("fusion_threshold_mb");
  ASSERT_NE(two, nullptr);
  EXPECT_EQ(two->lower, two->upper);
  EXPECT_EQ(two->lower, std::strtod("0.00195313", nullptr));
}

TEST(JobSpaceTest, CycleTimeIsBoundedByTheStepTime) {
  auto cycle = [](double step_ms) {
    const JobSpace space = ShapeSpaceForJob(Facts(step_ms), Target::kExecutor, Framework::kHorovod);
    const KnobShape* shape = space.Find("cycle_time_ms");
    return shape == nullptr ? std::make_pair(-1.0, -1.0)
                            : std::make_pair(shape->lower, shape->upper);
  };
  // 0.1% of 200 ms is 0.2 ms (under 0.5 ms); the table's 100 ms is shorter than the step.
  EXPECT_EQ(cycle(200.0), std::make_pair(0.2, 100.0));
  // 0.1% of 2 s is 2 ms: 0.5 ms is the longer floor's end.
  EXPECT_EQ(cycle(2000.0), std::make_pair(0.5, 100.0));
  // A 40 ms step: at most 40 ms; 0.04 ms is below the table's 0.1 ms.
  EXPECT_EQ(cycle(40.0), std::make_pair(0.1, 40.0));
  // No step time known: the table's range.
  EXPECT_EQ(cycle(0.0), std::make_pair(-1.0, -1.0));
}

TEST(JobSpaceTest, CacheIsOffOrHoldsEveryTensor) {
  const JobSpace space = ShapeSpaceForJob(Facts(), Target::kExecutor, Framework::kHorovod);
  const KnobShape* cache = space.Find("cache_capacity");
  ASSERT_NE(cache, nullptr);
  EXPECT_EQ(cache->scale, Scale::kZeroOrLog);
  EXPECT_TRUE(cache->integer);
  EXPECT_EQ(cache->lower, 7.0);  // the seven tensors
  EXPECT_EQ(cache->upper, 7.0);
  EXPECT_TRUE(cache->same_above);
  EXPECT_FALSE(cache->zero_below);  // a cache of 3 is on, and no better than off
}

TEST(JobSpaceTest, HierarchicalKnobsAreHeldWhereTheyDoNothing) {
  const std::set<std::string> both = {"hierarchical_allreduce", "hierarchical_allgather"};
  auto held = [](const JobFacts& job, Target target) {
    return HeldNames(ShapeSpaceForJob(job, target, Framework::kHorovod));
  };
  EXPECT_EQ(held(Facts(), Target::kExecutor), std::set<std::string>{});
  EXPECT_EQ(held(Facts(), Target::kNccl), std::set<std::string>{});
  EXPECT_EQ(held(Facts(), Target::kCpu), both);
  EXPECT_EQ(held(Facts(200.0, Nodes(1, 4)), Target::kExecutor), both);
  EXPECT_EQ(held(Facts(200.0, Nodes(4, 1)), Target::kNccl), both);
  JobFacts no_allgather = Facts();
  no_allgather.workload.tensors.erase(no_allgather.workload.tensors.begin() + 5);
  EXPECT_EQ(held(no_allgather, Target::kExecutor), std::set<std::string>{"hierarchical_allgather"});
  // Topology not known: only what the target says.
  JobFacts unknown;
  EXPECT_EQ(held(unknown, Target::kExecutor), std::set<std::string>{});
  EXPECT_EQ(held(unknown, Target::kCpu), both);
  const JobSpace one_node_space =
      ShapeSpaceForJob(Facts(200.0, Nodes(1, 4)), Target::kExecutor, Framework::kHorovod);
  const KnobShape* one_node = one_node_space.Find("hierarchical_allreduce");
  ASSERT_NE(one_node, nullptr);
  EXPECT_NE(one_node->reason.find("one node"), std::string::npos) << one_node->reason;
}

TEST(JobSpaceTest, DdpBucketCapIsWholeMegabytesUpToTheStepsBytes) {
  const JobSpace space = ShapeSpaceForJob(Facts(), Target::kCpu, Framework::kDdp);
  EXPECT_EQ(space.Find("fusion_threshold_mb"), nullptr);
  EXPECT_EQ(space.Find("cache_capacity"), nullptr);  // DDP has no response cache
  const KnobShape* cap = space.Find("ddp_bucket_cap_mb");
  ASSERT_NE(cap, nullptr);
  EXPECT_TRUE(cap->integer);
  EXPECT_EQ(cap->lower, 1.0);
  EXPECT_EQ(cap->upper, 4.0);  // 3.98234 MB rounded up to whole MB
  EXPECT_TRUE(cap->same_above);
  const KnobShape* first = space.Find("ddp_first_bucket_mb");
  ASSERT_NE(first, nullptr);
  EXPECT_FALSE(first->held);
  EXPECT_EQ(first->lower, 0.25);
  EXPECT_EQ(first->upper, std::strtod("3.98234", nullptr));
  EXPECT_NE(first->reason.find("Hugging Face Trainer"), std::string::npos) << first->reason;
  // Without tensors the cap is still whole MB, over the table's range.
  const JobSpace unknown_space = ShapeSpaceForJob(JobFacts(), Target::kCpu, Framework::kDdp);
  const KnobShape* unknown = unknown_space.Find("ddp_bucket_cap_mb");
  ASSERT_NE(unknown, nullptr);
  EXPECT_TRUE(unknown->integer);
  EXPECT_EQ(unknown->lower, 1.0);
  EXPECT_EQ(unknown->upper, 1024.0);
  EXPECT_FALSE(unknown->same_above);
}

// The space a search builds from the shape: every decoded point is a setting of the shaped
// space, and settings the job cannot tell apart map to one point.
class ShapedKnobSpaceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    scope_.target = Target::kExecutor;
    scope_.job = Facts(200.0);
    ASSERT_TRUE(KnobSpace(BackendKind::kMpi, Knobs(), {}, FreeKnobs::kAllButBackend, scope_,
                          &space_, &shaped_)
                    .ok());
  }
  double At(const Point& p, const std::string& name) { return p[space_.IndexOf(name)]; }

  SpaceScope scope_;
  Space space_;
  JobSpace shaped_;
};

TEST_F(ShapedKnobSpaceTest, TheDefaultStaysTheDefault) {
  // 128 MB behaves as 3.98234 MB, a cache of 1024 as one of 7: the default point writes the
  // defaults back.
  const Point d = space_.Default();
  EXPECT_EQ(At(d, "fusion_threshold_mb"), std::strtod("3.98234", nullptr));
  EXPECT_EQ(At(d, "cache_capacity"), 7.0);
  Knobs back;
  ASSERT_TRUE(PointToKnobs(space_, d, Knobs(), &back).ok());
  EXPECT_EQ(back, Knobs());
  // Settings the job cannot tell apart: one point each.
  Knobs k;
  k.fusion_threshold_mb = 64.0;
  Point p;
  ASSERT_TRUE(KnobsToPoint(space_, k, &p).ok());
  EXPECT_EQ(At(p, "fusion_threshold_mb"), std::strtod("3.98234", nullptr));
  k.fusion_threshold_mb = 5.9e-5;  // 62 bytes: fuses nothing
  ASSERT_TRUE(KnobsToPoint(space_, k, &p).ok());
  EXPECT_EQ(At(p, "fusion_threshold_mb"), 0.0);
  // A cache of 3 of the 7 tensors is no setting of the space.
  k.cache_capacity = 3;
  EXPECT_FALSE(KnobsToPoint(space_, k, &p).ok());
}

TEST_F(ShapedKnobSpaceTest, EveryDecodedPointIsASettingOfTheShapedSpace) {
  const double lower = std::strtod("0.00195313", nullptr), upper = std::strtod("3.98234", nullptr);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  int zeros = 0, tops = 0;
  for (int n = 0; n < 2000; ++n) {
    Eigen::VectorXd u(space_.encoded_size());
    for (int c = 0; c < u.size(); ++c) u[c] = unit(rng);
    const Point p = space_.Decode(u);
    // The model sees the point it stands for.
    EXPECT_TRUE((space_.Snap(space_.Snap(u)) - space_.Snap(u)).norm() < 1e-12);
    Knobs k;
    ASSERT_TRUE(PointToKnobs(space_, p, Knobs(), &k).ok());
    const double mb = k.fusion_threshold_mb;
    EXPECT_TRUE(mb == 0.0 || (mb >= lower && mb <= upper) || mb == 128.0) << mb;
    zeros += mb == 0.0;
    tops += mb == 128.0;
    EXPECT_TRUE(k.cache_capacity == 0 || k.cache_capacity == 1024) << k.cache_capacity;
    EXPECT_GE(k.cycle_time_ms, 0.2);
    EXPECT_LE(k.cycle_time_ms, 100.0);
    // And it reads back to the same point.
    Point again;
    ASSERT_TRUE(KnobsToPoint(space_, k, &again).ok());
    EXPECT_EQ(At(again, "cache_capacity"), At(p, "cache_capacity"));
    EXPECT_EQ(At(again, "fusion_threshold_mb"), RoundToKnobPrecision(At(p, "fusion_threshold_mb")));
  }
  // About a fifth of the coordinate is "no fusion"; the top is one point of measure zero.
  EXPECT_GT(zeros, 300);
  EXPECT_LT(zeros, 500);
  EXPECT_LT(tops, 5);
}

TEST_F(ShapedKnobSpaceTest, NotesSayWhereEachShapedKnobIsSearched) {
  std::vector<std::string> notes;
  for (const KnobShape& s : shaped_.knobs) notes.push_back(JobSpaceNote(s, space_));
  ASSERT_EQ(notes.size(), 3u);  // fusion, cycle, cache: the hierarchical knobs are free on 2x2
  EXPECT_EQ(notes[0].rfind("fusion_threshold_mb searched in 0 or [0.00195313, 3.98234] MB: ", 0),
            0u)
      << notes[0];
  EXPECT_EQ(notes[1].rfind("cycle_time_ms searched in [0.2, 100] ms: ", 0), 0u) << notes[1];
  EXPECT_EQ(notes[2].rfind("cache_capacity searched in {0, 7} entries: ", 0), 0u) << notes[2];

  // On one node the hierarchical knobs are held, and say why.
  scope_.job.topology = Nodes(1, 4);
  ASSERT_TRUE(KnobSpace(BackendKind::kMpi, Knobs(), {}, FreeKnobs::kAllButBackend, scope_, &space_,
                        &shaped_)
                  .ok());
  ASSERT_NE(shaped_.Find("hierarchical_allgather"), nullptr);
  EXPECT_TRUE(space_.is_constant(space_.IndexOf("hierarchical_allgather")));
  EXPECT_EQ(JobSpaceNote(*shaped_.Find("hierarchical_allgather"), space_),
            "hierarchical_allgather held at false: one node: there is no cross-node step to "
            "split off");
  // A knob the user gave is theirs: neither shaped nor noted.
  Knobs given;
  given.fusion_threshold_mb = 256.0;
  ASSERT_TRUE(KnobSpace(BackendKind::kMpi, given, {"fusion_threshold_mb"},
                        FreeKnobs::kAllButBackend, scope_, &space_, &shaped_)
                  .ok());
  EXPECT_EQ(shaped_.Find("fusion_threshold_mb"), nullptr);
  EXPECT_EQ(space_.Default()[space_.IndexOf("fusion_threshold_mb")], 256.0);
}

TEST(ShapedDdpSpaceTest, BucketCapsAreWholeMegabytes) {
  SpaceScope scope;
  scope.target = Target::kCpu;
  scope.framework = Framework::kDdp;
  scope.job = Facts();
  Space space;
  ASSERT_TRUE(
      KnobSpace(BackendKind::kMpi, Knobs(), {}, FreeKnobs::kAllButBackend, scope, &space).ok());
  const int cap = space.IndexOf("ddp_bucket_cap_mb");
  ASSERT_GE(cap, 0);
  EXPECT_EQ(space.dimension(cap).kind, DimensionKind::kInteger);
  std::mt19937_64 rng(3);
  std::set<double> seen;
  for (int n = 0; n < 200; ++n) {
    Knobs k;
    ASSERT_TRUE(PointToKnobs(space, space.Random(rng), Knobs(), &k).ok());
    EXPECT_EQ(k.ddp_bucket_cap_mb, std::round(k.ddp_bucket_cap_mb));
    // 1-4 MB, and the default 25 MB for the top (every cap from 4 MB up is one bucket).
    EXPECT_TRUE((k.ddp_bucket_cap_mb >= 1 && k.ddp_bucket_cap_mb <= 4) ||
                k.ddp_bucket_cap_mb == 25.0)
        << k.ddp_bucket_cap_mb;
    seen.insert(k.ddp_bucket_cap_mb);
  }
  EXPECT_EQ(seen, (std::set<double>{1, 2, 3, 25}));
  // A fractional cap has no place in the space: a user of the Trainer could not type it.
  Knobs fractional;
  fractional.ddp_bucket_cap_mb = 2.5;
  Point p;
  EXPECT_FALSE(KnobsToPoint(space, fractional, &p).ok());
}

}  // namespace
}  // namespace autotune::tuner

namespace autotune::tuner {
namespace {

// The eager limit the companion rule writes, worked out by hand: the largest allreduce of at
// most 1 MiB the setting sends (its fusion buffer, or its largest tensor going alone), half of
// it (Rabenseifner's first message) plus 1 KiB of header room, rounded up to a power of two
// above Open MPI's own 65,536; 0 when the rule sets nothing.
int EagerLimit(double threshold_mb, const JobFacts& job, BackendKind backend = BackendKind::kMpi,
               Framework framework = Framework::kHorovod) {
  Knobs knobs;
  knobs.fusion_threshold_mb = threshold_mb;
  return WithCompanionKnobs(knobs, job, backend, framework).mpi_tcp_eager_limit;
}

JobFacts Mlp(Topology topology = Nodes(2, 2)) {
  JobFacts job;
  job.workload.name = "mlp";
  // 256x256 float32 weights (262,144 bytes) and 256-float biases (1,024 bytes).
  job.workload.tensors = {Tensor("w1", {256, 256}), Tensor("b1", {256}),
                          Tensor("w2", {256, 256}), Tensor("b2", {256})};
  job.topology = topology;
  return job;
}

TEST(CompanionKnobs, SmallBuffersOnOpenMpiAcrossNodesGetTheEagerLimitThatSendsThemEagerly) {
  // 0.3 MB = 314,573 bytes: 157,286 + 1,024 = 158,310 -> 262,144.
  EXPECT_EQ(EagerLimit(0.3, Mlp()), 262144);
  // No fusion: the 262,144-byte weights alone: 131,072 + 1,024 = 132,096 -> 262,144.
  EXPECT_EQ(EagerLimit(0.0, Mlp()), 262144);
  // 1 MB = 1,048,576: 524,288 + 1,024 -> 1,048,576.
  EXPECT_EQ(EagerLimit(1.0, Mlp()), 1048576);
  // SevenTensors, no fusion: fc.weight (1,024,000 bytes) is the largest of at most 1 MiB
  // (embedding, 3,145,728, is larger): 512,000 + 1,024 = 513,024 -> 524,288; a 0.3 MB
  // buffer does not change it (fc.weight still goes alone).
  EXPECT_EQ(EagerLimit(0.0, Facts()), 524288);
  EXPECT_EQ(EagerLimit(0.3, Facts()), 524288);
}

TEST(CompanionKnobs, LeftAloneWhereTheRuleDoesNotApply) {
  EXPECT_EQ(EagerLimit(128.0, Mlp()), 0);  // the default: one large buffer
  EXPECT_EQ(EagerLimit(2.0, Mlp()), 0);    // buffers above 1 MiB
  // Buffers whose messages fit Open MPI's own limit: 0.05 MB = 52,429 bytes, 26,214 + 1,024.
  JobFacts small = Mlp();
  small.workload.tensors = {Tensor("b1", {256}), Tensor("b2", {256}), Tensor("b3", {1000})};
  EXPECT_EQ(EagerLimit(0.05, small), 0);
  EXPECT_EQ(EagerLimit(0.3, Mlp(Nodes(1, 4))), 0);  // one node: shared memory, no TCP
  EXPECT_EQ(EagerLimit(0.3, Mlp(), BackendKind::kNccl), 0);
  EXPECT_EQ(EagerLimit(0.3, Mlp(), BackendKind::kMpi, Framework::kDdp), 0);
  JobFacts unknown = Mlp();
  unknown.topology.reset();
  EXPECT_EQ(EagerLimit(0.3, unknown), 0);
  unknown = Mlp();
  unknown.workload.tensors.clear();
  EXPECT_EQ(EagerLimit(0.3, unknown), 0);
  // A limit the user set is kept.
  Knobs knobs;
  knobs.fusion_threshold_mb = 0.3;
  knobs.mpi_tcp_eager_limit = 131072;
  EXPECT_EQ(WithCompanionKnobs(knobs, Mlp(), BackendKind::kMpi, Framework::kHorovod)
                .mpi_tcp_eager_limit,
            131072);
}

TEST(CompanionKnobs, TheNoteNamesTheLimitAndTheMessagesOnlyWhereTheRuleSetIt) {
  Knobs knobs;
  knobs.fusion_threshold_mb = 0.3;
  const Knobs completed = WithCompanionKnobs(knobs, Mlp(), BackendKind::kMpi, Framework::kHorovod);
  const std::string note = CompanionNote(completed, Mlp(), BackendKind::kMpi, Framework::kHorovod);
  EXPECT_NE(note.find("mpi_tcp_eager_limit 262144"), std::string::npos) << note;
  EXPECT_NE(note.find("314573 bytes"), std::string::npos) << note;
  EXPECT_EQ(CompanionNote(knobs, Mlp(), BackendKind::kMpi, Framework::kHorovod), "");
  EXPECT_EQ(CompanionNote(Knobs(), Mlp(), BackendKind::kMpi, Framework::kHorovod), "");
}

// A search's settings carry the rule's value; a measured sample that ran with it is that
// setting's point, one that ran without it has no place (the limit changes the job's time: a
// run at Open MPI's own limit is no evidence for the setting with another). The knob is not a
// dimension.
TEST(CompanionKnobs, ASearchWritesThemAndMatchesOnlySamplesThatRanWithThem) {
  SpaceScope scope;
  scope.target = Target::kCpu;
  scope.job = Mlp();
  Space space;
  ASSERT_TRUE(KnobSpace(BackendKind::kMpi, Knobs(), {}, FreeKnobs::kAll, scope, &space).ok());
  EXPECT_LT(space.IndexOf("mpi_tcp_eager_limit"), 0);
  const JobFacts job = Mlp();
  KnobSearch search(space, Knobs(), SearchOptions(), nullptr, [job](const Knobs& k) {
    return WithCompanionKnobs(k, job, BackendKind::kMpi, Framework::kHorovod);
  });
  Knobs small;
  small.fusion_threshold_mb = 0.3;
  small.cycle_time_ms = 2.0;
  StatusOr<Point> bare = search.ToPoint(small);
  ASSERT_FALSE(bare.ok());
  EXPECT_EQ(bare.status().message(),
            "mpi_tcp_eager_limit 0: the search writes this setting with 262144");
  Knobs ran = small;
  ran.mpi_tcp_eager_limit = 262144;
  StatusOr<Point> with_limit = search.ToPoint(ran);
  ASSERT_TRUE(with_limit.ok()) << with_limit.status().message();
  StatusOr<Knobs> written = search.ToKnobs(*with_limit);
  ASSERT_TRUE(written.ok());
  EXPECT_EQ(written->mpi_tcp_eager_limit, 262144);
  StatusOr<Knobs> default_setting = search.ToKnobs(space.Default());
  ASSERT_TRUE(default_setting.ok());
  EXPECT_EQ(default_setting->mpi_tcp_eager_limit, 0);
  EXPECT_TRUE(search.ToPoint(Knobs()).ok());  // the default ran as written
  // 4 MB buffers: no limit written, so a run with one has no place either.
  Knobs large;
  large.fusion_threshold_mb = 4.0;
  large.mpi_tcp_eager_limit = 262144;
  EXPECT_FALSE(search.ToPoint(large).ok());
  large.mpi_tcp_eager_limit = 0;
  EXPECT_TRUE(search.ToPoint(large).ok());
}

}  // namespace
}  // namespace autotune::tuner
