// FusionEngine: a framework's step schedule (traces/step_schedule.h) played on one rank, on real
// buffers. The schedule decides what to launch, with which algorithm and which copies; the
// engine supplies the mechanics and never asks which framework it plays.
//
// Threading model: the engine owns one background thread. During a step (BeginStep ..
// step finished) it is the only thread of the process that calls MPI. Between steps it
// sleeps, and the caller's thread may use MPI (MPI_THREAD_SERIALIZED is enough: the
// hand-over goes through the engine's mutex, which orders the two threads' MPI calls).
//
// Pacing (StepSchedule::pacing, one branch in RunStep):
// - kNegotiatedCycle (Horovod): every cycle_time_ms the thread takes the tensors marked ready,
//   negotiates them (executor/negotiation.h) and launches what the schedule makes of the agreed
//   ones. All ranks run the same cycles in lock step (each cycle's negotiation is collective)
//   and leave a step after the same cycle: the one whose collectives finished the last tensor.
// - kOnReady (DDP): the thread wakes for every gradient marked ready and launches what the
//   schedule releases, in order: no cycle, no negotiation, no cache.
//
// Buffers (StepSchedule::gradient_copies):
// - Collectives through the fusion buffer (executor/fused_executor.h), with the copies
//   FusionBufferCopies says.
// - A bucket area (executor/bucket_area.h): each collective runs in place on its bucket.
//   MarkReady copies the gradient into its place on the caller's thread when the plan says so
//   (DDP's autograd hook), else the gradients are produced there: PrepareStep stages them and
//   AfterStep hands the results to the outputs, both outside the timed step. After the last
//   collective the step-end copy-back (DDP's finalize) runs when the plan says so. When
//   EndStep changes the buckets (DDP's rebuild after the first step, from the ready order,
//   which the player makes the same on every rank, so no broadcast is needed), PrepareStep
//   lays the area out again.
//
// Recorded per step: every tensor's ready/done times on this rank; the cycles that had
// work and the fused collectives (every rank records them; rank 0's are the ones stored).
// On-ready pacing records no cycles; a collective's cycle is its launch index (DDP's bucket
// index); the step-end copy-back ends the last collective and every tensor (RecordCopyBack).
// Not modeled: DDP's division of each bucket by the world size before the allreduce (the
// executor checks the sums).
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "executor/backend.h"
#include "executor/bucket_area.h"
#include "executor/fused_executor.h"
#include "executor/layout.h"
#include "executor/negotiation.h"
#include "executor/stall_inspector.h"
#include "executor/tensor_memory.h"
#include "traces/framework.h"
#include "traces/knobs.h"
#include "traces/step_schedule.h"
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
  // framework: whose step schedule it plays (MakeStepSchedule; DDP's on host-memory backends
  // only).
  static Status Create(Backend* backend, const NodeLayout* layout, const Workload* workload,
                       TensorMemory* memory, ControlChannel* control, const Knobs& knobs,
                       std::unique_ptr<FusionEngine>* out,
                       Framework framework = Framework::kHorovod);
  // Stops the background thread. REQUIRES: no step in progress.
  ~FusionEngine();

  // Starts a step whose times count from origin. REQUIRES: the previous step finished.
  void BeginStep(SteadyClock::time_point origin);
  // Hands a gradient to the background thread (ready now). Thread-safe. With a bucket area
  // that copies gradients in when ready, also copies it into its place, on the caller's thread;
  // a failed copy is what WaitStepFinished returns (when the step itself succeeded).
  void MarkReady(int tensor);
  // Outside the timed step, before it / after it: with a bucket area, lays out rebuilt buckets,
  // and where the gradients are produced in the area stages them there / hands the results to
  // the outputs. No-ops without a bucket area. REQUIRES: PrepareStep before every BeginStep.
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
  // One step: the launches as the schedule paces them, the step-end copy-back, EndStep.
  Status RunStep();
  // Negotiated pacing: cycles until every tensor is done.
  Status RunCycles();
  Status RunCycle(int cycle, const std::vector<int>& newly_ready);
  // On-ready pacing: every gradient handed to the schedule as it arrives.
  Status RunOnReady();
  // Moves the tensors marked ready since the last call into *newly_ready (and ready_order_).
  // wait: blocks until there is one; Aborted when the engine shuts down meanwhile.
  Status TakeReady(bool wait, std::vector<int>* newly_ready);
  // Runs collective c and records it as launched by `cycle`.
  Status Launch(const FusedCollective& c, int cycle);

  Backend* backend_ = nullptr;
  RankProgress* progress_ = nullptr;
  const NodeLayout* layout_ = nullptr;
  const Workload* workload_ = nullptr;
  Knobs knobs_;
  std::unique_ptr<StepSchedule> schedule_;   // the background thread's during a step
  GradientCopies gradient_copies_;           // the schedule's
  std::unique_ptr<FusedExecutor> executor_;  // without a bucket area
  std::unique_ptr<BucketArea> area_;         // with one
  std::unique_ptr<Negotiator> negotiator_;   // negotiated pacing only; null on ready
  std::vector<int> ready_order_;             // this step's MarkReady order
  bool relayout_ = false;                    // changed buckets not yet laid out in the area

  // Shared with the player thread, under mu_.
  std::mutex mu_;
  std::condition_variable cv_;
  bool shutdown_ = false;
  bool step_finished_ = true;  // no step, or the background thread is done with it
  std::vector<int> ready_queue_;
  std::vector<double> ready_us_;  // per tensor, set by MarkReady
  Status step_status_;
  Status ready_copy_status_;  // the first failed copy into the bucket area this step (MarkReady)
  SteadyClock::time_point origin_;

  // Owned by the background thread during a step; read by the player after it finished.
  EngineStepRecord record_;
  int done_count_ = 0;
  int collective_seq_ = 0;
  std::thread thread_;
};

}  // namespace autotune::executor
