// The fusion policy: which ready tensors go into which fused collective. This is the
// one piece of code shared by the executor and the simulator (DESIGN.md, "Layers").
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "traces/workload.h"

namespace autotune {

// One negotiated response: a tensor that is ready on every rank.
struct ReadyTensor {
  int tensor = 0;       // index into Workload::tensors
  Op op = Op::kAllreduce;
  DType dtype = DType::kFloat32;
  int64_t bytes = 0;    // bytes it occupies in the fusion buffer (see FusionBytes)
  int group = -1;       // fusion group, -1 = none
};

struct FusedCollective {
  Op op = Op::kAllreduce;
  DType dtype = DType::kFloat32;
  int group = -1;
  int64_t bytes = 0;          // sum of the members' fusion bytes
  std::vector<int> tensors;   // member tensor indices, in response order
};

// Bytes a tensor occupies in the fusion buffer: its own bytes for allreduce, its
// gathered output (bytes * world_size) for allgather.
int64_t FusionBytes(const TensorSpec& t, int world_size);

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
  // Adds tensors that became ready on every rank; returns those released now, in
  // ascending tensor order.
  std::vector<int> Admit(std::span<const int> newly_ready);
  // Forgets all progress (start of a new step).
  void Reset();

 private:
  std::vector<int> group_of_;
  std::vector<int> group_size_;
  std::vector<int> group_ready_;
  std::vector<std::vector<int>> held_;
};

// Builds the ReadyTensor responses for the given tensor indices (ascending) of w.
std::vector<ReadyTensor> MakeResponses(const Workload& w, std::span<const int> tensors,
                                       std::span<const int> group_of, int world_size);

}  // namespace autotune
