// The run sections of `autotune report`: the table of runs, one run's step timeline and step-
// time distribution, and two runs compared (the statistic and verdict of `autotune compare`).
#pragma once

#include <cstdint>
#include <vector>

#include "store/store.h"
#include "tools/report/page.h"
#include "traces/status.h"
#include "traces/trace.h"

namespace autotune::cli {

// Every run of the database as a sortable table: id, kind, workload, scale, topology,
// backend, knobs, score, step time median and p95, complete.
ReportSection RunsSection(const std::vector<RunInfo>& runs);

// The step of `trace` whose step time is closest to the run's median (the first of ties);
// -1 when the trace has no steps.
int MedianStepIndex(const Trace& trace);

// Run `run_id`: the timeline of its median step (per rank: gradients ready; per recording
// rank: each cycle's negotiation and each fused collective's copy-in, collective and copy-out
// with its bytes) and the histogram of its step times. InvalidArgument when it has no steps.
Status RunSection(Store& store, int64_t run_id, ReportSection* section);

// Runs a and b compared as `autotune compare a b` does (bootstrap of the median step-time
// ratio, its verdict): both step-time distributions and the speedup with its interval.
Status CompareSection(Store& store, int64_t a, int64_t b, ReportSection* section);

}  // namespace autotune::cli
