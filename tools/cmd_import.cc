// `autotune import --horovod-timeline FILE`: a real Horovod job's timeline becomes a run of
// kind imported (formats/horovod_timeline.h) that simulate, search, compare and runs use like
// a recorded one. The file is read and checked before the database is opened, so a bad file
// leaves no database behind and an existing one as it was.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "formats/ddp_trace.h"
#include "formats/horovod_timeline.h"
#include "store/store.h"
#include "tools/command.h"
#include "tools/flag_checks.h"
#include "tools/help_defaults.h"
#include "tools/import_autotune_log.h"
#include "tools/knob_flags.h"
#include "tools/launch.h"
#include "tools/step_log.h"

namespace autotune::cli {
namespace {

struct ImportFlags {
  std::string timeline;
  std::string ddp_trace;
  std::string ready_log;     // --ready-log, with --horovod-timeline
  std::string autotune_log;  // --horovod-autotune-log
  int64_t run = 0;           // its job's run
  std::string db = "autotune.db";
  int nodes = 0;
  int ranks_per_node = 0;
  int warmup_steps = 1;
  int max_steps = 0;
  std::string workload;
  KnobFlags knobs;
  bool json = false;
  double untraced_step_ms = 0.0;
  std::vector<std::string> step_logs;  // --step-log, once per production run
  double traced_step_ms = 0.0;  // --traced-step-ms
  std::string traced_step_log;
  int host_cores = 0;
  int nodes_per_host = 1;
  bool again = false;  // store a second run of a source imported before
};

// A step time given as a number (ms_flag: ms, 0 = not given) or as step logs (log_flag: logs,
// none = not given; several: runs of the job at the same setting, whose medians' median is
// its step time, so one run that came out slow as a whole moves it less); 0 when neither.
// Both given is an error naming the two flags.
Status StepTimeOf(const char* ms_flag, double ms, const char* log_flag,
                  const std::vector<std::string>& logs, double* out) {
  *out = ms;
  if (logs.empty()) return Status::Ok();
  if (ms > 0.0) {
    return Status::InvalidArgument(std::string("import: give ") + ms_flag + " or " + log_flag +
                                   ", not both");
  }
  std::vector<double> medians(logs.size());
  for (size_t i = 0; i < logs.size(); ++i) {
    AUTOTUNE_RETURN_IF_ERROR(ReadStepLog(log_flag, logs[i], &medians[i]));
  }
  *out = Median(std::move(medians));
  return Status::Ok();
}

// Stores the run (all of it or nothing), or, unless `again`, takes the run an earlier import
// of the same source with the same options made (*reused): one job's file imported twice is
// not a second measurement of it.
Status StoreTrace(const std::string& db, bool again, Trace* trace, bool* reused) {
  std::unique_ptr<Store> store;
  AUTOTUNE_RETURN_IF_ERROR(Store::Open(db, Store::Mode::kReadWrite, &store));
  *reused = false;
  if (!again && !trace->run.source_hash.empty()) {
    RunInfo earlier;
    const Status found = store->FindRunBySourceHash(trace->run.source_hash, &earlier);
    if (found.ok()) {
      trace->run = std::move(earlier);
      *reused = true;
      return Status::Ok();
    }
    if (found.code() != Status::Code::kNotFound) return found;
  }
  return store->AddCompleteRun(trace);
}

// A Horovod timeline shows a tensor only when a background cycle takes it (its negotiation
// starts then; a response-cache hit has no rank ticks), so a tensor's readiness is known to
// within a cycle, and up to a cycle of waiting a step reads as compute. Worth a note when the
// cycle is longer than Horovod's default and at least this share of the step.
constexpr double kCycleWaitNoteShare = 0.02;

// How finely the import knows when a tensor became ready, ms: a Horovod timeline to its cycle,
// a DDP trace exactly (its hooks stamp each gradient).
double ReadinessResolutionMs(const RunInfo& run) {
  return run.framework == Framework::kHorovod ? run.knobs.cycle_time_ms : 0.0;
}

const char* RankClocksName(RankClocks::Kind kind) {
  switch (kind) {
    case RankClocks::kOneKernel:
      return "one kernel";
    case RankClocks::kMeasuredOffsets:
      return "measured offsets";
    case RankClocks::kOwn:
      break;
  }
  return "own";
}

void PrintSummary(const ImportFlags& flags, const RunInfo& run, const ImportSummary& summary,
                  bool reused) {
  if (flags.json) {
    nlohmann::json j = {{"run", run.id},
                        {"kind", RunKindName(run.kind)},
                        {"workload", run.workload.name},
                        {"topology", run.topology.key()},
                        {"backend", BackendName(run.backend)},
                        {"framework", FrameworkName(run.framework)},
                        {"steps", summary.steps},
                        {"tensors", summary.tensors},
                        {"bytes_per_step", summary.bytes_per_step},
                        {"step_ms_median", summary.step_ms_median},
                        {"step_ms_p95", run.step_ms_p95},
                        {"score_bytes_per_s", run.score_bytes_per_s},
                        {"collectives_per_step", summary.collectives_per_step},
                        {"truncated", summary.truncated},
                        {"rank_clocks", RankClocksName(summary.clocks.kind)},
                        {"clock_offset_error_us", summary.clocks.offset_error_us},
                        {"ready_times", run.framework == Framework::kDdp ? "trace"
                                        : summary.ready_logged_tensors > 0 ? "ready log"
                                                                           : "timeline"},
                        {"ready_logged_tensors", summary.ready_logged_tensors},
                        {"ready_log_mean_earlier_ms", summary.ready_log_mean_earlier_ms},
                        {"ready_log_max_earlier_ms", summary.ready_log_max_earlier_ms},
                        {"knobs", KnobsToJson(run.knobs)},
                        {"untraced_step_ms", run.untraced_step_ms},
                        {"traced_step_ms", run.traced_step_ms},
                        {"readiness_resolution_ms", ReadinessResolutionMs(run)},
                        {"host_cores", run.host.cores},
                        {"nodes_per_host", run.host.nodes_per_host},
                        {"reused", reused},
                        {"db", flags.db}};
    std::cout << j.dump() << "\n";
    return;
  }
  std::printf(reused ? "%s was imported before, with the same options, as run %lld of %s (%s, "
                       "%s, %s): reusing it (--again imports it once more)\n"
                     : "imported %s as run %lld of %s (%s, %s, %s)\n",
              (flags.timeline.empty() ? flags.ddp_trace : flags.timeline).c_str(),
              static_cast<long long>(run.id), flags.db.c_str(), run.workload.name.c_str(),
              run.topology.key().c_str(), BackendName(run.backend));
  std::printf("  %d steps kept (%d warm-up left out)%s\n", summary.steps, flags.warmup_steps,
              summary.truncated ? "; the file was cut off: its incomplete last step dropped" : "");
  std::printf("  %d tensors, %.1f MiB per step, %d fused collectives per step (median)\n",
              summary.tensors, static_cast<double>(summary.bytes_per_step) / (1 << 20),
              summary.collectives_per_step);
  std::printf("  step time median %.1f ms, p95 %.1f ms; score %.3f GB/s\n", summary.step_ms_median,
              run.step_ms_p95, run.score_bytes_per_s / 1e9);
  std::printf(run.framework == Framework::kDdp
                  ? "  knobs (the job's DDP settings, from the trace): %s\n"
                  : "  knobs (as given; the timeline does not carry them): %s\n",
              KnobsShort(run.knobs, run.framework).c_str());
  if (run.framework == Framework::kDdp) {
    switch (summary.clocks.kind) {
      case RankClocks::kOneKernel:
        std::printf("  the ranks' times on rank 0's clock (one kernel's monotonic clock): a "
                    "bucket starts when its last rank launched it\n");
        break;
      case RankClocks::kMeasuredOffsets:
        std::printf("  the ranks' times on rank 0's clock (several machines: each clock's "
                    "offset from rank 0's measured once at the job's start, within %.0f us): "
                    "a bucket starts when its last rank launched it\n",
                    summary.clocks.offset_error_us);
        break;
      case RankClocks::kOwn:
        std::printf("  each rank's times from its own step start (the files give no clock "
                    "common to the ranks): a bucket runs its shortest time over the ranks\n");
        break;
    }
  }
  if (summary.ready_logged_tensors > 0) {
    std::printf("  every rank's ready times of %d of the %d tensors from the ready log: %.1f ms "
                "earlier than the timeline's cycles read them on average, %.1f ms at most\n",
                summary.ready_logged_tensors, summary.tensors, summary.ready_log_mean_earlier_ms,
                summary.ready_log_max_earlier_ms);
  } else if (run.framework == Framework::kHorovod) {
    std::printf("  ready times as the timeline's cycles bound them (no cycle runs during a "
                "collective; --ready-log gives each rank's own)\n");
  }
  const double resolution_ms = ReadinessResolutionMs(run);
  if (resolution_ms > Knobs().cycle_time_ms &&
      resolution_ms >= kCycleWaitNoteShare * summary.step_ms_median) {
    std::printf("  cycle time %.3g ms, %.0f%% of the step: a tensor shows in Horovod's timeline "
                "only when a cycle takes it, so up to a cycle of waiting per step reads as "
                "compute, and predictions of shorter cycles from this run can be up to that "
                "much slow (a timeline recorded at Horovod's default 1 ms cycle is not)\n",
                resolution_ms, 100.0 * resolution_ms / summary.step_ms_median);
  }
  if (run.traced_step_ms > 0.0) {
    std::printf("  the traced job's own step time %.1f ms: the imported steps' median is %.1f "
                "ms, %+.1f%% off it\n",
                run.traced_step_ms, run.step_ms_median,
                100.0 * (run.step_ms_median / run.traced_step_ms - 1.0));
  }
  if (run.untraced_step_ms > 0.0) {
    // Against the traced job's own step time where given: like for like.
    const double traced = run.traced_step_ms > 0.0 ? run.traced_step_ms : run.step_ms_median;
    const std::string runs =
        flags.step_logs.size() > 1
            ? " (the median of " + std::to_string(flags.step_logs.size()) + " runs' medians)"
            : "";
    std::printf("  production (untraced) step time %.1f ms%s: tracing cost this job %+.1f%%%s; "
                "predictions are of the production job\n",
                run.untraced_step_ms, runs.c_str(), 100.0 * (traced / run.untraced_step_ms - 1.0),
                traced < run.untraced_step_ms
                    ? " (below zero: run-to-run noise; the two are pooled, simulate says how)"
                    : "");
  } else {
    std::printf("  no production step time given (--untraced-step-ms or --step-log): the "
                "tracing cost is estimated from the trace\n");
  }
  if (run.host.cores > 0) {
    std::printf("  %d ranks share %d cores per host: compute slowed by communication is "
                "modelled; one import fits it from its own trace, two or more at different "
                "settings of the same --workload fit it better\n",
                run.topology.ranks_per_node * run.host.nodes_per_host, run.host.cores);
  } else {
    std::printf("  cores per host not given (--host-cores): compute is taken as unaffected by "
                "communication\n");
  }
}

int RunImport(const ImportFlags& flags) {
  if (!flags.autotune_log.empty()) {
    if (flags.run <= 0) {
      return Fail("import: --horovod-autotune-log needs --run N, the job's imported (or "
                  "recorded) run, whose workload, topology and backend its samples take");
    }
    std::set<std::string> given;
    Knobs unused;
    const Status knobs = flags.knobs.Resolve(&unused, &given);
    if (!knobs.ok()) return Fail(knobs);
    if (!given.empty() || !flags.knobs.config_file().empty()) {
      return Fail("import: knob flags and --config-file do not apply to "
                  "--horovod-autotune-log: its samples' knobs come from the log and, for the "
                  "knobs it does not hold, from --run's run");
    }
    return ImportHorovodAutotuneLog(
        {flags.autotune_log, flags.run, flags.db, flags.again, flags.json});
  }
  ImportOptions options;
  const bool ddp = !flags.ddp_trace.empty();
  if (ddp == !flags.timeline.empty()) {
    return Fail("import: give one of --horovod-timeline FILE, --ddp-trace DIR or "
                "--horovod-autotune-log FILE");
  }
  options.source = ddp ? flags.ddp_trace : flags.timeline;
  options.topology.nodes = flags.nodes;
  options.topology.ranks_per_node = flags.ranks_per_node;
  options.warmup_steps = flags.warmup_steps;
  options.max_steps = flags.max_steps;
  options.workload_name = flags.workload;
  options.ready_log = flags.ready_log;
  options.command = JoinCommandLine(SelfArgv());
  Status s = flags.knobs.Resolve(&options.knobs);
  if (!s.ok()) return Fail(s);
  double untraced_ms = 0.0, traced_ms = 0.0;
  s = StepTimeOf("--untraced-step-ms", flags.untraced_step_ms, "--step-log", flags.step_logs,
                 &untraced_ms);
  if (!s.ok()) return Fail(s);
  s = StepTimeOf("--traced-step-ms", flags.traced_step_ms, "--traced-step-log",
                 flags.traced_step_log.empty() ? std::vector<std::string>{}
                                               : std::vector<std::string>{flags.traced_step_log},
                 &traced_ms);
  if (!s.ok()) return Fail(s);
  Trace trace;
  ImportSummary summary;
  // Read before the database is touched.
  s = ddp ? LoadDdpTrace(options, &trace, &summary)
          : LoadHorovodTimeline(options, &trace, &summary);
  if (!s.ok()) return Fail(s);
  trace.run.untraced_step_ms = untraced_ms;
  trace.run.traced_step_ms = traced_ms;
  trace.run.host.cores = flags.host_cores;
  trace.run.host.nodes_per_host = flags.nodes_per_host;
  // The host and the untraced time are options of the import too: the same file imported with
  // other ones is another run, not a re-import.
  if (untraced_ms > 0.0 || flags.host_cores > 0) {
    char options[96];
    std::snprintf(options, sizeof(options), ";host %d/%d;untraced %.6g", flags.host_cores,
                  flags.nodes_per_host, untraced_ms);
    trace.run.source_hash += options;
  }
  if (traced_ms > 0.0) {  // apart: an import without it keeps the hash it had before
    char options[48];
    std::snprintf(options, sizeof(options), ";traced %.6g", traced_ms);
    trace.run.source_hash += options;
  }
  bool reused = false;
  s = StoreTrace(flags.db, flags.again, &trace, &reused);
  if (!s.ok()) return Fail(s);
  PrintSummary(flags, trace.run, summary, reused);
  return 0;
}

}  // namespace

void AddImportCommand(CLI::App& root, Action* action) {
  auto flags = std::make_shared<ImportFlags>();
  CLI::App* app = root.add_subcommand(
      "import",
      "Import a real job's Horovod timeline (HOROVOD_TIMELINE, complete or cut off) or PyTorch "
      "DDP trace (AUTOTUNE_DDP_TRACE under autotune apply) as a run of kind imported: its "
      "tensors, steps, ready times and fused collectives (Horovod's cycles, DDP's buckets); "
      "or a Horovod autotune log as measured samples of an imported run's job");
  PrintDefaultsInDescriptions(app);
  CLI::Option* autotune_log = app->add_option(
      "--horovod-autotune-log", flags->autotune_log,
      "The CSV of a past Horovod autotune run of the job (HOROVOD_AUTOTUNE_LOG, horovodrun "
      "--autotune-log-file): each row becomes a measured sample (score bytes/us x 1e6 = "
      "bytes/s) of the job of --run, stored in one transaction with a run that holds them (no "
      "steps). Horovod's final best row is not a sample; rows with torus_allreduce 1 are left "
      "out. Needs --run");
  CLI::Option* run = app->add_option(
      "--run", flags->run,
      "--horovod-autotune-log: the job's imported (or recorded) run; the samples take its "
      "workload, topology, backend and scale (so `search --run N` blends them) and its knobs "
      "for those the log does not hold");
  run->needs(autotune_log);
  app->add_option("--db", flags->db, "SQLite database file.")->capture_default_str();
  std::vector<CLI::Option*> trace_only;
  trace_only.push_back(app->add_option("--horovod-timeline", flags->timeline,
                                       "The timeline file Horovod wrote on rank 0"));
  CLI::Option* ready_log = app->add_option(
      "--ready-log", flags->ready_log,
      "With --horovod-timeline: the folder of rank<R>.json files in which each rank logged "
      "its gradient-ready times (python/autotune_torch/horovod_ready.py) in the same run. The "
      "timeline only bounds them (no cycle runs while a collective does); the log gives them");
  ready_log->needs("--horovod-timeline");
  trace_only.push_back(ready_log);
  trace_only.push_back(app->add_option(
      "--ddp-trace", flags->ddp_trace,
      "The folder of rank<R>.json files that autotune's sitecustomize wrote for a DDP job run "
      "under `autotune apply` with AUTOTUNE_DDP_TRACE=DIR (a run of framework ddp; its DDP "
      "settings come from the files)"));
  trace_only.push_back(app->add_option("--nodes", flags->nodes,
                                       "Nodes the job ran on. Default: from the timeline's "
                                       "rank ticks")
                           ->check(AtLeast(1)));
  trace_only.push_back(app->add_option("--ranks-per-node", flags->ranks_per_node,
                                       "Ranks per node. Default: from the timeline's rank ticks")
                           ->check(AtLeast(1)));
  trace_only.push_back(
      app->add_option("--warmup-steps", flags->warmup_steps,
                      "Leading steps left out (the first pays the response cache's misses).")
          ->capture_default_str()
          ->check(AtLeast(0)));
  trace_only.push_back(
      app->add_option("--max-steps", flags->max_steps,
                      "Steps kept after the warm-up at most (the rest left out); 0 = all.")
          ->capture_default_str()
          ->check(AtLeast(0)));
  trace_only.push_back(app->add_option(
      "--workload", flags->workload,
      "Name of the imported workload (runs of one job share it so that search blends their "
      "measurements). Default: the file's name without extension"));
  app->add_flag("--json", flags->json, "Print one JSON object on stdout instead of a summary");
  trace_only.push_back(
      app->add_option("--untraced-step-ms", flags->untraced_step_ms,
                      "The job's production step time (ms) at the same setting, measured "
                      "without its timeline or trace (writing one slows the job); predictions "
                      "are then of the production job. Default: estimated from the trace")
          ->check(GreaterThan(0)));
  trace_only.push_back(app->add_option(
      "--step-log", flags->step_logs,
      "A log of the untraced job whose last JSON line holds \"step_ms\": [...] (as "
      "bench/horovod/train.py prints); its median is the production step time. Give it once "
      "per production run at the same setting: the median of their medians is taken"));
  trace_only.push_back(
      app->add_option("--traced-step-ms", flags->traced_step_ms,
                      "The traced job's own step time (ms): its wall clock per step while it "
                      "wrote this timeline or trace, which the file's steps can read short of. "
                      "With a production step time, the tracing cost is measured like for like")
          ->check(GreaterThan(0)));
  trace_only.push_back(app->add_option(
      "--traced-step-log", flags->traced_step_log,
      "The traced run's own step log (--step-log's format); its median is --traced-step-ms"));
  trace_only.push_back(
      app->add_option("--host-cores", flags->host_cores,
                      "CPU cores of one host of the job, shared by its ranks and their "
                      "communication threads (compute slowed by communication is modelled "
                      "when given). Default: not known")
          ->check(AtLeast(1)));
  trace_only.push_back(
      app->add_option("--nodes-per-host", flags->nodes_per_host,
                      "Nodes of --nodes that share one host's cores (an emulated cluster on "
                      "one machine: all of them).")
          ->capture_default_str()
          ->check(AtLeast(1)));
  // The log's samples take all of these from --run's run.
  for (CLI::Option* option : trace_only) autotune_log->excludes(option);
  app->add_flag("--again", flags->again,
                "Import a source imported before (same files, same options) as a new run; "
                "without it the earlier run is reused");
  flags->knobs.Add(app);
  app->footer(
      "Give the knobs the job ran under (flags or --config-file): the timeline does not carry "
      "them. Give --nodes and --ranks-per-node as the job ran, so that a calibration of the "
      "same topology applies.\n"
      "Horovod's autotune log: first import the job's timeline (the run N it needs), then "
      "`autotune import --horovod-autotune-log FILE --run N`.");
  app->callback([flags, action] { *action = [flags]() { return RunImport(*flags); }; });
}

}  // namespace autotune::cli
