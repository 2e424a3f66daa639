// `autotune record --autotune`: the tuner of an online-tuned run, on rank 0. It searches the
// runtime knobs of the run's framework only (tuner::OnlineKnobNames); every other knob, and any
// knob given on the command line or in --config-file, stays constant. Horovod's semantics: the
// first warmup_samples samples are discarded, then each sample (steps_per_sample steps, score =
// bytes / time) is observed by the GP and the next setting suggested, until max_samples were
// observed; the setting that then stays for the rest of the run (and is written) is the one the
// search's one rule (tuner::Decide, on each sample's step times) shows beating the default,
// else the default. While that verdict hangs on noise and samples are left, the candidate and
// the default are measured again, alternately, before the budget runs out (never beyond it). The executor (executor/record.h, TuningStep) plays the samples, stores each
// one and broadcasts the knobs.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "executor/record.h"
#include "tools/search/sample_log.h"
#include "tools/search/setup.h"
#include "tools/search/tuning_flags.h"
#include "traces/backend_kind.h"
#include "traces/knobs.h"
#include "tuner/knob_search.h"

namespace autotune::cli {

struct OnlineTuningFlags {
  bool enabled = false;
  // Shared with search (tools/search/tuning_flags.h). Bagua's time-based flags: with either,
  // the first sample (steps_per_sample steps) is a discarded probe of the step time that maps
  // them: steps per sample = ceil(confidence time / step time), warm-up samples after the probe
  // = ceil(warm-up time / sample time) (without it: warmup_samples - 1).
  TuningFlags tuning;
  std::string out;  // --autotune-out
  // The simulator as the tuner's prior (--autotune-sim-budget): after the first observed
  // sample, when the database holds a calibration of this run's topology and backend, this
  // many settings are simulated on the run's own trace so far (all at the starting knobs)
  // and the tuner blends them with the measured samples (co-kriging). 0: measured only.
  int sim_budget = 60;
  std::string db;            // the run's database (record's --db)
  bool steps_given = false;  // --steps given: the run's length stays as given
};

// Adds --autotune and the --autotune-* flags above to `app` (the time-based ones with units).
void AddOnlineTuningFlags(CLI::App* app, OnlineTuningFlags* flags);

// The online tuner: an adapter of the search loop (tuner/knob_search.h) to the executor's
// samples. Its stop rule is the sample budget alone.
class OnlineTuner {
 public:
  // start: the knobs of the run (defaults + constants); constants: the names of
  // the knobs the user gave; backend, framework: the run's; job: what is known of the run
  // before it plays (its workload and its ranks' layout; not its step time), which shapes the
  // space. The search is set up by SetUpSearch (tools/search/setup.h, SearchMode::kOnline,
  // target the executor). Fails when every runtime knob is a constant; opens the log file.
  static Status Create(const OnlineTuningFlags& flags, const Knobs& start,
                       const std::set<std::string>& constants, BackendKind backend,
                       Framework framework, const tuner::JobFacts& job,
                       std::unique_ptr<OnlineTuner>* out);

  // executor::TuningStep: takes a finished sample, decides the next knobs.
  Status Step(const executor::TuningSample& sample, executor::TuningDecision* decision);

  int observed() const { return search_.measured(); }
  // The setting kept: the candidate when Decide shows it beating the default, else the
  // default; its knobs and the conclusion it comes from.
  Status Best(Knobs* knobs, tuner::SearchLoop::Conclusion* conclusion);
  // Prints the best setting (on stderr when json: stdout then holds record's
  // JSON alone) and writes it to flags.out (when given) with its evidence.
  Status WriteBest(const std::string& db, int64_t run_id, bool json);

 private:
  OnlineTuner(const OnlineTuningFlags& flags, SearchSetup setup);

  // Stores the run's decision (command "record --autotune", the samples' step times behind
  // it) in `db`; a failure is a note on stderr, not an error of the run.
  void StoreDecision(const std::string& db, int64_t run_id,
                     const tuner::SearchLoop::Conclusion& conclusion, const Knobs& chosen);
  // Maps the time-based flags from the probe sample (sample 0).
  void MapTimeFlags(const executor::TuningSample& probe, executor::TuningDecision* decision);
  // Simulates flags_.sim_budget settings chosen by the tuner on run_id's trace so far and
  // observes them as simulated samples. A missing calibration or a failing simulator is not
  // an error: the run goes on with measured samples only, saying why on stderr.
  void AddSimulatorPrior(int64_t run_id);

  OnlineTuningFlags flags_;
  Framework framework_ = Framework::kHorovod;  // whose knobs are tuned and written
  SampleLog log_;                              // before search_, which writes to it
  tuner::KnobSearch search_;
  int warmup_samples_ = 0;      // samples discarded before the first observed one
  double default_score_ = 0.0;  // the first observed sample: the run's starting setting
  std::vector<tuner::MeasuredSteps> steps_;  // each observed sample's step times, in order
};

}  // namespace autotune::cli
