// What every importer of a real job's trace (formats/horovod_timeline.h, formats/ddp_trace.h)
// takes and reports: the one options type of `autotune import`.
#pragma once

#include <cstdint>
#include <string>

#include "traces/knobs.h"
#include "traces/topology.h"

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
};

// What an import kept.
struct ImportSummary {
  int steps = 0;               // steps kept
  int tensors = 0;             // tensors per step
  int64_t bytes_per_step = 0;  // sum of the tensors' FusionBytes (allreduce: their bytes)
  double step_ms_median = 0.0;
  int collectives_per_step = 0;  // median fused collectives per kept step
  bool truncated = false;        // the file ended mid-write (a killed job)
};

}  // namespace autotune
