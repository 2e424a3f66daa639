// The step schedule: one framework's rules for the communication of one rank's step (DESIGN.md,
// "Rules of the house"). It says what is launched when gradients become ready (the fused
// collectives or buckets), how launches are paced, with which algorithm each runs, what is
// copied in and out around it, and what ends the step. The executor (executor/fusion_engine.h)
// and the simulator's replay (simulator/replay.h) both run a step from it and hold no rule of a
// framework of their own: they differ only in the mechanics (real buffers and threads, or a
// modeled stream).
//
// Two plug-ins, each beside the parts it is built on:
// - Horovod's cycles (HorovodCycleSchedule, traces/fusion_policy.h): a negotiated background
//   cycle; greedy fusion of what each cycle agreed (grouped when num_groups > 0); copy in and
//   out of the fusion buffer; hierarchical or flat per the knobs.
// - DDP's buckets (DdpBucketSchedule, traces/ddp_buckets.h): a bucket starts as soon as its
//   gradients are ready; a flat allreduce in place in the bucket area; the finalize copy-back;
//   buckets rebuilt after the first step.
// MakeStepSchedule is the one place that picks a plug-in from the framework.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "traces/framework.h"
#include "traces/knobs.h"
#include "traces/trace.h"
#include "traces/workload.h"

namespace autotune {

// One launch: a fused collective (Horovod) or a bucket (DDP).
struct FusedCollective {
  Op op = Op::kAllreduce;
  DType dtype = DType::kFloat32;
  int group = -1;
  int64_t bytes = 0;         // sum of the members' fusion bytes (FusionBytes)
  std::vector<int> tensors;  // member tensor indices, in response (bucket) order
};

// How launches are paced.
enum class Pacing {
  // A background cycle every cycle_time_ms negotiates what became ready on every rank and
  // launches from what was agreed (Horovod). Launch() takes one cycle's agreed tensors.
  kNegotiatedCycle,
  // Launches start as soon as this rank's gradients are ready, no cycle, no negotiation (DDP).
  // Launch() takes each gradient as it becomes ready.
  kOnReady,
};

// The copies around one launched collective.
struct CollectiveCopies {
  bool copy_in = false;   // at launch: the members' inputs into the collective's buffer
  bool copy_out = false;  // after the collective: the results into the members' outputs
  // The buffer is the one member's own output (copy_in copies its input there; no copy_out).
  bool in_output = false;
};

// Where a step's gradients live and what is copied besides each collective's own copies.
struct GradientCopies {
  // Every gradient has its place in one bucket area (the buckets back to back in launch order,
  // each its members back to back) and every collective runs in place on its bucket (DDP).
  // false: each gradient stays in its own tensor (Horovod: collectives copy through a fusion
  // buffer).
  bool bucket_area = false;
  // With bucket_area: a gradient is copied into its place when it becomes ready (DDP's autograd
  // hook); false: it is produced there (gradient_as_bucket_view).
  bool copy_in_when_ready = false;
  // After the last collective, all bucket bytes are copied back to the gradients (DDP's
  // finalize); false: the results are read where the collectives left them.
  bool copy_back_at_step_end = false;
};

// When the phases of one launched collective ended, microseconds from the step start.
struct CollectivePhases {
  double start_us = 0.0;
  double copy_in_end_us = 0.0;  // = start_us without a copy-in
  double comm_end_us = 0.0;
  double end_us = 0.0;  // copy-out finished (= comm_end_us without one)
};

// One framework's step schedule for one rank. Holds the progress of the step in which it is;
// Clone() carries that progress.
class StepSchedule {
 public:
  virtual ~StepSchedule() = default;
  virtual std::unique_ptr<StepSchedule> Clone() const = 0;

  virtual Pacing pacing() const = 0;

  // newly_ready: the tensors that became ready since the last call (any order, each at most
  // once per step): for kNegotiatedCycle, those one cycle agreed on every rank; for kOnReady,
  // this rank's gradients as they become ready. Returns the collectives to launch now, in
  // launch order (empty when nothing is released).
  virtual std::vector<FusedCollective> Launch(std::span<const int> newly_ready) = 0;

  // How many launched collectives may run at once: the communication library's worker
  // threads or streams (launches wait for a free one in launch order). 1: one stream, each
  // starts when the previous one ended. Concurrent collectives share the link
  // (simulator/shared_link.h says how).
  virtual int max_in_flight() const = 0;
  // The algorithm a collective of op runs with.
  virtual Algorithm AlgorithmOf(Op op) const = 0;
  // The copies around collective c (one that Launch returned).
  virtual CollectiveCopies CopiesOf(const FusedCollective& c) const = 0;
  virtual GradientCopies gradient_copies() const = 0;
  // With gradient_copies().bucket_area: the buckets in launch order, each its members (the
  // area's layout); empty otherwise.
  virtual const std::vector<std::vector<int>>& buckets() const = 0;

  // Forgets the progress of the step (start of a new one).
  virtual void Reset() = 0;
  // Ends a step whose gradients became ready in ready_order (every tensor once; rank 0's, which
  // all ranks must agree on) and forgets its progress. Returns true when buckets() changed
  // (DDP rebuilds its buckets after the first step).
  virtual bool EndStep(std::span<const int> ready_order) = 0;
};

// What runs a job's collectives: autotune's executor (its one background thread, one
// collective at a time), or the framework's own communication library, on host memory (DDP's
// gloo process group) or on GPUs (NCCL).
enum class CollectiveRunner { kExecutor, kHostLibrary, kNcclLibrary };
// A stored run's: an imported run is a real job (its library, by its backend); a measured one
// was run by the executor.
CollectiveRunner RunnerOf(const RunInfo& run);

// The schedule of `framework` for knobs on a job of world_size ranks whose collectives `runner`
// runs, at the start of the first step: Horovod's (fusion threshold, num_groups, cycle,
// hierarchical knobs) or DDP's (bucket caps, gradient_as_bucket_view; concurrent buckets by
// runner, DdpCollectivesInFlight). Nothing of workload is kept. DDP buckets every tensor as an
// allreduce of its bytes; CheckDdpWorkload says whether DDP can run the workload.
// local_size: ranks per node, by which real Horovod rounds its fusion threshold
// (HorovodFusionThresholdBytes); not used for the executor's runner.
std::unique_ptr<StepSchedule> MakeStepSchedule(
    const Workload& workload, const Knobs& knobs, Framework framework, int world_size,
    CollectiveRunner runner = CollectiveRunner::kExecutor, int local_size = 0);
// The schedule of run's job (its workload, framework and runner) for knobs on `topology`.
std::unique_ptr<StepSchedule> MakeRunSchedule(const RunInfo& run, const Knobs& knobs,
                                              const Topology& topology);

// The record of collective c, run with algorithm in the given phases: the seq-th collective of
// its step on rank, launched by cycle `cycle` (on-ready pacing: its launch index, DDP's bucket
// index).
CollectiveRecord RecordOf(const FusedCollective& c, Algorithm algorithm,
                          const CollectivePhases& phases, int rank, int seq, int cycle);

// Records a step-end copy-back (GradientCopies::copy_back_at_step_end) that finished at end_us:
// it ends the step's last collective and every tensor.
void RecordCopyBack(double end_us, std::vector<CollectiveRecord>* collectives,
                    std::vector<TensorEvent>* tensors);

}  // namespace autotune
