// The one set-up of a search over a run's knobs, shared by `search` (and --live), `record
// --autotune` and `report`'s chosen setting: the target and framework the search serves, the
// knobs it holds (the constants given, and the knobs the table searches only on request), its
// space, the tuner's options, and the run's stored measured samples. Each caller then drives
// tuner::KnobSearch its own way.
#pragma once

#include <optional>
#include <set>
#include <vector>

#include "store/store.h"
#include "tools/search/tuning_flags.h"
#include "traces/knobs.h"
#include "traces/status.h"
#include "traces/trace.h"
#include "tuner/knob_search.h"

namespace autotune::cli {

// search's --min-expected-improvement default: an offline search stops proposing when the
// expected improvement is below this fraction of the best predicted score.
inline constexpr double kDefaultMinExpectedImprovementRatio = 0.002;

// The target a run's measurements ran on: kNccl for a run of backend nccl; else kCpu for a
// run imported from a real job (RunKind::kImported: Horovod on CPUs, no hierarchical
// collectives); else kExecutor.
tuner::Target TargetOf(const RunInfo& run);

// Where the search's samples come from.
enum class SearchMode {
  // search, report: stored samples of many runs; stops on the sample budget or once the
  // expected improvement is small.
  kOffline,
  // record --autotune: the samples of the one run being played; only its runtime knobs move
  // (tuner::FreeKnobs::kOnline); stops on the sample budget alone.
  kOnline,
};

// What the caller asks of a search beyond the run. The defaults are `search`'s.
struct SearchRequest {
  SearchMode mode = SearchMode::kOffline;
  Knobs knobs;                          // the knobs' defaults with the constants given
  std::set<std::string> constants;      // names of the knobs given (flags, --config-file)
  std::optional<tuner::Target> target;  // what the measurements run on; empty: TargetOf(run)
  // What of the job shapes the space; empty: JobFactsOf(run). record --autotune gives what it
  // knows before its run plays: the workload and the ranks' layout, not the step time.
  std::optional<tuner::JobFacts> job;
  bool tune_on_request = false;         // also search the knobs searched only on request
  bool tune_backend_knobs = false;      // kOffline: also search the backend's algorithm knobs
  TuningFlags tuning;                   // sample budget, noise, seed
  // kOffline: stop proposing below this fraction of the best predicted score.
  double min_expected_improvement_ratio = kDefaultMinExpectedImprovementRatio;
};

// A search ready to run: tuner::KnobSearch(space, base, options).
struct SearchSetup {
  // The target, the run's framework, whether on-request knobs move, and the job (JobFactsOf).
  tuner::SpaceScope scope;
  // request.knobs, with each knob searched only on request at the run's value unless it was
  // given or requested: what the knobs outside the space are.
  Knobs base;
  tuner::Space space;  // the run's backend and framework; the knobs that do not move constant
  // How the job shaped the space (tuner/job_space.h): what `search` notes, one line a knob.
  tuner::JobSpace shape;
  tuner::SearchOptions options;  // the model and the stop rule of request.mode
  // The knobs set with each setting (tuner::WithCompanionKnobs for the run's job, backend and
  // framework); none online (record --autotune: a per-launch knob cannot change in its run).
  tuner::KnobCompletion complete;
};

// What of `run` shapes its search space: its workload (the tensors one step reduces), its
// topology, and its step time (the untraced one where the import was given it, else the
// stored median; 0 when neither is known).
tuner::JobFacts JobFactsOf(const RunInfo& run);

// The set-up of a search over the knobs of `run` (its backend, framework, kind, knobs,
// workload, topology and step time are read) under `request`. The space is shaped by the job
// (tuner::ShapeSpaceForJob of request.job, else JobFactsOf(run)) and frees every knob of the
// run's backend and framework except: the constants; the knobs searched only on request unless
// request.tune_on_request; the knobs the job's shape holds (the hierarchical knobs on a kCpu
// target or one node); the backend's algorithm knobs in kOffline unless
// request.tune_backend_knobs (the simulator does not model them); the per-launch knobs in
// kOnline. Fails naming the knob ("constant NAME: ...") whose value has no place in the space.
Status SetUpSearch(const RunInfo& run, const SearchRequest& request, SearchSetup* setup);

// The stored measured samples a search of `run` learns from.
struct StoredSamples {
  std::vector<Sample> measured;  // of the run's workload, topology, scale and backend
  int other_measured = 0;        // of its workload and topology at another scale or backend
  int traced_left_out = 0;       // traced-only imports left out beside production ones
  std::vector<tuner::MeasuredSteps> steps;  // LoadStepTimes of `measured`
};

// Reads `run`'s StoredSamples from `store`. The sample of an import given its production step
// time is its production job's (its score scaled from the traced steps' median to that time);
// once any is, those of traced imports without one are left out (counted in traced_left_out).
// Fails with the store's error.
Status LoadStoredSamples(Store& store, const RunInfo& run, StoredSamples* out);

// Appends to *out the step times of the samples of `measured` that are the only measured
// sample of their run (a run tuned online holds several settings' steps, which cannot be told
// apart); a run without stored steps is left out. A run whose production step time is known
// (an import given --step-log: RunInfo::untraced_step_ms) counts at that median (its steps
// scaled to it), and once any run has one, the runs without are left out: tracing costs each
// setting differently, so traced and production runs are not compared. Fails with the store's
// error.
Status LoadStepTimes(Store& store, const std::vector<Sample>& measured,
                     std::vector<tuner::MeasuredSteps>* out);

// Observes each sample of `measured` whose knobs have a place in the search's space (its
// constants at their values); returns how many were left out, or the first observation's
// failure.
StatusOr<int> ObserveStored(const std::vector<Sample>& measured, tuner::KnobSearch* search);

}  // namespace autotune::cli
