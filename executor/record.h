// RunRecord: `autotune record` as a library call. Every rank of the world calls it with the
// same options; it plays warm-up and measured steps of a workload through the fusion
// engine and rank 0 stores the run (store/store.h).
//
// Order of work, all ranks agreeing on every error (executor/mpi_runtime.h):
//   1. validate the options and the knobs, check that every rank can run the backend
//      (executor/backend_choice.h: for nccl, NCCL built in and a CUDA device visible),
//      resolve (and scale) the workload; detect the node layout. Nothing touches the
//      database before this passes. With like_run, rank 0 then reads that run from the
//      database and derives the workload (executor/like_run.h), which every rank plays.
//   2. rank 0 opens the database; every rank creates the backend (and, for nccl, the device
//      step player: emulated compute as timed kernels, gradients ready by CUDA events);
//      rank 0 creates the run (complete = false).
//   3. warm-up steps (not stored), then measured steps: per step a barrier, the step, then
//      outside the timed region the results are verified (first and last measured step,
//      or every step), every rank's tensor events are gathered to rank 0, and rank 0
//      appends the step (one transaction).
//   3b. online tuning (steps_per_sample > 0, `record --autotune`): the measured steps form
//      samples of steps_per_sample steps; after each, rank 0's `tuning` scores it and picks
//      the next knobs (runtime knobs only), rank 0 stores it as a measured sample of this run
//      (Store::AddSamples), the knobs are broadcast (MPI_Bcast) and every rank rebuilds its
//      fusion engine with them before the next step.
//   3c. from the run's creation to its end every rank runs the stall check; rank 0 notes
//      "run ID STEPS" for the launcher.
//   4. rank 0 finishes the run (complete), or on a stop signal (executor/stop_signal.h)
//      after the current step finishes it incomplete and RunRecord returns Aborted; on a
//      wrong result it finishes it incomplete and returns the mismatch. An incomplete run
//      stores why it ended (RunInfo::end_reason).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "executor/compute.h"
#include "traces/backend_kind.h"
#include "traces/knobs.h"
#include "traces/stall_settings.h"
#include "traces/status.h"
#include "traces/trace.h"
#include "traces/workload.h"

namespace autotune::executor {

// One sample of online tuning: steps_per_sample consecutive measured steps under one setting.
struct TuningSample {
  int64_t run_id = 0;  // the run being recorded (its steps so far are in the database)
  int index = 0;       // 0, 1, ... in play order
  int first_step = 0;  // measured-step index of its first step
  int steps = 0;
  Knobs knobs;                     // the knobs in force
  double bytes = 0.0;              // bytes reduced + gathered over its steps
  double seconds = 0.0;            // sum of its step times
  double score_bytes_per_s = 0.0;  // bytes / seconds (Horovod's score)
  double step_ms_median = 0.0;
  std::vector<double> step_ms;  // its steps' times, in step order
};

// What the tuner decided after a sample.
struct TuningDecision {
  bool store = true;  // add the sample to the database (fidelity measured, run_id = this run)
  Knobs next;         // the next sample's knobs; only the runtime knobs may differ
  bool done = false;  // tuning is over: `next` stays for the rest of the run
  int steps_per_sample = 0;  // > 0: the length of the following samples
  int steps = 0;             // > 0: the run's measured steps in all (at least those played)
};

// Called on rank 0 only, after each sample; a non-OK status stops every rank.
using TuningStep = std::function<Status(const TuningSample& sample, TuningDecision* decision)>;

struct RecordOptions {
  std::string workload = "resnet50";    // built-in name or path to a workload JSON file
  double scale = 1.0;                   // tensor and compute scale, (0, 1]. Default 1.
  int steps = 20;                       // measured steps, >= 1. Default 20.
  int warmup_steps = 3;                 // warm-up steps (not stored), >= 0. Default 3.
  Knobs knobs;                          // the knobs to play with; validated here
  BackendKind backend = BackendKind::kMpi;  // mpi, or nccl (CUDA device memory)
  // Whose semantics the executor plays and the run records: Horovod's background cycle and
  // fusion, or PyTorch DDP's buckets (traces/ddp_buckets.h). Default Horovod.
  Framework framework = Framework::kHorovod;
  std::string db_path = "autotune.db";  // SQLite database, created if missing
  std::string command;                  // command line stored with the run
  bool verify_every_step = false;       // default: first and last measured step only
  bool stop_on_signal = true;           // honour SIGTERM/SIGINT (executor/stop_signal.h)
  MPI_Comm world = MPI_COMM_WORLD;
  int steps_per_sample = 0;  // > 0: online tuning in samples of this many measured steps
  TuningStep tuning;         // rank 0; required when steps_per_sample > 0
  // How the host emulates compute (executor/compute.h). Unset: DefaultComputeMode of the
  // backend (spin on mpi, sleep on nccl, whose GPU computes; spin on nccl is refused).
  std::optional<ComputeMode> compute;
  // > 0: instead of `workload`, play the one derived from this run of db_path (its tensors,
  // compute and ready times; traces/workload_from_trace.h), scaled by `scale`; each rank
  // leads by its rank's median lead when the run had as many ranks. 0: off.
  int64_t like_run = 0;
  // The stall check (executor/stall_inspector.h). Rank 0 ends a stalled job (shutdown_s > 0)
  // after storing the run as incomplete with the reason, printing one line and noting
  // "reported" for the launcher (executor/launch_status.h); the job exits kStallExitCode
  // (executor/stall_inspector.h).
  StallSettings stall;
  // Rank 0, after each measured step is stored: steps stored so far, the steps planned now
  // (online tuning may change them), that step's time in ms. Null: nothing is called.
  std::function<void(int done, int planned, double step_ms)> on_step;
};


struct RecordResult {
  // Rank 0: the stored run with its summary. Other ranks: id, knobs, topology, workload.
  RunInfo run;
  int steps_run = 0;       // measured steps played
  int steps_verified = 0;  // measured steps whose results were checked (all matched if OK)
  int stop_signal = 0;     // signal that stopped the run, 0 if none
  int samples = 0;         // online tuning: samples completed
};

// Returns OK when every measured step ran and matched; Aborted after a stop signal (the
// completed steps stay stored, the run incomplete); the first error otherwise.
Status RunRecord(const RecordOptions& options, RecordResult* result);

// What a run that ended early kept, as every line about it says:
// "run 7 kept 369 of 400 steps, marked incomplete".
std::string KeptText(int64_t run_id, int kept, int planned);

// From outside the run's rank 0 (the --np launcher, the stall check's thread): marks run_id
// of the database at db_path incomplete with reason, unless it completed, and returns what it
// kept (KeptText), or why that could not be done, as one phrase.
std::string EndRunElsewhere(const std::string& db_path, int64_t run_id, int planned,
                            const std::string& reason);

// Step 1 alone (no MPI, this process only): validates the options, checks the backend
// (CheckBackendUsable) and resolves the scaled workload (left empty with like_run).
Status ResolveRecordInputs(const RecordOptions& options, Workload* workload);

}  // namespace autotune::executor
