// `autotune diagnose --run N`: where a run's step time goes (compute, and the exposed
// communication cut into negotiation, cycle wait, fusion copies and collectives), the most
// any knob setting could gain, and a one-line verdict. Definitions: simulator/diagnosis.h.
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "simulator/cpu_share.h"
#include "simulator/diagnosis.h"
#include "simulator/stored_simulation.h"
#include "store/store.h"
#include "tools/command.h"
#include "tools/help_defaults.h"

namespace autotune::cli {
namespace {

struct DiagnoseOptions {
  std::string db = "autotune.db";
  int64_t run = 0;
  bool json = false;
};

// One step's parts as JSON, milliseconds.
nlohmann::json PartsToJson(const sim::StepDiagnosis& d) {
  return nlohmann::json{{"step", d.step},
                        {"step_ms", d.step_ms},
                        {"compute_ms", d.compute_ms},
                        {"rank_skew_ms", d.rank_skew_ms},
                        {"exposed_comm_ms", d.exposed_comm_ms()},
                        {"negotiation_ms", d.negotiation_ms},
                        {"cycle_wait_ms", d.cycle_wait_ms},
                        {"copy_ms", d.copy_ms},
                        {"collective_ms", d.collective_ms},
                        {"total_comm_ms", d.total_comm_ms},
                        {"hidden_comm_ms", d.hidden_comm_ms()},
                        {"comm_cpu_ms", d.comm_cpu_ms},
                        {"ideal_step_ms", d.ideal_step_ms()}};
}

// The diagnosis as one JSON object: the median step's parts at the top level, every step's
// under "per_step".
void PrintJson(const RunInfo& run, const sim::Diagnosis& d, const std::string& cpu_share,
               const sim::ReplayOptions* replay) {
  nlohmann::json out = PartsToJson(d.median());
  out["median_step"] = out["step"];
  out.erase("step");
  out["run"] = run.id;
  out["kind"] = RunKindName(run.kind);
  out["workload"] = run.workload.name;
  out["topology"] = run.topology.key();
  out["steps"] = d.steps.size();
  out["max_gain_fraction"] = d.max_gain_fraction;
  out["max_gain_quartiles"] = {d.gain_quartile_low, d.gain_quartile_high};
  out["max_gain_halves"] = {d.gain_first_half, d.gain_second_half};
  out["max_gain_steps"] = d.gain_steps;
  out["max_gain_trend_z"] = d.gain_trend_z;
  out["drifting"] = d.drifting;
  out["noise_fraction"] = sim::kTuningNoiseFraction;
  out["verdict"] = d.verdict_line;
  out["verdict_kind"] = sim::DiagnosisVerdictName(d.verdict);
  out["cpu_share"] = cpu_share;
  out["comm_scale"] = replay != nullptr ? nlohmann::json(replay->comm_scale) : nullptr;
  out["comm_contention"] = replay != nullptr ? nlohmann::json(replay->comm_contention) : nullptr;
  nlohmann::json steps = nlohmann::json::array();
  for (const sim::StepDiagnosis& s : d.steps) steps.push_back(PartsToJson(s));
  out["per_step"] = std::move(steps);
  std::cout << out.dump() << "\n";
}

// One row of the parts table: name, milliseconds, percent of the step, a note.
void PrintRow(const char* name, double ms, double step_ms, const std::string& note = "") {
  std::printf("  %-16s %10.3f %6.1f%%%s\n", name, ms, step_ms > 0 ? 100.0 * ms / step_ms : 0.0,
              note.c_str());
}

// The diagnosis as a small table of the median step's parts, the totals and the verdict.
void PrintTable(const RunInfo& run, const sim::Diagnosis& d, const std::string& cpu_share,
                const sim::ReplayOptions* replay) {
  const sim::StepDiagnosis& m = d.median();
  std::printf("run %lld (%s, %s, %s): median of %zu steps is step %d\n",
              static_cast<long long>(run.id), RunKindName(run.kind), run.workload.name.c_str(),
              run.topology.key().c_str(), d.steps.size(), m.step);
  std::printf("  %-16s %10s %7s\n", "part", "ms", "%");
  char skew[64];
  std::snprintf(skew, sizeof skew, "  (rank skew %.3f ms)", m.rank_skew_ms);
  PrintRow("compute", m.compute_ms, m.step_ms, m.rank_skew_ms > 0 ? skew : "");
  if (m.comm_cpu_ms > 0.0) {
    PrintRow("  of it, slowed", m.comm_cpu_ms, m.step_ms, "  (by the communication's CPU)");
  }
  PrintRow("negotiation", m.negotiation_ms, m.step_ms);
  PrintRow("cycle wait", m.cycle_wait_ms, m.step_ms);
  PrintRow("fusion copies", m.copy_ms, m.step_ms);
  PrintRow("collectives", m.collective_ms, m.step_ms);
  PrintRow("step", m.step_ms, m.step_ms);
  std::printf("communication: %.3f ms in all, %.3f ms hidden behind compute, %.3f ms exposed\n",
              m.total_comm_ms, m.hidden_comm_ms(), m.exposed_comm_ms());
  std::printf(
      "most any setting could gain: %.1f%% (the median over the last %zu of the %zu steps of "
      "each step's exposed share%s; over every step their middle half %.1f-%.1f%%; the median "
      "step without communication overhead: %.3f ms)\n",
      100.0 * d.max_gain_fraction, d.gain_steps, d.steps.size(),
      m.comm_cpu_ms > 0.0 ? " and compute slowed by communication" : "",
      100.0 * d.gain_quartile_low, 100.0 * d.gain_quartile_high, m.ideal_step_ms());
  std::printf("%s\n", cpu_share.c_str());
  if (replay != nullptr) {
    std::printf(
        "communication slowed by compute: a collective beside the compute takes %.3fx its time "
        "after it (those after: %.3fx the network model)\n",
        replay->comm_contention, replay->comm_scale);
  }
  std::printf("verdict: %s\n", d.verdict_line.c_str());
}

int RunDiagnose(const DiagnoseOptions& opts) {
  std::unique_ptr<Store> store;
  Status s = Store::Open(opts.db, Store::Mode::kReadOnly, &store);
  if (!s.ok()) return Fail(s);
  Trace trace;
  if (!(s = store->LoadTrace(opts.run, &trace)).ok()) return Fail(s);
  // The compute-slowdown parameters as a simulation of the run fits them (a calibration or
  // the run's own collectives; other imported runs of the job); a simulated run: those of the
  // simulation that made it (its source run's, predicting its topology); else the run's host
  // alone.
  sim::CpuShareParams cpu = sim::CpuShareOf(trace.run);
  std::string cpu_share = sim::DescribeCpuShare(cpu);  // the line matches what Diagnose uses
  sim::StoredSimulation loaded;
  const bool simulated = trace.run.kind == RunKind::kSimulated && trace.run.source_run > 0;
  sim::TargetShape target;
  if (simulated) target = {trace.run.topology.nodes, trace.run.topology.ranks_per_node};
  if (sim::LoadSimulation(*store, simulated ? trace.run.source_run : opts.run, target,
                          sim::IfUncalibrated::kNoSimulation, &loaded)
          .ok() &&
      loaded.simulation) {
    cpu = loaded.simulation->options().cpu;
    cpu_share = loaded.simulation->DescribeCpuShare();
  }
  const sim::ReplayOptions* replay =
      loaded.simulation ? &loaded.simulation->options() : nullptr;
  sim::Diagnosis diagnosis;
  if (!(s = sim::Diagnose(trace, &diagnosis, cpu)).ok()) return Fail(s);
  if (opts.json) {
    PrintJson(trace.run, diagnosis, cpu_share, replay);
  } else {
    PrintTable(trace.run, diagnosis, cpu_share, replay);
  }
  return 0;
}

}  // namespace

void AddDiagnoseCommand(CLI::App& root, Action* action) {
  auto opts = std::make_shared<DiagnoseOptions>();
  CLI::App* app = root.add_subcommand(
      "diagnose",
      "Where a run's step time goes (compute, negotiation, cycle wait, fusion "
      "copies, collectives), the most any knob setting could gain, and a verdict");
  PrintDefaultsInDescriptions(app);
  app->add_option("--run", opts->run, "Run id (recorded or imported)")->required();
  app->add_option("--db", opts->db, "SQLite database file.")->capture_default_str();
  app->add_flag("--json", opts->json, "Print one JSON object on stdout");
  app->callback([opts, action] { *action = [opts]() -> int { return RunDiagnose(*opts); }; });
}

}  // namespace autotune::cli
