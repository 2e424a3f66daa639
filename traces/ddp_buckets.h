// PyTorch DDP's step schedule (traces/step_schedule.h; DESIGN.md, "Knobs"; torch's Reducer):
// which gradients are allreduced together, and when. DdpBucketPolicy holds the buckets and their
// progress; DdpBucketSchedule is the plug-in the executor and the simulator's replay run.
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
// - Each gradient is copied into its place in the bucket area when it is ready (the autograd
//   hook); a bucket is a flat allreduce in place in the area; after the last bucket, DDP's
//   finalize copies all bucket bytes back to the gradients. With gradient_as_bucket_view the
//   gradients are views into the buckets: neither copy. On GPUs (NCCL's process group) both
//   copies are kernels the hook only enqueues on the device: no host time (a 25 MB bucket
//   copies in about 20 us at an H100's 1.3 TB/s).
// - The buckets' allreduces go to the process group, which runs several at once where it has
//   several workers (DdpCollectivesInFlight): torch 1.13's ProcessGroupGloo runs its work
//   queue on options->threads = 2 x its devices worker threads (torch/csrc/distributed/c10d/
//   init.cpp: one device per interface in GLOO_SOCKET_IFNAME, one by default), each taking
//   the next queued allreduce when free; ProcessGroupNCCL runs a process group's collectives
//   on one NCCL stream per device, one after another.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "traces/knobs.h"
#include "traces/status.h"
#include "traces/step_schedule.h"
#include "traces/workload.h"

namespace autotune {

// DDP's bucket assignment over tensors in `order` (indices into w.tensors): the buckets, each
// its members in walk order, in the order described above (leftovers last). first_cap_bytes
// and cap_bytes > 0.
std::vector<std::vector<int>> AssignDdpBuckets(const Workload& w, std::span<const int> order,
                                               int64_t first_cap_bytes, int64_t cap_bytes);

// How many bucket allreduces run at once, by what runs them: DDP's gloo process group 2 (its
// worker threads with one network interface), NCCL's 1 (its one stream), autotune's executor 1
// (its one background thread).
int DdpCollectivesInFlight(CollectiveRunner runner);

// OK when DDP can run the workload: every tensor is an allreduce (DDP reduces gradients only);
// else names the first tensor that is not.
Status CheckDdpWorkload(const Workload& w);

// DDP's buckets for one rank over a run: the up-front assignment, rebuilt once after the
// first step. Copyable: a copy carries the progress of the step it was copied in.
class DdpBucketPolicy {
 public:
  // caps > 0. Every tensor is bucketed as an allreduce of its bytes (CheckDdpWorkload says
  // whether DDP can run the workload). Nothing of workload is kept beyond the constructor.
  DdpBucketPolicy(const Workload& workload, int64_t first_cap_bytes, int64_t cap_bytes);

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
  bool rebuilt_ = false;
  std::vector<std::vector<int>> buckets_;
  std::vector<int> bucket_of_;  // per tensor
  // Progress of the step.
  std::vector<int> pending_;  // per bucket: members not yet ready
  int next_bucket_ = 0;       // the first bucket not started
};

// DDP's step schedule: pacing kOnReady; Launch is DdpBucketPolicy::Ready for the knobs' bucket
// caps; every bucket a flat allreduce with no copies of its own, in_flight of them at once;
// the gradients in a bucket area, copied in when ready and back at the step's end by the host
// unless gradient_as_bucket_view or the copies are the device's (host_copies false: NCCL);
// EndStep rebuilds the buckets after the first step.
class DdpBucketSchedule final : public StepSchedule {
 public:
  // Nothing of workload is kept beyond the constructor. in_flight >= 1: the process group's
  // concurrent allreduces (DdpCollectivesInFlight).
  DdpBucketSchedule(const Workload& workload, const Knobs& knobs, int in_flight = 1,
                    bool host_copies = true);

  std::unique_ptr<StepSchedule> Clone() const override;
  Pacing pacing() const override { return Pacing::kOnReady; }
  int max_in_flight() const override { return in_flight_; }
  std::vector<FusedCollective> Launch(std::span<const int> newly_ready) override;
  Algorithm AlgorithmOf(Op /*op*/) const override { return Algorithm::kFlat; }
  CollectiveCopies CopiesOf(const FusedCollective& /*c*/) const override { return {}; }
  GradientCopies gradient_copies() const override;
  const std::vector<std::vector<int>>& buckets() const override { return policy_.buckets(); }
  void Reset() override;
  bool EndStep(std::span<const int> ready_order) override;

  // The buckets and their progress.
  const DdpBucketPolicy& policy() const { return policy_; }

 private:
  DdpBucketPolicy policy_;
  bool bucket_view_ = false;  // gradient_as_bucket_view
  int in_flight_ = 1;
  bool host_copies_ = true;   // the gradient copies take the host's time (not on GPUs)
};

}  // namespace autotune
