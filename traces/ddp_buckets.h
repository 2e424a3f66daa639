// PyTorch DDP's gradient buckets (DESIGN.md, "Knobs"; torch's Reducer): which gradients are
// allreduced together, and when. The second policy of the one fusion code: FusionPolicy
// (traces/fusion_policy.h) holds one of these for a DDP run, and the executor and the
// simulator both reach it only through FusionPolicy::Cycle and FusionPolicy::EndStep.
//
// DDP's rules, as torch implements them:
// - Assignment (compute_bucket_assignment_by_size): walk the parameters in the given order;
//   per dtype, add each to that dtype's open bucket and close the bucket once its bytes reach
//   the current limit: the first limit (first_bucket_mb) for the dtype's first bucket, the
//   cap (bucket_cap_mb) after. A parameter is never split, so a bucket can exceed its limit
//   by its last parameter. Open buckets are closed at the end, in dtype order of appearance.
// - Up front, the walk is over the registration order and the bucket list is then reversed
//   (the parameters defined first, ready last, get the small first bucket, which runs last).
// - After the first step, buckets are rebuilt once from the order gradients became ready
//   (rank 0's, which DDP broadcasts): the first-ready gradients form the small first bucket.
// - A bucket's allreduce starts when its last gradient is ready, strictly in bucket order.
// - No background cycle, no negotiation, no response cache.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "traces/status.h"
#include "traces/workload.h"

namespace autotune {

struct FusedCollective;

// DDP's bucket assignment over tensors in `order` (indices into w.tensors): the buckets, each
// its members in walk order, in the order described above (leftovers last). first_cap_bytes
// and cap_bytes > 0.
std::vector<std::vector<int>> AssignDdpBuckets(const Workload& w, std::span<const int> order,
                                               int64_t first_cap_bytes, int64_t cap_bytes);

// OK when DDP can run the workload: every tensor is an allreduce (DDP reduces gradients only);
// else names the first tensor that is not.
Status CheckDdpWorkload(const Workload& w);

// DDP's buckets for one rank over a run: the up-front assignment, rebuilt once after the
// first step. Copyable: a copy carries the progress of the step it was copied in.
class DdpBucketPolicy {
 public:
  // REQUIRES: CheckDdpWorkload(workload) is OK; caps > 0. Nothing of workload is kept beyond
  // the constructor. bucket_view: gradient_as_bucket_view (the collectives say no copy).
  DdpBucketPolicy(const Workload& workload, int64_t first_cap_bytes, int64_t cap_bytes,
                  bool bucket_view);

  // Gradients that became ready since the last call (any order, each at most once per step).
  // Returns the buckets whose allreduce starts now, in bucket order: every bucket whose
  // members are all ready and whose predecessors have all started.
  std::vector<FusedCollective> Ready(std::span<const int> newly_ready);
  // Ends a step in which the gradients became ready in `ready_order` (every tensor once):
  // after the first step, rebuilds the buckets from it, as DDP does once. Forgets progress.
  void EndStep(std::span<const int> ready_order);
  // Forgets the progress of the step (buckets kept).
  void Reset();

  // The buckets in launch order, each its members.
  const std::vector<std::vector<int>>& buckets() const { return buckets_; }
  bool rebuilt() const { return rebuilt_; }

 private:
  void Index();

  std::vector<int64_t> bytes_;  // per tensor
  std::vector<DType> dtype_;    // per tensor
  int64_t first_cap_bytes_ = 0;
  int64_t cap_bytes_ = 0;
  bool bucket_view_ = false;
  bool rebuilt_ = false;
  std::vector<std::vector<int>> buckets_;
  std::vector<int> bucket_of_;  // per tensor
  // Progress of the step.
  std::vector<int> pending_;  // per bucket: members not yet ready
  int next_bucket_ = 0;       // the first bucket not started
};

}  // namespace autotune
