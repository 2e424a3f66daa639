// Horovod's step schedule (traces/step_schedule.h): tensor fusion over a negotiated background
// cycle. FusionPolicy is the fusion decision of one cycle (which agreed tensors go into which
// fused collective); HorovodCycleSchedule is the plug-in the executor and the simulator's replay
// run, which adds the cycle's pacing, the fusion buffer's copies and the hierarchical choice.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "traces/knobs.h"
#include "traces/step_schedule.h"
#include "traces/workload.h"

namespace autotune {

// Bytes a tensor occupies in the fusion buffer: its own bytes for allreduce, its
// gathered output (bytes * world_size) for allgather.
int64_t FusionBytes(const TensorSpec& t, int world_size);

// The copies around fused collective c through the fusion buffer: every member's input in, the
// results out. A collective of one tensor skips the fusion buffer (as Horovod does): its input
// is copied into its output and the collective runs in place there (no copy-out).
CollectiveCopies FusionBufferCopies(const FusedCollective& c);

// The parts FusionPolicy is made of, declared here for its own tests; callers use
// FusionPolicy.
namespace fusion_internal {

// One negotiated response: a tensor that is ready on every rank.
struct ReadyTensor {
  int tensor = 0;  // index into Workload::tensors
  Op op = Op::kAllreduce;
  DType dtype = DType::kFloat32;
  int64_t bytes = 0;  // bytes it occupies in the fusion buffer (see FusionBytes)
  int group = -1;     // fusion group, -1 = none
};

// Packs responses (in response order) greedily into consecutive fused collectives of at
// most threshold_bytes, never mixing op, dtype or group. A tensor larger than the
// threshold goes alone; threshold_bytes == 0 gives one collective per tensor. Order kept.
std::vector<FusedCollective> PackResponses(std::span<const ReadyTensor> responses,
                                           int64_t threshold_bytes);

// Group of each tensor for num_groups > 0: the workload's explicit groups when every
// tensor has one, else num_groups contiguous runs of (nearly) equal tensor count in ready
// order. All -1 when num_groups == 0.
std::vector<int> AssignGroups(const Workload& w, int num_groups);

// Holds back the members of a group until the whole group is ready (grouped allreduce
// semantics); tensors with group -1 pass straight through. One instance per step.
class GroupGate {
 public:
  explicit GroupGate(std::vector<int> group_of);
  // Adds tensors that became ready on every rank; *released gets those released now, in
  // ascending tensor order (its previous contents are dropped).
  void Admit(std::span<const int> newly_ready, std::vector<int>* released);
  // Forgets all progress (start of a new step).
  void Reset();
  // The group of tensor t, -1 = none.
  int group_of(int t) const { return group_of_[t]; }

 private:
  std::vector<int> group_of_;
  std::vector<int> group_size_;
  std::vector<int> group_ready_;
  std::vector<std::vector<int>> held_;
};

}  // namespace fusion_internal

// Horovod's fusion decision for one rank's step, cycle by cycle. Copyable: a copy carries the
// progress of the step it was copied in.
class FusionPolicy {
 public:
  // threshold_bytes: the fusion buffer's capacity (0 = one collective per tensor).
  // num_groups: 0 = greedy fusion; > 0 = grouped allreduce (AssignGroups). world_size:
  // ranks in the job (an allgather occupies its gathered bytes). Nothing of workload is
  // kept beyond the constructor.
  FusionPolicy(const Workload& workload, int64_t threshold_bytes, int num_groups, int world_size);

  // One cycle: newly_ready holds the tensors that became ready on every rank since the
  // last cycle (any order, each tensor at most once per step). Returns the fused
  // collectives to run now, in order: the tensors released this cycle (with groups on, a
  // group's members only once the whole group is ready) in ascending index order, packed
  // greedily into buffers of at most threshold_bytes that never mix op, dtype or group.
  // Empty when nothing is released.
  std::vector<FusedCollective> Cycle(std::span<const int> newly_ready);
  // Forgets every held tensor (start of a new step).
  void Reset();

  // The fusion group of tensor t, -1 = none (num_groups == 0).
  int group_of(int t) const { return gate_.group_of(t); }
  int64_t threshold_bytes() const { return threshold_bytes_; }

 private:
  int64_t threshold_bytes_ = 0;
  std::vector<fusion_internal::ReadyTensor> response_of_;  // per tensor
  fusion_internal::GroupGate gate_;
  // Scratch reused across cycles.
  std::vector<int> released_;
  std::vector<fusion_internal::ReadyTensor> responses_;
};

// The fusion threshold real Horovod uses for threshold_bytes on a cluster of local_size ranks
// per node on every node: rounded up to a multiple of local_size * 8 * 64 bytes (Horovod's
// Controller::TensorFusionThresholdBytes, so that the buffer holds a multiple of
// FUSION_BUFFER_ATOMIC_UNIT float64 elements per local rank). 0.50266 MB (527,077 bytes) on 2
// ranks per node is 527,360: the real MLP's fused buffers of that size hold two 256 KiB weights
// and three 1 KiB biases, which 527,077 bytes cannot.
int64_t HorovodFusionThresholdBytes(int64_t threshold_bytes, int local_size);

// Horovod's step schedule: pacing kNegotiatedCycle; Launch is FusionPolicy::Cycle for the
// knobs' fusion threshold and num_groups; the algorithm is hierarchical where the knobs'
// hierarchical_allreduce / hierarchical_allgather say so; copies FusionBufferCopies; no bucket
// area, no step-end copy; EndStep only forgets progress.
class HorovodCycleSchedule final : public StepSchedule {
 public:
  // Nothing of workload is kept beyond the constructor. local_size > 0: real Horovod's ranks
  // per node, whose fusion threshold is HorovodFusionThresholdBytes's; 0: the knobs' bytes as
  // they are (autotune's executor).
  HorovodCycleSchedule(const Workload& workload, const Knobs& knobs, int world_size,
                       int local_size = 0);

  std::unique_ptr<StepSchedule> Clone() const override;
  Pacing pacing() const override { return Pacing::kNegotiatedCycle; }
  // One background thread runs the cycle's collectives one after another.
  int max_in_flight() const override { return 1; }
  std::vector<FusedCollective> Launch(std::span<const int> newly_ready) override;
  Algorithm AlgorithmOf(Op op) const override;
  CollectiveCopies CopiesOf(const FusedCollective& c) const override;
  GradientCopies gradient_copies() const override { return {}; }
  const std::vector<std::vector<int>>& buckets() const override;
  void Reset() override;
  bool EndStep(std::span<const int> ready_order) override;

  // The fusion decision it launches from.
  const FusionPolicy& fusion() const { return fusion_; }

 private:
  FusionPolicy fusion_;
  bool hierarchical_allreduce_ = false;
  bool hierarchical_allgather_ = false;
};

}  // namespace autotune
