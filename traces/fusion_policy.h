// The fusion policy: which ready tensors go into which fused collective. FusionPolicy is
// the one piece of code the executor and the simulator's replay both call (DESIGN.md,
// "Layers"); neither assembles the decision from its parts. It has two policies, one per
// framework: Horovod's (greedy packing of the tensors each background cycle negotiated) and
// PyTorch DDP's (fixed gradient buckets, traces/ddp_buckets.h).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "traces/ddp_buckets.h"
#include "traces/framework.h"
#include "traces/knobs.h"
#include "traces/workload.h"

namespace autotune {

struct FusedCollective {
  Op op = Op::kAllreduce;
  DType dtype = DType::kFloat32;
  int group = -1;
  int64_t bytes = 0;         // sum of the members' fusion bytes
  std::vector<int> tensors;  // member tensor indices, in response order
  // The members already live in the fused buffer (DDP's gradient_as_bucket_view): no copy in
  // or out.
  bool bucket_view = false;
};

// Bytes a tensor occupies in the fusion buffer: its own bytes for allreduce, its
// gathered output (bytes * world_size) for allgather.
int64_t FusionBytes(const TensorSpec& t, int world_size);

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

// The fusion decision for one rank's step: Horovod's cycle by cycle, or DDP's bucket by
// bucket. Copyable: a copy carries the progress of the step it was copied in.
class FusionPolicy {
 public:
  // The policy of `framework` for knobs: Horovod's (threshold, num_groups) or DDP's (bucket
  // caps, gradient_as_bucket_view). REQUIRES for kDdp: CheckDdpWorkload(workload) is OK.
  FusionPolicy(const Workload& workload, const Knobs& knobs, Framework framework,
               int world_size);

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
  // DDP: newly_ready are the gradients that became ready on this rank since the last call
  // (call it as they become ready); the result is the buckets whose allreduce starts now
  // (DdpBucketPolicy::Ready).
  std::vector<FusedCollective> Cycle(std::span<const int> newly_ready);
  // Forgets every held tensor (start of a new step).
  void Reset();
  // Ends a step whose gradients became ready in ready_order (every tensor once; rank 0's,
  // which all ranks must agree on): DDP rebuilds its buckets after the first step. Forgets
  // progress, like Reset.
  void EndStep(std::span<const int> ready_order);

  Framework framework() const { return ddp_ ? Framework::kDdp : Framework::kHorovod; }
  // DDP's buckets in launch order; nullptr for Horovod.
  const DdpBucketPolicy* ddp() const { return ddp_ ? &*ddp_ : nullptr; }

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
  std::optional<DdpBucketPolicy> ddp_;  // set for DDP: then the members above are unused
};

}  // namespace autotune
