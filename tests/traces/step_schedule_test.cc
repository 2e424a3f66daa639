// The two step schedules through the one interface: what each launches, how it paces, copies
// and ends a step, and its algorithm. The expected buckets and fused collectives are the ones
// worked out by hand in tests/traces/fusion_policy_test.cc, tests/traces/ddp_buckets_test.cc,
// tests/simulator/replay_test.cc and tests/simulator/ddp_replay_test.cc.
#include "traces/step_schedule.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace autotune {
namespace {

constexpr int64_t kMiB = 1024 * 1024;
using Members = std::vector<std::vector<int>>;

Members MembersOf(const std::vector<FusedCollective>& launched) {
  Members out;
  for (const FusedCollective& c : launched) out.push_back(c.tensors);
  return out;
}

// Float32 tensors t0, t1, ... of the given bytes, ready (listed) in that order.
Workload OfBytes(const std::vector<int64_t>& bytes) {
  Workload w;
  w.name = "bytes";
  w.backward_ms = 10;
  for (size_t i = 0; i < bytes.size(); ++i) {
    TensorSpec t;
    t.name = "t" + std::to_string(i);
    t.shape = {bytes[i] / 4};
    t.ready_ms = static_cast<double>(i);
    w.tensors.push_back(t);
  }
  return w;
}

// 0.5, 0.75, 1.5, 0.25, 3 MiB (ddp_buckets_test.cc's sizes).
Workload FiveTensors() {
  return OfBytes({kMiB / 2, 3 * kMiB / 4, 3 * kMiB / 2, kMiB / 4, 3 * kMiB});
}

Knobs DdpCaps(double first_mb, double cap_mb, bool view) {
  Knobs k;
  k.ddp_first_bucket_mb = first_mb;
  k.ddp_bucket_cap_mb = cap_mb;
  k.ddp_gradient_as_bucket_view = view;
  return k;
}

Knobs Horovod(int64_t threshold_bytes, int num_groups) {
  Knobs k;
  k.fusion_threshold_mb = static_cast<double>(threshold_bytes) / kMiB;
  k.num_groups = num_groups;
  return k;
}

std::vector<FusedCollective> Launch(StepSchedule* s, std::vector<int> newly_ready) {
  return s->Launch(newly_ready);
}

TEST(DdpBucketSchedule, LaunchesDdpsBucketsAsTheyCompleteAndRebuildsThemOnce) {
  // First bucket 1 MiB, cap 2 MiB: up front {0}, {3, 2, 1}, {4}; rebuilt from the ready order
  // 0..4: {0, 1}, {2, 3, 4}.
  std::unique_ptr<StepSchedule> s =
      MakeStepSchedule(FiveTensors(), DdpCaps(1, 2, false), Framework::kDdp, 4);
  EXPECT_EQ(s->pacing(), Pacing::kOnReady);
  EXPECT_EQ(s->buckets(), (Members{{0}, {3, 2, 1}, {4}}));
  EXPECT_EQ(MembersOf(Launch(s.get(), {0})), (Members{{0}}));
  EXPECT_TRUE(Launch(s.get(), {1, 2}).empty());  // tensor 3 is still missing
  EXPECT_EQ(MembersOf(Launch(s.get(), {3, 4})), (Members{{3, 2, 1}, {4}}));
  EXPECT_TRUE(s->EndStep(std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(s->buckets(), (Members{{0, 1}, {2, 3, 4}}));
  // A bucket waits for its predecessors: the second is complete first, both start together.
  EXPECT_TRUE(Launch(s.get(), {2, 3, 4}).empty());
  const std::vector<FusedCollective> both = Launch(s.get(), {1, 0});
  EXPECT_EQ(MembersOf(both), (Members{{0, 1}, {2, 3, 4}}));
  EXPECT_EQ(both[1].bytes, 19 * kMiB / 4);  // 1.5 + 0.25 + 3 MiB
  // Rebuilt once only.
  EXPECT_FALSE(s->EndStep(std::vector<int>{4, 3, 2, 1, 0}));
  EXPECT_EQ(s->buckets(), (Members{{0, 1}, {2, 3, 4}}));
}

TEST(DdpBucketSchedule, ThreeGradientsOfTheReplayTest) {
  // 1e6, 1e6, 2e6 bytes (ddp_replay_test.cc). Caps 1 MiB: up front, walking 2 1 0, {2} and
  // {1, 0}, launched {1, 0} then {2}; rebuilt from 0 1 2: {0, 1} (2e6 >= 1 MiB) and {2}.
  const Workload w = OfBytes({1000000, 1000000, 2000000});
  std::unique_ptr<StepSchedule> s = MakeStepSchedule(w, DdpCaps(1, 1, false), Framework::kDdp, 2);
  EXPECT_EQ(s->buckets(), (Members{{1, 0}, {2}}));
  EXPECT_TRUE(s->EndStep(std::vector<int>{0, 1, 2}));
  EXPECT_TRUE(Launch(s.get(), {0}).empty());
  const std::vector<FusedCollective> first = Launch(s.get(), {1});
  EXPECT_EQ(MembersOf(first), (Members{{0, 1}}));
  EXPECT_EQ(first[0].bytes, 2000000);
  EXPECT_EQ(MembersOf(Launch(s.get(), {2})), (Members{{2}}));
  // Caps of 0.25 MiB: one bucket per gradient; a first bucket of 64 MiB: one bucket of all.
  s = MakeStepSchedule(w, DdpCaps(0.25, 0.25, false), Framework::kDdp, 2);
  s->EndStep(std::vector<int>{0, 1, 2});
  EXPECT_EQ(s->buckets(), (Members{{0}, {1}, {2}}));
  s = MakeStepSchedule(w, DdpCaps(64, 1024, false), Framework::kDdp, 2);
  s->EndStep(std::vector<int>{0, 1, 2});
  EXPECT_EQ(s->buckets(), (Members{{0, 1, 2}}));
}

TEST(DdpBucketSchedule, CopiesInWhenReadyAndBackAtTheEndUnlessBucketView) {
  for (bool view : {false, true}) {
    SCOPED_TRACE(view ? "gradient_as_bucket_view" : "copies");
    Knobs k = DdpCaps(1, 2, view);
    k.hierarchical_allreduce = true;  // not DDP's: its buckets are flat allreduces
    std::unique_ptr<StepSchedule> s = MakeStepSchedule(FiveTensors(), k, Framework::kDdp, 4);
    const GradientCopies g = s->gradient_copies();
    EXPECT_TRUE(g.bucket_area);
    EXPECT_EQ(g.copy_in_when_ready, !view);
    EXPECT_EQ(g.copy_back_at_step_end, !view);
    const std::vector<FusedCollective> launched = Launch(s.get(), {0, 1, 2, 3, 4});
    ASSERT_EQ(launched.size(), 3u);
    for (const FusedCollective& c : launched) {
      const CollectiveCopies copies = s->CopiesOf(c);
      EXPECT_FALSE(copies.copy_in);
      EXPECT_FALSE(copies.copy_out);
      EXPECT_FALSE(copies.in_output);
      EXPECT_EQ(c.op, Op::kAllreduce);
    }
    EXPECT_EQ(s->AlgorithmOf(Op::kAllreduce), Algorithm::kFlat);
    // On GPUs (NCCL's process group) the copies are device kernels: no host time to count.
    const GradientCopies gpu =
        MakeStepSchedule(FiveTensors(), k, Framework::kDdp, 4, CollectiveRunner::kNcclLibrary)
            ->gradient_copies();
    EXPECT_TRUE(gpu.bucket_area);
    EXPECT_FALSE(gpu.copy_in_when_ready);
    EXPECT_FALSE(gpu.copy_back_at_step_end);
    EXPECT_EQ(MakeStepSchedule(FiveTensors(), k, Framework::kDdp, 4,
                               CollectiveRunner::kHostLibrary)
                  ->gradient_copies()
                  .copy_in_when_ready,
              !view);
  }
}

TEST(HorovodCycleSchedule, FusesWhatEachCycleAgreedInIndexOrder) {
  // 100-byte tensors, threshold 250 bytes: two per buffer, whatever order they came in.
  std::unique_ptr<StepSchedule> s = MakeStepSchedule(OfBytes({100, 100, 100, 100, 100, 100}),
                                                     Horovod(250, 0), Framework::kHorovod, 4);
  EXPECT_EQ(s->pacing(), Pacing::kNegotiatedCycle);
  EXPECT_EQ(MembersOf(Launch(s.get(), {4, 1, 0})), (Members{{0, 1}, {4}}));
  EXPECT_TRUE(Launch(s.get(), {}).empty());
  const std::vector<FusedCollective> fused = Launch(s.get(), {5, 3, 2});
  EXPECT_EQ(MembersOf(fused), (Members{{2, 3}, {5}}));
  EXPECT_EQ(fused[0].bytes, 200);
  EXPECT_FALSE(s->EndStep(std::vector<int>{0, 1, 2, 3, 4, 5}));
  EXPECT_TRUE(s->buckets().empty());
}

TEST(HorovodCycleSchedule, GroupsReleaseWholeGroupsAndACloneCarriesTheProgress) {
  // 2 groups of 3: {0, 1, 2} and {3, 4, 5}; a threshold that fuses a whole group.
  std::unique_ptr<StepSchedule> s = MakeStepSchedule(OfBytes({100, 100, 100, 100, 100, 100}),
                                                     Horovod(1000, 2), Framework::kHorovod, 4);
  EXPECT_TRUE(Launch(s.get(), {0, 3, 1}).empty());
  std::unique_ptr<StepSchedule> copy = s->Clone();
  EXPECT_EQ(MembersOf(Launch(s.get(), {4, 2})), (Members{{0, 1, 2}}));
  EXPECT_EQ(MembersOf(Launch(copy.get(), {4, 2})), (Members{{0, 1, 2}}));
  EXPECT_EQ(MembersOf(Launch(s.get(), {5})), (Members{{3, 4, 5}}));
  // A new step forgets what was held: group 1 needs all three members again.
  s->Reset();
  EXPECT_TRUE(Launch(s.get(), {3, 4}).empty());
  s->EndStep(std::vector<int>{0, 1, 2, 3, 4, 5});
  EXPECT_TRUE(Launch(s.get(), {5}).empty());
}

TEST(HorovodCycleSchedule, TwoTensorsOfTheReplayTestHeldByOneGroup) {
  // replay_test.cc: two 1e6-byte tensors, 64 MB threshold; with num_groups 1 both wait for the
  // second and go as one collective of 2e6 bytes.
  const Workload w = OfBytes({1000000, 1000000});
  std::unique_ptr<StepSchedule> s =
      MakeStepSchedule(w, Horovod(64 * kMiB, 1), Framework::kHorovod, 2);
  EXPECT_TRUE(Launch(s.get(), {0}).empty());
  const std::vector<FusedCollective> fused = Launch(s.get(), {1});
  EXPECT_EQ(MembersOf(fused), (Members{{0, 1}}));
  EXPECT_EQ(fused[0].bytes, 2000000);
  // Greedy (num_groups 0), one cycle each: two collectives.
  s = MakeStepSchedule(w, Horovod(64 * kMiB, 0), Framework::kHorovod, 2);
  EXPECT_EQ(MembersOf(Launch(s.get(), {0})), (Members{{0}}));
  EXPECT_EQ(MembersOf(Launch(s.get(), {1})), (Members{{1}}));
}

TEST(HorovodCycleSchedule, CopiesThroughTheFusionBufferExceptForOneTensor) {
  // replay_test.cc: a fused pair copies in and out; threshold 0 gives one collective per tensor,
  // each copied into its own output and reduced there (copy-in only).
  const Workload w = OfBytes({1000000, 1000000});
  std::unique_ptr<StepSchedule> s =
      MakeStepSchedule(w, Horovod(64 * kMiB, 0), Framework::kHorovod, 2);
  std::vector<FusedCollective> fused = Launch(s.get(), {0, 1});
  ASSERT_EQ(fused.size(), 1u);
  CollectiveCopies copies = s->CopiesOf(fused[0]);
  EXPECT_TRUE(copies.copy_in);
  EXPECT_TRUE(copies.copy_out);
  EXPECT_FALSE(copies.in_output);
  s = MakeStepSchedule(w, Horovod(0, 0), Framework::kHorovod, 2);
  fused = Launch(s.get(), {0, 1});
  ASSERT_EQ(fused.size(), 2u);
  copies = s->CopiesOf(fused[1]);
  EXPECT_TRUE(copies.copy_in);
  EXPECT_FALSE(copies.copy_out);
  EXPECT_TRUE(copies.in_output);
  const GradientCopies g = s->gradient_copies();
  EXPECT_FALSE(g.bucket_area);
  EXPECT_FALSE(g.copy_in_when_ready);
  EXPECT_FALSE(g.copy_back_at_step_end);
}

TEST(HorovodCycleSchedule, AlgorithmFollowsTheHierarchicalKnobs) {
  Knobs k;
  k.hierarchical_allreduce = true;
  std::unique_ptr<StepSchedule> s = MakeStepSchedule(FiveTensors(), k, Framework::kHorovod, 4);
  EXPECT_EQ(s->AlgorithmOf(Op::kAllreduce), Algorithm::kHierarchical);
  EXPECT_EQ(s->AlgorithmOf(Op::kAllgather), Algorithm::kFlat);
  k.hierarchical_allreduce = false;
  k.hierarchical_allgather = true;
  s = MakeStepSchedule(FiveTensors(), k, Framework::kHorovod, 4);
  EXPECT_EQ(s->AlgorithmOf(Op::kAllreduce), Algorithm::kFlat);
  EXPECT_EQ(s->AlgorithmOf(Op::kAllgather), Algorithm::kHierarchical);
}

TEST(StepSchedule, TheFrameworkPicksThePlugIn) {
  // ddp_buckets_test.cc's knobs under both frameworks: DDP's buckets, or Horovod's 128 MB
  // fusion threshold packing all five at once.
  const Knobs k = DdpCaps(1, 2, false);
  std::unique_ptr<StepSchedule> ddp = MakeStepSchedule(FiveTensors(), k, Framework::kDdp, 4);
  EXPECT_EQ(MembersOf(Launch(ddp.get(), {0, 1, 2, 3, 4})), (Members{{0}, {3, 2, 1}, {4}}));
  ddp->EndStep(std::vector<int>{0, 1, 2, 3, 4});
  EXPECT_EQ(MembersOf(Launch(ddp.get(), {0, 1})), (Members{{0, 1}}));
  std::unique_ptr<StepSchedule> horovod =
      MakeStepSchedule(FiveTensors(), k, Framework::kHorovod, 4);
  EXPECT_EQ(MembersOf(Launch(horovod.get(), {0, 1, 2, 3, 4})), (Members{{0, 1, 2, 3, 4}}));
}

TEST(StepSchedule, WhatRunsTheCollectivesSaysHowManyAtOnce) {
  // torch 1.13's ProcessGroupGloo: 2 worker threads per interface (one); ProcessGroupNCCL: one
  // stream; autotune's executor: one background thread; Horovod: one at a time everywhere.
  const Knobs k = DdpCaps(1, 2, false);
  auto in_flight = [&](Framework f, CollectiveRunner r) {
    return MakeStepSchedule(FiveTensors(), k, f, 4, r)->max_in_flight();
  };
  EXPECT_EQ(in_flight(Framework::kDdp, CollectiveRunner::kHostLibrary), 2);
  EXPECT_EQ(in_flight(Framework::kDdp, CollectiveRunner::kNcclLibrary), 1);
  EXPECT_EQ(in_flight(Framework::kDdp, CollectiveRunner::kExecutor), 1);
  EXPECT_EQ(in_flight(Framework::kHorovod, CollectiveRunner::kHostLibrary), 1);
  // A stored run's runner: an imported run is the real job (its library by its backend), a
  // measured one the executor.
  RunInfo run;
  run.kind = RunKind::kMeasured;
  EXPECT_EQ(RunnerOf(run), CollectiveRunner::kExecutor);
  run.kind = RunKind::kImported;
  EXPECT_EQ(RunnerOf(run), CollectiveRunner::kHostLibrary);
  run.backend = BackendKind::kNccl;
  EXPECT_EQ(RunnerOf(run), CollectiveRunner::kNcclLibrary);
}

TEST(StepSchedule, RecordOfCopiesTheCollectiveAndItsPhases) {
  FusedCollective c;
  c.op = Op::kAllgather;
  c.bytes = 4096;
  c.tensors = {3, 1};
  const CollectivePhases p{.start_us = 10, .copy_in_end_us = 12, .comm_end_us = 20, .end_us = 25};
  const CollectiveRecord r = RecordOf(c, Algorithm::kHierarchical, p, 2, 7, 5);
  EXPECT_EQ(r.rank, 2);
  EXPECT_EQ(r.seq, 7);
  EXPECT_EQ(r.cycle, 5);
  EXPECT_EQ(r.op, Op::kAllgather);
  EXPECT_EQ(r.algorithm, Algorithm::kHierarchical);
  EXPECT_EQ(r.bytes, 4096);
  EXPECT_EQ(r.tensors, (std::vector<int>{3, 1}));
  EXPECT_EQ(r.start_us, 10);
  EXPECT_EQ(r.copy_in_end_us, 12);
  EXPECT_EQ(r.comm_end_us, 20);
  EXPECT_EQ(r.end_us, 25);
}

TEST(StepSchedule, TheCopyBackEndsTheLastCollectiveAndEveryTensor) {
  std::vector<CollectiveRecord> collectives(2);
  collectives[0].end_us = 5;
  collectives[1].end_us = 9;
  std::vector<TensorEvent> tensors(3);
  tensors[0].done_us = 5;
  RecordCopyBack(14, &collectives, &tensors);
  EXPECT_EQ(collectives[0].end_us, 5);
  EXPECT_EQ(collectives[1].end_us, 14);
  for (const TensorEvent& e : tensors) EXPECT_EQ(e.done_us, 14);
  collectives.clear();
  RecordCopyBack(3, &collectives, &tensors);  // no collective: only the tensors
  EXPECT_EQ(tensors[2].done_us, 3);
}

}  // namespace
}  // namespace autotune
