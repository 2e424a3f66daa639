// `autotune import --horovod-timeline FILE`: a real Horovod job's timeline becomes a run of
// kind imported (formats/horovod_timeline.h) that simulate, search, compare and runs use like
// a recorded one. The file is read and checked before the database is opened, so a bad file
// leaves no database behind and an existing one as it was.
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "formats/ddp_trace.h"
#include "formats/horovod_timeline.h"
#include "store/store.h"
#include "tools/command.h"
#include "tools/flag_checks.h"
#include "tools/help_defaults.h"
#include "tools/knob_flags.h"
#include "tools/launch.h"

namespace autotune::cli {
namespace {

struct ImportFlags {
  std::string timeline;
  std::string ddp_trace;
  std::string db = "autotune.db";
  int nodes = 0;
  int ranks_per_node = 0;
  int warmup_steps = 1;
  int max_steps = 0;
  std::string workload;
  KnobFlags knobs;
  bool json = false;
  bool again = false;  // store a second run of a source imported before
};

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
                        {"knobs", KnobsToJson(run.knobs)},
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
}

int RunImport(const ImportFlags& flags) {
  ImportOptions options;
  const bool ddp = !flags.ddp_trace.empty();
  if (ddp == !flags.timeline.empty()) {
    return Fail("import: give one of --horovod-timeline FILE or --ddp-trace DIR");
  }
  options.source = ddp ? flags.ddp_trace : flags.timeline;
  options.topology.nodes = flags.nodes;
  options.topology.ranks_per_node = flags.ranks_per_node;
  options.warmup_steps = flags.warmup_steps;
  options.max_steps = flags.max_steps;
  options.workload_name = flags.workload;
  options.command = JoinCommandLine(SelfArgv());
  Status s = flags.knobs.Resolve(&options.knobs);
  if (!s.ok()) return Fail(s);
  Trace trace;
  ImportSummary summary;
  // Read before the database is touched.
  s = ddp ? LoadDdpTrace(options, &trace, &summary)
          : LoadHorovodTimeline(options, &trace, &summary);
  if (!s.ok()) return Fail(s);
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
      "tensors, steps, ready times and fused collectives (Horovod's cycles, DDP's buckets)");
  PrintDefaultsInDescriptions(app);
  app->add_option("--horovod-timeline", flags->timeline,
                  "The timeline file Horovod wrote on rank 0");
  app->add_option("--ddp-trace", flags->ddp_trace,
                  "The folder of rank<R>.json files that autotune's sitecustomize wrote for a "
                  "DDP job run under `autotune apply` with AUTOTUNE_DDP_TRACE=DIR (a run of "
                  "framework ddp; its DDP settings come from the files)");
  app->add_option("--db", flags->db, "SQLite database file.")->capture_default_str();
  app->add_option("--nodes", flags->nodes,
                  "Nodes the job ran on. Default: from the timeline's rank ticks")
      ->check(AtLeast(1));
  app->add_option("--ranks-per-node", flags->ranks_per_node,
                  "Ranks per node. Default: from the timeline's rank ticks")
      ->check(AtLeast(1));
  app->add_option("--warmup-steps", flags->warmup_steps,
                  "Leading steps left out (the first pays the response cache's misses).")
      ->capture_default_str()
      ->check(AtLeast(0));
  app->add_option("--max-steps", flags->max_steps,
                  "Steps kept after the warm-up at most (the rest left out); 0 = all.")
      ->capture_default_str()
      ->check(AtLeast(0));
  app->add_option("--workload", flags->workload,
                  "Name of the imported workload (runs of one job share it so that search "
                  "blends their measurements). Default: the file's name without extension");
  app->add_flag("--json", flags->json, "Print one JSON object on stdout instead of a summary");
  app->add_flag("--again", flags->again,
                "Import a source imported before (same files, same options) as a new run; "
                "without it the earlier run is reused");
  flags->knobs.Add(app);
  app->footer(
      "Give the knobs the job ran under (flags or --config-file): the timeline does not carry "
      "them. Give --nodes and --ranks-per-node as the job ran, so that a calibration of the "
      "same topology applies.");
  app->callback([flags, action] { *action = [flags]() { return RunImport(*flags); }; });
}

}  // namespace autotune::cli
