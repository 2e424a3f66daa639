// StallInspector: Horovod's stall check (HOROVOD_STALL_CHECK_TIME_SECONDS,
// HOROVOD_STALL_SHUTDOWN_TIME_SECONDS) across the ranks of an MPI job, working while a rank
// is stopped inside an MPI call.
//
// Every rank runs one inspector thread. It sends this rank's progress (RankProgress: step,
// tensors submitted, events) to rank 0 point to point every beat, non-blocking, on its own
// duplicate of the world communicator, so it never waits in a collective and never matches
// the data plane's messages (this needs MPI_THREAD_MULTIPLE). Rank 0's thread receives the
// beats and judges: when no rank's progress has changed for check_s, it prints ONE warning
// line naming the ranks that have not submitted what others have (with the first tensors
// they hold up) and the ranks not heard from (stopped, swapped out, hung); when the stall
// lasts shutdown_s (> 0), it calls the shutdown callback, which ends the whole job and does
// not return. Progress after a warning ends that stall; a later one warns again.
//
// Limits: the judge is rank 0; a stall of rank 0 itself is not reported (the others only
// wait). Stall time counts from the last progress of any rank, not per tensor as Horovod's.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "traces/stall_settings.h"
#include "traces/status.h"

namespace autotune::executor {

// What this rank has done, written by the playing threads, read by the inspector thread.
class RankProgress {
 public:
  // num_tensors: the workload's tensor count (0 when the work has no tensors).
  explicit RankProgress(int num_tensors);
  // A step begins (warm-up steps included): counts it, forgets the step's submissions.
  void BeginStep();
  // tensor became ready here; remembers the order (the next step is played in the same one).
  void Submitted(int tensor);
  // Anything else that moved: a collective finished, a calibration size measured.
  void Advanced() { events_.fetch_add(1, std::memory_order_relaxed); }

  int64_t steps_begun() const { return steps_begun_.load(std::memory_order_relaxed); }
  int submitted() const { return submitted_.load(std::memory_order_relaxed); }
  int64_t events() const { return events_.load(std::memory_order_relaxed); }
  int num_tensors() const { return static_cast<int>(order_.size()); }
  // The tensor submitted at position i of the latest order (-1 if none yet).
  int OrderAt(int i) const { return order_[i].load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> steps_begun_{0};
  std::atomic<int> submitted_{0};
  std::atomic<int64_t> events_{0};
  std::vector<std::atomic<int>> order_;
};

// The exit status of a job the stall check ended.
inline constexpr int kStallExitCode = 3;

// Rank 0's end of a stalled job: prints "autotune: error: stall: LINE; OUTCOME
// (--stall-shutdown-s S)", notes "reported" for the launcher (executor/launch_status.h) and
// ends the whole job (MPI_Abort) with kStallExitCode.
[[noreturn]] void EndStalledJob(const std::string& line, const std::string& outcome,
                                double shutdown_s);

// Called on rank 0's inspector thread with the one-line stall description when the stall
// has lasted shutdown_s; must end the job (e.g. MPI_Abort) and not return.
using StallShutdown = std::function<void(const std::string& line)>;

struct StallInspectorOptions {
  StallSettings settings;
  std::vector<std::string> tensor_names;  // by tensor index, for the lines
  int warmup_steps = 0;                   // the first units named "warm-up" in the lines
  std::string what = "step";              // the unit of progress named in the lines
  StallShutdown shutdown;                 // rank 0; required when settings.shutdown_s > 0
};

class StallInspector {
 public:
  // Collective over world. With settings.check_s == 0 no thread starts (and Stop is a no-op).
  // progress must outlive the inspector.
  static Status Start(MPI_Comm world, StallInspectorOptions options, const RankProgress* progress,
                      std::unique_ptr<StallInspector>* out);
  // Collective: every rank's thread sends its last beat and stops; rank 0's thread stops
  // once it has them all; the communicator is freed. Idempotent.
  void Stop();
  ~StallInspector();  // Stop()

  StallInspector(const StallInspector&) = delete;
  StallInspector& operator=(const StallInspector&) = delete;

  class Impl;

 private:
  explicit StallInspector(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace autotune::executor
