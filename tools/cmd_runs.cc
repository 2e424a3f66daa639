// `autotune runs`: lists the runs of a database.
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "simulator/stored_simulation.h"
#include "store/store.h"
#include "tools/command.h"
#include "tools/help_defaults.h"
#include "tools/search/decision_record.h"

namespace autotune::cli {

nlohmann::json RunToJson(const RunInfo& r) {
  return nlohmann::json{{"run", r.id},
                        {"created_at", r.created_at},
                        {"kind", RunKindName(r.kind)},
                        {"workload", r.workload.name},
                        {"scale", r.scale},
                        {"topology", r.topology.key()},
                        {"hosts", r.topology.hosts},
                        {"backend", BackendName(r.backend)},
                        {"framework", FrameworkName(r.framework)},
                        {"hardware", r.hardware},
                        {"knobs", KnobsToJson(r.knobs)},
                        {"complete", r.complete},
                        {"steps", r.steps_recorded},
                        {"steps_planned", r.steps_planned},
                        {"score_bytes_per_s", r.score_bytes_per_s},
                        {"step_ms_median", r.step_ms_median},
                        {"step_ms_p95", r.step_ms_p95},
                        {"source_run", r.source_run},
                        {"end_reason", r.end_reason}};
}

namespace {

// What run `r`'s simulations fit their network model to: for a recorded or imported run, the
// choice a simulation of it makes now (sim::NetworkOfRun: its own collectives, a calibrate, or
// the missing calibration's line); for a simulated run, the line stored when it was made (its
// hardware). Empty when the store cannot say (a warning names why).
std::string NetworkLine(Store& store, const RunInfo& r) {
  if (!IsMeasuredKind(r.kind)) return r.hardware;
  sim::NetworkChoice choice;
  const Status s = sim::NetworkOfRun(store, r, &choice);
  if (!s.ok()) {
    Warn("run " + std::to_string(r.id) + ": network model not known: " + s.message());
    return "";
  }
  return choice.Line();
}

// "run 5" or "runs 7-18".
std::string RunRange(int64_t first, int64_t last) {
  return first == last ? "run " + std::to_string(first)
                       : "runs " + std::to_string(first) + "-" + std::to_string(last);
}

}  // namespace

void AddRunsCommand(CLI::App& root, Action* action) {
  struct Options {
    std::string db = "autotune.db";
    bool json = false;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* app = root.add_subcommand("runs", "List the runs stored in a database");
  PrintDefaultsInDescriptions(app);
  app->add_option("--db", opts->db, "SQLite database file.")->capture_default_str();
  app->add_flag("--json", opts->json, "Print a JSON list on stdout instead of a table");
  app->callback([opts, action] {
    *action = [opts]() -> int {
      std::unique_ptr<Store> store;
      Status s = Store::Open(opts->db, Store::Mode::kReadOnly, &store);
      if (!s.ok()) return Fail(s);
      std::vector<RunInfo> runs;
      std::vector<Status> unreadable;
      s = store->ListRuns(&runs, &unreadable);
      if (!s.ok()) return Fail(s);
      for (const Status& bad : unreadable) Warn(bad.message() + " (run left out; the others listed)");
      // The newest stored decision of each run searched from, shown as stored.
      std::map<int64_t, StoredDecision> decided;
      std::vector<StoredDecision> decisions;
      s = store->ListDecisions(&decisions);
      if (!s.ok()) Warn(s.message() + " (decisions left out; the runs listed)");
      for (StoredDecision& d : decisions) decided[d.run_id] = std::move(d);
      if (opts->json) {
        nlohmann::json list = nlohmann::json::array();
        for (const RunInfo& r : runs) {
          list.push_back(RunToJson(r));
          list.back()["network"] = NetworkLine(*store, r);
          if (const auto it = decided.find(r.id); it != decided.end()) {
            list.back()["decision"] = DecisionToJson(it->second);
          }
        }
        std::cout << list.dump() << "\n";
        return 0;
      }
      std::printf("%4s  %-20s  %-9s  %-12s  %-5s  %-8s  %-9s  %10s  %10s  %-8s  %s\n", "id",
                  "created", "kind", "workload", "topo", "backend", "framework", "score GB/s",
                  "step ms", "complete", "knobs");
      for (const RunInfo& r : runs) {
        std::printf("%4lld  %-20s  %-9s  %-12s  %-5s  %-8s  %-9s  %10.3f  %10.2f  %-8s  %s\n",
                    static_cast<long long>(r.id), r.created_at.c_str(), RunKindName(r.kind),
                    r.workload.name.c_str(), r.topology.key().c_str(), BackendName(r.backend),
                    FrameworkName(r.framework), r.score_bytes_per_s / 1e9, r.step_ms_median,
                    r.complete ? "yes" : ("no (" + std::to_string(r.steps_recorded) + "/" +
                                          std::to_string(r.steps_planned) + ")")
                                             .c_str(),
                    KnobsShort(r.knobs, r.framework).c_str());
      }
      for (const RunInfo& r : runs) {  // why each incomplete run ended, where known
        if (!r.complete && !r.end_reason.empty()) {
          std::printf("run %lld ended: %s\n", static_cast<long long>(r.id), r.end_reason.c_str());
        }
      }
      // Each run's network model; consecutive simulated runs made by one simulate share a line.
      for (size_t i = 0; i < runs.size();) {
        const RunInfo& r = runs[i];
        if (IsMeasuredKind(r.kind)) {
          const std::string line = NetworkLine(*store, r);
          if (!line.empty()) {
            std::printf("run %lld network model: %s\n", static_cast<long long>(r.id),
                        line.c_str());
          }
          ++i;
          continue;
        }
        size_t j = i + 1;
        while (j < runs.size() && !IsMeasuredKind(runs[j].kind) &&
               runs[j].hardware == r.hardware && runs[j].id == runs[j - 1].id + 1) {
          ++j;
        }
        if (!r.hardware.empty()) {
          std::printf("%s (%s): %s\n", RunRange(r.id, runs[j - 1].id).c_str(),
                      RunKindName(r.kind), r.hardware.c_str());
        }
        i = j;
      }
      for (const RunInfo& r : runs) {
        if (const auto it = decided.find(r.id); it != decided.end()) {
          std::printf("run %lld searched: %s\n", static_cast<long long>(r.id),
                      DecisionLine(it->second, r.framework).c_str());
        }
      }
      if (runs.empty()) std::printf("(no runs in %s)\n", opts->db.c_str());
      return 0;
    };
  });
}

}  // namespace autotune::cli
