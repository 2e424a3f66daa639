// `search --live` on the user's real job: a proposal is measured by running the job's own
// command (--launcher) under `autotune apply --config-file PROPOSAL` with a Horovod timeline
// on, and importing that timeline as a measured run of the proposal's knobs.
#pragma once

#include <string>

#include "tools/search/offline.h"
#include "traces/trace.h"

namespace autotune::cli {

// Runs one step of a live search (a measurement, an import) through the shell, saying `what`
// and the command on stderr; 0, or the exit code after one line naming the command and db.
int RunLiveStep(const std::string& what, const std::string& command, const std::string& db);

// Runs `flags.launcher` under `self apply --config-file proposal` with a trace on, then
// `self import`s it into flags.db as base's workload on base's topology with the proposal's
// knobs, leaving out flags.tuning.warmup_samples steps and keeping at most
// flags.tuning.steps_per_sample.
// The trace: for a Horovod run, HOROVOD_TIMELINE=PROPOSAL.timeline.json (and
// HOROVOD_TIMELINE_MARK_CYCLES=1); for a DDP run, AUTOTUNE_DDP_TRACE=PROPOSAL.ddp-trace (the
// sitecustomize `apply` puts on the job's PYTHONPATH records it). 0 on success, else the exit
// code after one line naming the command that failed.
// With flags.production_runs, the job first runs without a trace under the proposal, its stdout
// to ProductionStepLog(proposal), which the import then takes as --step-log (the run's production
// step times, which decide the verdict: tools/search/setup.h LoadStepTimes), and the traced
// run's stdout goes to TracedStepLog(proposal) too (the import's --traced-step-log).
int MeasureOnRealJob(const SearchFlags& flags, const RunInfo& base, const std::string& proposal,
                     const std::string& self);

// "PROPOSAL.steps.log": the production run's stdout.
std::string ProductionStepLog(const std::string& proposal);
// "PROPOSAL.traced-steps.log": with production runs, the traced run's stdout, which the import
// takes as --traced-step-log (the traced job's own step times, beside its trace's).
std::string TracedStepLog(const std::string& proposal);

}  // namespace autotune::cli
