// `autotune timeline`: a stored run (recorded, imported or simulated) written as a Horovod
// timeline (formats/horovod_timeline.h), to open in Perfetto or chrome://tracing beside the
// timeline of a real Horovod job.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "formats/horovod_timeline.h"
#include "simulator/stored_simulation.h"
#include "store/store.h"
#include "tools/command.h"
#include "tools/flag_checks.h"
#include "tools/help_defaults.h"

namespace autotune::cli {
namespace {

struct TimelineOptions {
  std::string db = "autotune.db";
  int64_t run = 0;
  std::string out;
};

// A simulated run stored without its steps: its predicted timeline again, by replaying its
// source run under its knobs on its topology.
Status RegenerateSimulatedSteps(Store& store, Trace* trace) {
  const RunInfo& run = trace->run;
  const std::string id = std::to_string(run.id);
  if (run.source_run <= 0) {
    return Status::InvalidArgument("run " + id +
                                   " is simulated but stores no steps and names no source run "
                                   "to replay; nothing to write");
  }
  sim::StoredSimulation loaded;
  Status st =
      sim::LoadSimulation(store, run.source_run, {run.topology.nodes, run.topology.ranks_per_node},
                          sim::IfUncalibrated::kFail, &loaded);
  if (!st.ok()) {
    return st.WithPrefix("run " + id + " stores no steps and cannot be replayed from run " +
                         std::to_string(run.source_run));
  }
  loaded.simulation->Evaluate(run.knobs, &trace->steps);
  return Status::Ok();
}

Status LoadRunTrace(const TimelineOptions& o, Trace* trace) {
  if (!std::filesystem::exists(o.db)) {
    return Status::NotFound("database " + o.db + " does not exist");
  }
  std::unique_ptr<Store> store;
  AUTOTUNE_RETURN_IF_ERROR(Store::Open(o.db, Store::Mode::kReadOnly, &store));
  AUTOTUNE_RETURN_IF_ERROR(store->LoadTrace(o.run, trace));
  if (trace->steps.empty() && trace->run.kind == RunKind::kSimulated) {
    AUTOTUNE_RETURN_IF_ERROR(RegenerateSimulatedSteps(*store, trace));
  }
  if (trace->steps.empty()) {
    return Status::InvalidArgument("run " + std::to_string(o.run) +
                                   " has no recorded steps; nothing to write");
  }
  return Status::Ok();
}

int RunTimeline(const TimelineOptions& o) {
  Trace trace;
  Status st = LoadRunTrace(o, &trace);
  if (!st.ok()) return Fail(st);
  st = WriteOutputFile(o.out, WriteHorovodTimeline(trace));
  if (!st.ok()) return Fail(st);
  std::printf(
      "run %lld (%s, %s, %zu steps, %zu tensors) written to %s as a Horovod timeline (open in "
      "Perfetto or chrome://tracing)\n",
      static_cast<long long>(trace.run.id), RunKindName(trace.run.kind),
      trace.run.workload.name.c_str(), trace.steps.size(), trace.run.workload.tensors.size(),
      o.out.c_str());
  return 0;
}

}  // namespace

void AddTimelineCommand(CLI::App& root, Action* action) {
  auto opts = std::make_shared<TimelineOptions>();
  CLI::App* app = root.add_subcommand(
      "timeline",
      "Write a stored run (recorded, imported or simulated) as a Horovod timeline (Chrome "
      "trace JSON, Horovod's event names, one process per tensor, steps end to end)");
  PrintDefaultsInDescriptions(app);
  app->add_option("--db", opts->db, "SQLite database file.")->capture_default_str();
  app->add_option("--run", opts->run, "Id of the run to write (required)")
      ->required()
      ->check(AtLeast(1));
  app->add_option("--out", opts->out, "File to write (replaced as a whole) (required)")->required();
  app->callback([opts, action] { *action = [opts] { return RunTimeline(*opts); }; });
}

}  // namespace autotune::cli
