// FusionEngine: Horovod's background thread on one rank, on real buffers.
//
// Threading model: the engine owns one background thread. During a step (BeginStep ..
// step finished) it is the only thread of the process that calls MPI: every cycle_time_ms
// it takes the tensors marked ready, negotiates (executor/negotiation.h), lets the shared
// fusion policy (traces/fusion_policy.h, FusionPolicy::Cycle) decide the fused
// collectives, and runs them (executor/fused_executor.h). Between steps it
// sleeps, and the caller's thread may use MPI (MPI_THREAD_SERIALIZED is enough: the
// hand-over goes through the engine's mutex, which orders the two threads' MPI calls).
//
// All ranks run the same cycles in lock step (each cycle's negotiation is collective) and
// leave a step after the same cycle: the one whose collectives finished the last tensor.
//
// Recorded per step: every tensor's ready/done times on this rank; the cycles that had
// work and the fused collectives (every rank records them; rank 0's are the ones stored).
//
// For a DDP run (Framework::kDdp) the engine plays PyTorch DDP's Reducer instead: the
// gradients live in one bucket area (the buckets back to back in bucket order, each its
// members back to back). MarkReady copies the gradient into its bucket on the caller's
// thread (DDP copies in the autograd hook), unless gradient_as_bucket_view; the background
// thread starts each bucket the shared policy (traces/ddp_buckets.h) releases, in bucket
// order, as one flat allreduce in place in the area: no cycle, no negotiation, no cache.
// After the last bucket it copies the results back to the gradients (DDP's finalize) unless
// gradient_as_bucket_view. After the first step the buckets are rebuilt from the ready
// order, which the player makes the same on every rank (tensor index order), so no
// broadcast is needed. With gradient_as_bucket_view the gradients are produced in the area:
// PrepareStep stages them there and AfterStep hands the results to the outputs, both
// outside the timed step. Recorded: one CollectiveRecord per bucket (cycle = its bucket
// index, copy_in_end = start, comm_end after the allreduce, end = comm_end, or the end of
// the finalize copy for the last bucket), no cycles. Not modeled: DDP's division of each
// bucket by the world size before the allreduce (the executor checks the sums).
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "executor/backend.h"
#include "executor/fused_executor.h"
#include "executor/layout.h"
#include "executor/negotiation.h"
#include "executor/stall_inspector.h"
#include "executor/tensor_memory.h"
#include "traces/fusion_policy.h"
#include "traces/knobs.h"
#include "traces/trace.h"
#include "traces/workload.h"

namespace autotune::executor {

// What the engine recorded in one step on this rank (times from the step origin).
struct EngineStepRecord {
  std::vector<TensorEvent> tensors;  // one per tensor, index order
  std::vector<CycleRecord> cycles;   // cycles with work
  std::vector<CollectiveRecord> collectives;
  int cycles_run = 0;  // all cycles, idle ones included
};

class FusionEngine {
 public:
  // Everything passed must outlive the engine. control: the negotiation transport.
  // framework: Horovod's engine or DDP's (host-memory backends only for DDP).
  static Status Create(Backend* backend, const NodeLayout* layout, const Workload* workload,
                       TensorMemory* memory, ControlChannel* control, const Knobs& knobs,
                       std::unique_ptr<FusionEngine>* out,
                       Framework framework = Framework::kHorovod);
  // Stops the background thread. REQUIRES: no step in progress.
  ~FusionEngine();

  // Starts a step whose times count from origin. REQUIRES: the previous step finished.
  void BeginStep(SteadyClock::time_point origin);
  // Hands a gradient to the background thread (ready now). Thread-safe. DDP: also copies it
  // into its bucket, on the caller's thread.
  void MarkReady(int tensor);
  // Outside the timed step, before it / after it: DDP places rebuilt buckets in the area, and
  // with gradient_as_bucket_view stages the gradients there / hands the results to the
  // outputs. No-ops for Horovod. REQUIRES: PrepareStep before every BeginStep of a DDP run.
  Status PrepareStep();
  Status AfterStep();
  // Reports steps begun, tensors submitted and collectives finished to progress (for the
  // stall check; null: not reported). REQUIRES: no step in progress; progress outlives it.
  void set_progress(RankProgress* progress) { progress_ = progress; }
  // Blocks until every tensor of the step is done (or the background thread failed) and
  // the background thread has left MPI; returns its status and the step's records.
  Status WaitStepFinished(EngineStepRecord* record);

 private:
  FusionEngine() = default;
  void Loop();
  Status RunStep();
  Status RunCycle(int cycle, const std::vector<int>& newly_ready);
  // DDP's step: buckets as their gradients arrive, then the finalize copy-out.
  Status RunDdpStep();
  Status RunBucket(const FusedCollective& c, std::vector<double>* comm_end_of_tensor);
  // Places the current buckets in the area (area_offset_, bucket_offset_).
  void LayOutBuckets();
  // The copies between the gradients (inputs or outputs) and their places in the area.
  std::vector<CopySpan> AreaCopies(bool to_area);

  Backend* backend_ = nullptr;
  RankProgress* progress_ = nullptr;
  const NodeLayout* layout_ = nullptr;
  const Workload* workload_ = nullptr;
  Knobs knobs_;
  std::unique_ptr<FusedExecutor> executor_;
  std::unique_ptr<Negotiator> negotiator_;
  std::optional<FusionPolicy> policy_;  // the background thread's during a step
  Framework framework_ = Framework::kHorovod;
  std::unique_ptr<Buffer> area_;        // DDP: the buckets
  std::vector<int64_t> area_offset_;    // DDP: per tensor, its place in the area
  std::vector<int> ready_order_;        // DDP: this step's MarkReady order
  bool relayout_ = false;               // DDP: rebuilt buckets not yet placed in the area
  TensorMemory* memory_ = nullptr;

  // Shared with the player thread, under mu_.
  std::mutex mu_;
  std::condition_variable cv_;
  bool shutdown_ = false;
  bool step_finished_ = true;  // no step, or the background thread is done with it
  std::vector<int> ready_queue_;
  std::vector<double> ready_us_;  // per tensor, set by MarkReady
  Status step_status_;
  SteadyClock::time_point origin_;

  // Owned by the background thread during a step; read by the player after it finished.
  EngineStepRecord record_;
  int done_count_ = 0;
  int collective_seq_ = 0;
  std::thread thread_;
};

}  // namespace autotune::executor
