// What every importer of a real job's trace (formats/horovod_timeline.h, formats/ddp_trace.h)
// takes and reports: the one options type of `autotune import`.
#pragma once

#include <cstdint>
#include <string>

#include "traces/knobs.h"
#include "traces/status.h"
#include "traces/topology.h"
#include "traces/trace.h"

namespace autotune {

// How to read a real job's trace into an imported run.
struct ImportOptions {
  std::string source;  // file name, prefixes every error
  // nodes/ranks_per_node; either 0 = from the rank ticks (world size / the other one, or
  // one node when both are 0)
  Topology topology;
  Knobs knobs;                // the knobs the job ran under (the timeline does not carry them)
  int warmup_steps = 1;       // leading steps left out
  int max_steps = 0;          // steps kept after the warm-up at most; 0 = all
  std::string command;        // RunInfo::command of the imported run
  std::string workload_name;  // the workload's name; empty = the file name's stem
  // A Horovod timeline's ready log (formats/horovod_ready_log.h): the folder of each rank's
  // gradient-ready times; empty = none (the times the timeline's cycles bound are taken).
  std::string ready_log;
};

// How a DDP trace's ranks' times were put on rank 0's clock (formats/ddp_trace.h).
struct RankClocks {
  enum Kind {
    kOwn,              // not: each rank's times from its own step start
    kOneKernel,        // the files name one kernel's monotonic clock
    kMeasuredOffsets,  // several kernels: the offset of each rank off rank 0's kernel measured
  };
  Kind kind = kOwn;
  double offset_error_us = 0.0;  // kMeasuredOffsets: the largest bound on an offset's error
};

// What an import kept.
struct ImportSummary {
  int steps = 0;               // steps kept
  int tensors = 0;             // tensors per step
  int64_t bytes_per_step = 0;  // sum of the tensors' FusionBytes (allreduce: their bytes)
  double step_ms_median = 0.0;
  int collectives_per_step = 0;  // median fused collectives per kept step
  bool truncated = false;        // the file ended mid-write (a killed job)
  RankClocks clocks;  // a DDP trace's: how its ranks' times were put on rank 0's clock
  // A Horovod timeline's ready log: the tensors it gave every rank's ready times of (0: no
  // log), and how much earlier than the timeline's reading it put the ranks' ready times,
  // on average and at most, over the kept steps' tensors and ranks (ms).
  int ready_logged_tensors = 0;
  double ready_log_mean_earlier_ms = 0.0, ready_log_max_earlier_ms = 0.0;
};

// The source_hash of an imported run (RunInfo::source_hash): 16 hex digits of a 64-bit FNV-1a
// hash over `content` (the source's bytes, every file's in order) and the options that shape
// the run (topology, warm-up, step limit, workload name, knobs): the same file imported the
// same way hashes the same. Not cryptographic: it recognises a repeat, not an attack.
std::string ImportSourceHash(const std::string& content, const ImportOptions& options);

// Plausibility limits every imported trace is held to (README, "Limits of input files"): a
// step lasts more than 0 and at most a day, and every time inside a step (readiness, a
// collective's start and end) is finite and within a day of the step's start.
inline constexpr double kMaxImportedStepMs = 24.0 * 3600.0 * 1e3;

// OK when `trace` (an importer's result) keeps the limits above, the workload's name (and
// every tensor's) is one ValidateName accepts and the workload reads back as stored; else
// one line "SOURCE: step K: ..." or "SOURCE: workload ...".
Status CheckImportedTrace(const Trace& trace, const std::string& source);

}  // namespace autotune
