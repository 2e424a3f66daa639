// `autotune search --live`: measures the search's proposals itself, running `autotune record`
// through a launcher, and searches again. Also what cmd_search.cc and tools/search/live.cc share: the
// search's flags, one round's outcome and the offline search (RunSearch, in cmd_search.cc).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/knob_flags.h"
#include "store/store.h"
#include "traces/trace.h"
#include "tuner/bayes_search.h"
#include "tuner/knob_search.h"

namespace autotune::cli {

struct SearchFlags {
  std::string db = "autotune.db";
  int64_t run = 0;
  int sim_budget = 120;
  int max_samples = 20;
  int propose = 1;
  std::string out;
  bool json = false;
  bool quiet = false;  // no progress on stderr
  std::string log_file;
  // Fixed noise of measured scores in units of their spread (Horovod's default 0.8); < 0:
  // learned. Fixed by default: with a handful of noisy runs a learned noise reads the noise
  // as signal (bench/tuner/real_task.sh, first grid, mean of 2 passes: 15 runs to 3% of the
  // grid's best learned, 4 fixed).
  double gp_noise = 0.8;
  double min_ei_ratio = 0.002;
  uint64_t seed = 1;
  bool tune_backend_knobs = false;
  std::string target;        // cpu | nccl | executor; "": TargetOf(the run)
  bool tune_groups = false;  // search num_groups (else a constant at the run's value)
  bool live = false;
  std::string launcher;
  int warmup_steps = 3;
  int steps_per_sample = 10;
  double warmup_time_s = -1.0;               // Bagua's; < 0: not given
  double sampling_confidence_time_s = -1.0;  // Bagua's; < 0: not given
  KnobFlags knobs;
};

// What one search round decided: whether the stop rule says stop, what to measure next.
struct Round {
  tuner::StopReason stop = tuner::StopReason::kNotStopped;
  std::vector<std::string> proposal_files;
};

// The target a run's measurements ran on (cmd_search.cc): kCpu for a run imported from a
// Horovod timeline (hardware starting with "horovod timeline") of backend mpi, kNccl for
// backend nccl, kExecutor otherwise.
tuner::Target TargetOf(const RunInfo& run);

// The model and stop options a search runs with under these flags (cmd_search.cc).
tuner::SearchOptions MakeOptions(const SearchFlags& flags);

// The step times of `measured`'s samples that are the only measured sample of their run (a
// run tuned online holds several settings' steps, which cannot be told apart), appended to
// *out; a run without stored steps is left out (cmd_search.cc).
Status LoadStepTimes(Store& store, const std::vector<Sample>& measured,
                     std::vector<tuner::MeasuredSteps>* out);

// One offline search (cmd_search.cc): prints its summary, writes --out and the proposals; the
// process exit code.
int RunSearch(const SearchFlags& flags, Round* round);

// --live: measures the proposals itself, running `autotune record` through the launcher, and
// searches again, until the measured-sample budget is spent or nothing is worth measuring.
int RunLive(SearchFlags flags);

}  // namespace autotune::cli
