#include "tools/search/live_job.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "tools/command.h"
#include "tools/launch.h"
#include "tools/step_log.h"

namespace autotune::cli {
int RunLiveStep(const std::string& what, const std::string& command, const std::string& db) {
  std::cerr << "search --live: " << what << ": " << command << "\n";
  const int status = std::system(command.c_str());
  if (status == 0) return 0;
  return Fail("search --live: `" + command + "` failed (status " + std::to_string(status) +
              "); the samples measured so far are in " + db);
}

namespace {

// The job's command under `self apply --config-file proposal`, with `trace_env` first; its
// stdout to standard error, and with `steps` (a file) there first: its step log.
std::string JobUnderProposal(const SearchFlags& flags, const std::string& proposal,
                             const std::string& self, const std::string& trace_env,
                             const std::string& steps = "") {
  const std::string job =
      (trace_env.empty() ? "" : trace_env + " ") +
      JoinCommandLine({self, "apply", "--config-file", proposal, "--", "sh", "-c", flags.launcher});
  if (steps.empty()) return job + " >&2";
  std::remove(steps.c_str());
  return job + " > " + ShellQuote(steps) + " && cat " + ShellQuote(steps) + " >&2";
}

// The import's flags shared by both frameworks: base's workload, topology and host (the cores
// its ranks shared, when known: each live run then refits the compute slowed by communication
// with the others), the warm-up left out and the steps kept, and with --production-runs the
// production run's step log and the traced run's own.
std::vector<std::string> ImportFlags(const SearchFlags& flags, const RunInfo& base,
                                     const std::string& proposal) {
  std::vector<std::string> out = {"--db",
                                  flags.db,
                                  "--nodes",
                                  std::to_string(base.topology.nodes),
                                  "--ranks-per-node",
                                  std::to_string(base.topology.ranks_per_node),
                                  "--workload",
                                  base.workload.name,
                                  "--warmup-steps",
                                  std::to_string(flags.tuning.warmup_samples),
                                  "--max-steps",
                                  std::to_string(flags.tuning.steps_per_sample)};
  if (flags.production_runs) {
    out.insert(out.end(), {"--step-log", ProductionStepLog(proposal)});
    // The traced run's own step times where its stdout holds them (a job may print its log
    // only when untraced): without them the tracing cost is against the trace's steps.
    double traced_ms = 0.0;
    const Status traced = ReadStepLog("the traced run's step log", TracedStepLog(proposal),
                                      &traced_ms);
    if (traced.ok()) {
      out.insert(out.end(), {"--traced-step-log", TracedStepLog(proposal)});
    } else {
      std::cerr << "search --live: " << traced.message() << ": imported without it\n";
    }
  }
  if (base.host.cores > 0) {
    out.insert(out.end(), {"--host-cores", std::to_string(base.host.cores), "--nodes-per-host",
                           std::to_string(base.host.nodes_per_host)});
  }
  return out;
}

// A DDP job: its sitecustomize records a trace into PROPOSAL.ddp-trace/ (AUTOTUNE_DDP_TRACE),
// imported with the knobs the job recorded (those the proposal set).
int MeasureDdpJob(const SearchFlags& flags, const RunInfo& base, const std::string& proposal,
                  const std::string& self) {
  const std::string trace = proposal + ".ddp-trace";
  std::error_code ec;
  std::filesystem::remove_all(trace, ec);
  const std::string job =
      JobUnderProposal(flags, proposal, self, "AUTOTUNE_DDP_TRACE=" + ShellQuote(trace),
                       flags.production_runs ? TracedStepLog(proposal) : "");
  if (int code = RunLiveStep("running the job under " + proposal, job, flags.db); code != 0) {
    return code;
  }
  // --again: each proposal's trace is a new measurement, even should it repeat an earlier one.
  std::vector<std::string> import = {self, "import", "--again", "--ddp-trace", trace};
  for (std::string& flag : ImportFlags(flags, base, proposal)) import.push_back(std::move(flag));
  return RunLiveStep("importing its DDP trace", JoinCommandLine(import) + " >&2", flags.db);
}

}  // namespace

std::string ProductionStepLog(const std::string& proposal) { return proposal + ".steps.log"; }

std::string TracedStepLog(const std::string& proposal) { return proposal + ".traced-steps.log"; }

int MeasureOnRealJob(const SearchFlags& flags, const RunInfo& base, const std::string& proposal,
                     const std::string& self) {
  if (flags.production_runs) {
    // The job as it runs in production first: no trace; its stdout is its step log, which the
    // traced run's import takes as --step-log (the run's production step times).
    const std::string job =
        JobUnderProposal(flags, proposal, self, "", ProductionStepLog(proposal));
    if (int code = RunLiveStep("running the job in production (untraced) under " + proposal,
                               job, flags.db);
        code != 0) {
      return code;
    }
  }
  if (base.framework == Framework::kDdp) return MeasureDdpJob(flags, base, proposal, self);
  const std::string timeline = proposal + ".timeline.json";
  std::remove(timeline.c_str());
  const std::string job = JobUnderProposal(
      flags, proposal, self,
      "HOROVOD_TIMELINE=" + ShellQuote(timeline) + " HOROVOD_TIMELINE_MARK_CYCLES=1",
      flags.production_runs ? TracedStepLog(proposal) : "");
  if (int code = RunLiveStep("running the job under " + proposal, job, flags.db); code != 0) {
    return code;
  }
  std::vector<std::string> import = {self,     "import",        "--again", "--horovod-timeline",
                                     timeline, "--config-file", proposal};
  for (std::string& flag : ImportFlags(flags, base, proposal)) import.push_back(std::move(flag));
  return RunLiveStep("importing its timeline", JoinCommandLine(import) + " >&2", flags.db);
}

}  // namespace autotune::cli
