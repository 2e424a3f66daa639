// Trace: what one run recorded. The executor fills it, the store persists it, the
// simulator replays it. Times are microseconds from the start of the step on the rank
// that measured them (every step starts after a barrier).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "traces/backend_kind.h"
#include "traces/framework.h"
#include "traces/knobs.h"
#include "traces/status.h"
#include "traces/topology.h"
#include "traces/workload.h"

namespace autotune {

// One tensor on one rank in one step.
struct TensorEvent {
  int rank = 0;
  int tensor = 0;          // index into Workload::tensors
  double ready_us = 0.0;   // gradient ready (handed to the background thread)
  double done_us = 0.0;    // result copied out (reduction finished for this tensor)
};

// One background cycle that had work (recorded on rank 0, the coordinator).
struct CycleRecord {
  int rank = 0;
  int cycle = 0;                  // index within the step
  double start_us = 0.0;          // cycle start
  double negotiate_end_us = 0.0;  // negotiation finished (responses known)
  int submitted = 0;              // tensors this rank newly offered in this cycle
  int cache_hits = 0;             // responses agreed through the cache bit-vector
  int responses = 0;              // tensors agreed ready on all ranks this cycle
  int collectives = 0;            // fused collectives launched by this cycle
};

enum class Algorithm { kFlat, kHierarchical };
const char* AlgorithmName(Algorithm a);  // "flat" | "hierarchical"

// One fused collective (recorded on rank 0; every rank runs the same ones).
struct CollectiveRecord {
  int rank = 0;
  int seq = 0;              // order within the step
  int cycle = 0;            // cycle that launched it
  Op op = Op::kAllreduce;
  Algorithm algorithm = Algorithm::kFlat;
  int64_t bytes = 0;        // fusion buffer bytes
  std::vector<int> tensors; // member tensor indices
  double start_us = 0.0;          // copy-in starts
  double copy_in_end_us = 0.0;    // collective starts
  double comm_end_us = 0.0;       // collective finished
  double end_us = 0.0;            // copy-out finished
};

struct StepTrace {
  int step = 0;                 // 0-based over measured steps (warm-up steps are not stored)
  double step_ms = 0.0;         // wall time of the step, max over ranks
  double backward_start_us = 0.0;  // when backward compute started (rank 0)
  int64_t bytes = 0;            // bytes reduced + gathered in the step (score numerator)
  double score_bytes_per_s = 0.0;  // ScoreBytesPerSecond of this step alone
  std::vector<TensorEvent> tensors;       // all ranks
  std::vector<CycleRecord> cycles;        // rank 0
  std::vector<CollectiveRecord> collectives;  // rank 0
};

enum class RunKind {
  kMeasured,   // recorded by the executor
  kSimulated,  // a replay of a measured or imported run's trace under other knobs
  kImported,   // a real job's timeline read in (formats/horovod_timeline.h): measured too
};
const char* RunKindName(RunKind kind);  // "measured" | "simulated" | "imported"
// True for the kinds that measured the job (measured, imported): their traces can be
// replayed and their complete runs are measured samples.
bool IsMeasuredKind(RunKind kind);
// Inverse of RunKindName; InvalidArgument naming the value otherwise.
Status ParseRunKind(const std::string& name, RunKind* out);

// The machine the ranks of a run shared: CPU cores of one host (0 = not known) and how many
// nodes of the topology one host holds (an emulated cluster puts several on one machine), so
// ranks_per_node * nodes_per_host ranks share `cores` cores.
struct HostShape {
  int cores = 0;
  int nodes_per_host = 1;
  bool operator==(const HostShape&) const = default;
};

struct RunInfo {
  int64_t id = 0;
  std::string created_at;     // UTC, ISO 8601
  RunKind kind = RunKind::kMeasured;
  std::string command;        // the command line that made it
  Workload workload;
  double scale = 1.0;         // --scale the workload was played at (already applied)
  Knobs knobs;
  Topology topology;
  BackendKind backend = BackendKind::kMpi;
  Framework framework = Framework::kHorovod;  // whose fusion policy and knobs the run has
  std::string hardware;            // CPU / GPU model, library versions
  HostShape host;                  // the cores the ranks shared (compute slowed by comm)
  int steps_planned = 0;
  int warmup_steps = 0;
  // Summary, filled when the run finishes (or is found incomplete).
  bool complete = false;
  int steps_recorded = 0;
  double score_bytes_per_s = 0.0;  // ScoreBytesPerSecond over the stored steps
  double step_ms_median = 0.0;
  double step_ms_p95 = 0.0;
  int64_t source_run = 0;     // simulated runs: the trace they replayed, else 0
  std::string end_reason;     // why an incomplete run ended (one line); "" otherwise
  // Imported runs: the job's production step time (without its timeline or trace) at the
  // same setting, ms, when the user gave it; 0 = not known.
  double untraced_step_ms = 0.0;
  // Imported runs: the traced job's own step time (its wall clock per step while the timeline
  // or trace was written, e.g. train.py's step log), ms, when the user gave it; 0 = not known.
  // A timeline's step can read short of it (what the job does outside the timeline's view).
  double traced_step_ms = 0.0;
  // An imported run: the hash of what it was imported from (the file's bytes and the
  // import's options, ImportSourceHash), by which a second import of it is recognised; "" else.
  std::string source_hash;
};

// The collective library the run's collectives ran in, which a calibration of it measures: gloo
// for a DDP job on CPUs (its backend is mpi: host memory), else the run's backend.
BackendKind CollectiveLibrary(const RunInfo& run);

struct Trace {
  RunInfo run;
  std::vector<StepTrace> steps;
};

// Median and p95 (nearest rank) of values; 0 for an empty list.
double Median(std::vector<double> values);
// The arithmetic mean of values; 0 for an empty list.
double Mean(const std::vector<double>& values);
double Percentile(std::vector<double> values, double p);

}  // namespace autotune
