// One round of the offline search (`autotune search`, and each round of --live): the search's
// flags, what the round decided, and RunSearch. The database is read, and the round's decision
// stored in it (tools/search/decision_record.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/knob_flags.h"
#include "tools/search/setup.h"
#include "tools/search/tuning_flags.h"
#include "tuner/search_loop.h"

namespace autotune::cli {

struct SearchFlags {
  std::string db = "autotune.db";
  int64_t run = 0;
  int sim_budget = 120;  // settings simulated on the run's trace
  int propose = 1;       // settings proposed for measurement
  std::string out;
  bool json = false;
  bool quiet = false;  // no progress on stderr
  double min_ei_ratio = kDefaultMinExpectedImprovementRatio;
  bool tune_backend_knobs = false;
  std::string target;        // cpu | nccl | executor; "": TargetOf(the run)
  bool tune_groups = false;  // also search the knobs searched only on request (num_groups)
  bool live = false;
  std::string launcher;
  // --live on an imported job: each proposal also runs without its trace, and the job's own step
  // log (the last JSON line of its stdout with "step_ms") gives the run's production step times.
  bool production_runs = false;
  TuningFlags tuning;  // shared with record --autotune (tools/search/tuning_flags.h)
  KnobFlags knobs;
};

// What one search round decided: whether the stop rule says stop, what to measure next.
struct Round {
  tuner::StopReason stop = tuner::StopReason::kNotStopped;
  std::vector<std::string> proposal_files;
};

// One offline search under `flags` (tools/search/setup.h sets it up from the run and the
// flags): simulates on the run's trace when a calibration exists, blends in the stored
// measured samples, decides by the one rule (tuner::Decide), stores the decision (or shows the
// stored one when no real run is new), prints its summary (or --json), writes --out and the
// proposals and fills *round; the process exit code (non-zero after one line on stderr, the
// database then as it was).
int RunSearch(const SearchFlags& flags, Round* round);

}  // namespace autotune::cli
