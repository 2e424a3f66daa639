// `autotune simulate`: replays a recorded run under other knob settings with the network
// model of its topology's calibration, prints the predicted step time and score, and
// stores the predictions (simulated samples, and simulated runs `compare` can read).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <set>

#include "formats/config_file.h"
#include "simulator/grid.h"
#include "simulator/simulation.h"
#include "simulator/stored_simulation.h"
#include "simulator/timeline_csv.h"
#include "store/store.h"
#include "tools/command.h"
#include "tools/flag_checks.h"
#include "tools/help_defaults.h"
#include "tools/knob_flags.h"
#include "traces/knob_table.h"

namespace autotune::cli {
namespace {

struct SimulateOptions {
  std::string db = "autotune.db";
  int64_t run = 0;
  std::vector<std::string> config_files;
  bool grid = false;
  int nodes = 0;
  int ranks_per_node = 0;
  std::string timeline;
  bool json = false;
  bool explain = false;
  int threads = 0;
  KnobFlags knobs;
};

// Everything checked and computed before the first write.
struct Plan {
  RunInfo run;
  Calibration calibration;
  std::string network_source;  // StoredSimulation::network_source
  sim::Simulation simulation;
  std::vector<Knobs> settings;
  std::vector<sim::SettingResult> results;
  std::vector<int> stored;  // settings that also get a simulated run, in settings order
  std::vector<std::vector<StepTrace>> timelines;  // one per stored setting
  double evaluate_s = 0.0;
};

// The knob settings to simulate: the traced run's knobs, overridden by each config file's
// knobs (one setting per file), overridden by the flags given; a grid around that when
// asked. Every setting is validated.
Status ResolveSettings(const SimulateOptions& o, const RunInfo& run, const Topology& target,
                       std::vector<Knobs>* settings) {
  Knobs flag_values;
  std::set<std::string> flag_set;
  AUTOTUNE_RETURN_IF_ERROR(o.knobs.Resolve(&flag_values, &flag_set));
  auto apply = [](const Knobs& from, const std::set<std::string>& names, Knobs* to) {
    for (const std::string& name : names) {
      AUTOTUNE_RETURN_IF_ERROR(SetKnob(to, name, KnobValue(from, name)));
    }
    return Status::Ok();
  };
  std::vector<std::pair<Knobs, std::set<std::string>>> bases;
  if (o.config_files.empty()) bases.push_back({run.knobs, {}});
  for (const std::string& path : o.config_files) {
    ConfigFile config;
    AUTOTUNE_RETURN_IF_ERROR(LoadConfigFile(path, &config));
    Knobs k = run.knobs;
    AUTOTUNE_RETURN_IF_ERROR(apply(config.knobs, config.set_knobs, &k));
    bases.push_back({k, config.set_knobs});
  }
  for (auto& [knobs, constants] : bases) {
    AUTOTUNE_RETURN_IF_ERROR(apply(flag_values, flag_set, &knobs));
    constants.insert(flag_set.begin(), flag_set.end());
    AUTOTUNE_RETURN_IF_ERROR(knobs.Validate());
    if (!o.grid) {
      settings->push_back(knobs);
      continue;
    }
    const bool has_allgather =
        std::any_of(run.workload.tensors.begin(), run.workload.tensors.end(),
                    [](const TensorSpec& t) { return t.op == Op::kAllgather; });
    for (const Knobs& k : sim::KnobGrid(knobs, constants, target, has_allgather, run.framework)) {
      if (std::find(settings->begin(), settings->end(), k) == settings->end()) {
        settings->push_back(k);
      }
    }
  }
  return Status::Ok();
}

// The knob flags checked against the run before anything is loaded for it: a knob of the other
// framework (which the replay would ignore) or out of its range is refused first.
Status CheckKnobFlags(const SimulateOptions& o, Store* store) {
  RunInfo run;
  AUTOTUNE_RETURN_IF_ERROR(store->GetRun(o.run, &run));
  Knobs flag_values;
  std::set<std::string> flag_set;
  AUTOTUNE_RETURN_IF_ERROR(o.knobs.Resolve(&flag_values, &flag_set));
  Knobs knobs = run.knobs;
  for (const std::string& name : flag_set) {
    const KnobSpec* spec = FindKnob(name);
    if (spec != nullptr && !KnobInFramework(*spec, run.framework)) {
      return Status::InvalidArgument(std::string(spec->flag) + " is a knob of " +
                                     (run.framework == Framework::kDdp ? "Horovod" : "PyTorch DDP") +
                                     "; run " + std::to_string(run.id) + " is a " +
                                     FrameworkName(run.framework) + " run");
    }
    AUTOTUNE_RETURN_IF_ERROR(SetKnob(&knobs, name, KnobValue(flag_values, name)));
  }
  return knobs.Validate();
}

Status MakePlan(const SimulateOptions& o, Store* store, Plan* plan) {
  AUTOTUNE_RETURN_IF_ERROR(CheckKnobFlags(o, store));
  sim::StoredSimulation loaded;
  AUTOTUNE_RETURN_IF_ERROR(sim::LoadSimulation(*store, o.run, {o.nodes, o.ranks_per_node},
                                               sim::IfUncalibrated::kFail, &loaded));
  plan->run = loaded.run;
  plan->calibration = loaded.network.calibration;
  plan->network_source = loaded.network.source;
  plan->simulation = std::move(*loaded.simulation);
  AUTOTUNE_RETURN_IF_ERROR(
      ResolveSettings(o, plan->run, plan->simulation.topology(), &plan->settings));

  const auto start = std::chrono::steady_clock::now();
  plan->results = plan->simulation.EvaluateAll(plan->settings, o.threads);
  plan->evaluate_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (o.grid) {
    const auto best = std::min_element(
        plan->results.begin(), plan->results.end(),
        [](const auto& a, const auto& b) { return a.step_ms_median < b.step_ms_median; });
    plan->stored.push_back(static_cast<int>(best - plan->results.begin()));
  } else {
    plan->stored.resize(plan->settings.size());
    std::iota(plan->stored.begin(), plan->stored.end(), 0);
  }
  for (int i : plan->stored) {
    plan->timelines.emplace_back();
    plan->simulation.Evaluate(plan->settings[i], &plan->timelines.back());
  }
  return Status::Ok();
}

// Writes the simulated runs and the samples. Returns the simulated run id per setting (0
// for settings without one) and the sample ids.
Status WriteResults(const Plan& plan, const std::string& command, Store* store,
                    std::vector<int64_t>* run_ids, std::vector<int64_t>* sample_ids) {
  run_ids->assign(plan.settings.size(), 0);
  std::unique_ptr<Store::WriteBatch> batch = store->BeginWrite();  // all of it or nothing
  AUTOTUNE_RETURN_IF_ERROR(batch->status());
  for (size_t k = 0; k < plan.stored.size(); ++k) {
    const int i = plan.stored[k];
    RunInfo info = plan.run;
    info.kind = RunKind::kSimulated;
    info.command = command;
    info.knobs = plan.settings[i];
    info.topology = plan.simulation.topology();
    // The host the simulation modelled: on a retargeted topology an emulated cluster's one
    // host holds every node (simulator/simulation.cc, RetargetCpuShare).
    const sim::CpuShareParams& cpu = plan.simulation.options().cpu;
    if (cpu.enabled()) {
      info.host.cores = cpu.cores;
      info.host.nodes_per_host = std::max(1, cpu.ranks / std::max(1, info.topology.ranks_per_node));
    }
    info.source_run = plan.run.id;
    info.hardware =
        "simulated from run " + std::to_string(plan.run.id) + " with " + plan.network_source;
    info.steps_planned = static_cast<int>(plan.timelines[k].size());
    info.warmup_steps = 0;
    AUTOTUNE_RETURN_IF_ERROR(store->CreateRun(&info));
    for (const StepTrace& step : plan.timelines[k]) {
      AUTOTUNE_RETURN_IF_ERROR(store->AppendStep(info.id, step));
    }
    AUTOTUNE_RETURN_IF_ERROR(store->FinishRun(info.id, true));
    (*run_ids)[i] = info.id;
  }
  std::vector<Sample> samples;
  for (size_t i = 0; i < plan.settings.size(); ++i) {
    Sample s;
    s.fidelity = Fidelity::kSimulated;
    s.run_id = (*run_ids)[i];
    s.trace_run_id = plan.run.id;
    s.calibration_id = plan.calibration.id;
    s.workload = plan.run.workload.name;
    s.topology = plan.simulation.topology();
    s.knobs = plan.settings[i];
    s.score_bytes_per_s = plan.results[i].score_bytes_per_s;
    s.step_ms = plan.results[i].step_ms_median;
    samples.push_back(std::move(s));
  }
  AUTOTUNE_RETURN_IF_ERROR(store->AddSamples(&samples));
  AUTOTUNE_RETURN_IF_ERROR(batch->Commit());
  sample_ids->clear();
  for (const Sample& s : samples) sample_ids->push_back(s.id);
  return Status::Ok();
}

void PrintHuman(const SimulateOptions& o, const Plan& plan, const std::vector<int64_t>& run_ids) {
  const RunInfo& run = plan.run;
  const sim::Simulation& sim = plan.simulation;
  std::printf(
      "run %lld: %s on %s, %zu recorded steps, recorded median %.3f ms; predicting %s (%d "
      "ranks)\nnetwork: %s\npredicts: %s\n%s\n",
      static_cast<long long>(run.id), run.workload.name.c_str(), run.topology.key().c_str(),
      sim.trace().steps().size(), run.step_ms_median, sim.topology().key().c_str(),
      sim.topology().world_size(), plan.network_source.c_str(), sim.predicts().c_str(),
      sim.DescribeCpuShare().c_str());
  if (!sim.assumption().empty()) std::printf("assumes: %s\n", sim.assumption().c_str());
  std::set<std::string> held;
  for (const Knobs& k : plan.settings) {
    const std::string note = sim.EagerLimitHeld(k);
    if (!note.empty() && held.insert(note).second) std::printf("holds: %s\n", note.c_str());
  }
  if (o.explain) std::printf("%s", sim.Describe().c_str());
  std::vector<size_t> order(plan.results.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return plan.results[a].step_ms_median < plan.results[b].step_ms_median;
  });
  const size_t shown = o.grid ? std::min<size_t>(order.size(), 15) : order.size();
  std::printf("  %-66s %12s %12s %14s\n", "setting", "step ms", "p95 ms", "score MB/s");
  for (size_t k = 0; k < shown; ++k) {
    const sim::SettingResult& r = plan.results[order[k]];
    std::printf("%s %-66s %12.3f %12.3f %14.1f\n", k == 0 && order.size() > 1 ? "*" : " ",
                KnobsShort(r.knobs, run.framework).c_str(), r.step_ms_median, r.step_ms_p95,
                r.score_bytes_per_s / 1e6);
  }
  if (shown < order.size()) std::printf("  ... %zu more settings\n", order.size() - shown);
  for (size_t i = 0; i < plan.results.size(); ++i) {
    if (plan.settings[i] == run.knobs && sim.topology().SameShape(run.topology)) {
      std::printf("recorded knobs: predicted %.3f ms vs recorded %.3f ms (%+.1f%%)\n",
                  plan.results[i].step_ms_median, run.step_ms_median,
                  100.0 * (plan.results[i].step_ms_median / run.step_ms_median - 1.0));
      break;
    }
  }
  const double replays = static_cast<double>(plan.settings.size()) * sim.trace().steps().size();
  std::printf("%zu setting%s x %zu steps simulated in %.3f s (%.0f step replays/s)\n",
              plan.settings.size(), plan.settings.size() == 1 ? "" : "s",
              sim.trace().steps().size(), plan.evaluate_s,
              plan.evaluate_s > 0 ? replays / plan.evaluate_s : 0.0);
  std::string runs;
  for (int64_t id : run_ids) {
    if (id > 0) runs += (runs.empty() ? "" : ", ") + std::to_string(id);
  }
  if (runs.empty()) {  // a read-only database
    if (!o.timeline.empty()) std::printf("timeline: %s\n", o.timeline.c_str());
    return;
  }
  std::printf(
      "stored %zu simulated sample%s; simulated run%s %s (compare with: autotune "
      "compare --db %s %lld %s)\n",
      plan.settings.size(), plan.settings.size() == 1 ? "" : "s",
      plan.stored.size() == 1 ? "" : "s", runs.c_str(), o.db.c_str(),
      static_cast<long long>(run.id), runs.substr(0, runs.find(',')).c_str());
  if (!o.timeline.empty()) std::printf("timeline: %s\n", o.timeline.c_str());
}

nlohmann::json CpuShareJson(const sim::CpuShareParams& c) {
  if (!c.enabled()) return nullptr;
  return {{"cores", c.cores},          {"ranks", c.ranks},
          {"sigma", c.sigma},          {"sigma_source", c.sigma_source},
          {"cycle_cpu_us", c.cycle_cpu_us}, {"cycle_cpu_share", c.cycle_cpu_share},
          {"tracer_cores", c.recorded_tau},
          {"tracer_source", c.tau_source}};
}

void PrintJson(const Plan& plan, const std::vector<int64_t>& run_ids,
               const std::vector<int64_t>& sample_ids) {
  nlohmann::json settings = nlohmann::json::array();
  size_t best = 0;
  for (size_t i = 0; i < plan.results.size(); ++i) {
    const sim::SettingResult& r = plan.results[i];
    if (r.step_ms_median < plan.results[best].step_ms_median) best = i;
    settings.push_back({{"knobs", KnobsToJson(r.knobs)},
                        {"step_ms_median", r.step_ms_median},
                        {"step_ms_p95", r.step_ms_p95},
                        {"score_bytes_per_s", r.score_bytes_per_s},
                        {"step_ms", r.step_ms},
                        {"sample", sample_ids[i]},
                        {"run", run_ids[i]}});
    const std::string held = plan.simulation.EagerLimitHeld(r.knobs);
    if (!held.empty()) settings.back()["holds"] = held;
  }
  const sim::SettingResult& first = plan.results[0];
  nlohmann::json out = {{"source_run", plan.run.id},
                        {"calibration", plan.calibration.id},
                        {"network", plan.network_source},
                        {"predicts", plan.simulation.predicts()},
                        {"assumes", plan.simulation.assumption()},
                        {"cpu_share", CpuShareJson(plan.simulation.options().cpu)},
                        {"comm_scale", plan.simulation.options().comm_scale},
                        {"comm_contention", plan.simulation.options().comm_contention},
                        {"workload", plan.run.workload.name},
                        {"recorded_topology", plan.run.topology.key()},
                        {"topology", plan.simulation.topology().key()},
                        {"recorded_step_ms_median", plan.run.step_ms_median},
                        {"run", run_ids[plan.stored.front()]},
                        {"step_ms_median", first.step_ms_median},
                        {"score_bytes_per_s", first.score_bytes_per_s},
                        {"best", best},
                        {"evaluate_s", plan.evaluate_s},
                        {"settings", settings}};
  std::cout << out.dump() << "\n";
}

int RunSimulate(const SimulateOptions& o, const std::string& command) {
  if (o.grid && o.config_files.size() > 1) {
    return Fail("--grid takes at most one --config-file (its knobs become constants)");
  }
  if (!std::filesystem::exists(o.db)) {
    return Fail("database " + o.db +
                " does not exist (record a run first: autotune record "
                "--np 4 --db " +
                o.db + ")");
  }
  // A read-only database (read-only media, another user's file) is still simulated from.
  const std::string read_only = Store::ReadOnlyReason(o.db);
  std::unique_ptr<Store> store;
  Status st = Store::Open(o.db, read_only.empty() ? Store::Mode::kReadWrite
                                                  : Store::Mode::kReadOnly, &store);
  if (!st.ok()) return Fail(st);
  Plan plan;
  st = MakePlan(o, store.get(), &plan);
  if (!st.ok()) return Fail(st);
  if (!o.timeline.empty()) {
    std::string csv = sim::TimelineCsvHeader();
    for (size_t k = 0; k < plan.stored.size(); ++k) {
      csv += sim::TimelineCsvRows(plan.stored[k], plan.timelines[k]);
    }
    st = sim::WriteTextFile(o.timeline, csv);
    if (!st.ok()) return Fail(st);
  }
  std::vector<int64_t> run_ids(plan.settings.size(), 0), sample_ids(plan.settings.size(), 0);
  if (read_only.empty()) {
    st = WriteResults(plan, command, store.get(), &run_ids, &sample_ids);
    if (!st.ok()) return Fail(st);
  } else {
    std::cerr << "autotune: note: " << o.db << " is read-only (" << read_only
              << "): predictions printed, not stored\n";
  }
  if (o.json) {
    PrintJson(plan, run_ids, sample_ids);
  } else {
    PrintHuman(o, plan, run_ids);
  }
  return 0;
}

// Here a knob not given keeps the traced run's value; the backend's own knobs are not
// modeled and stay as recorded, but for Open MPI's eager limit where calibrates at the limits
// exist (simulator/eager_limit.h).
std::string TracedRunDefault(const KnobSpec& spec) {
  if (spec.field == KnobField(&Knobs::mpi_tcp_eager_limit)) {
    return "Default: the traced run's value (modeled from mpi calibrates of the topology at "
           "the run's limit and at this one, `calibrate --mpi-tcp-eager-limit`; else held as "
           "recorded, and the output says so)";
  }
  return std::string("Default: the traced run's value") +
         (std::string(spec.flag_group) == "Knobs" ? "" : " (not modeled: kept as recorded)");
}

// --grid's help: the grid values of the knob table, per framework.
std::string GridHelp() {
  std::string runs;
  for (const Framework framework : {Framework::kHorovod, Framework::kDdp}) {
    std::string grid;
    for (const KnobSpec& spec : KnobTable()) {
      if (spec.grid_values.empty() || !KnobInFramework(spec, framework)) continue;
      std::string values;
      for (const std::string& v : spec.grid_values) values += (values.empty() ? "" : ",") + v;
      grid += (grid.empty() ? " " : " x ") + std::string(spec.name) + " {" + values + "}";
      if (*spec.unit != '\0') grid += std::string(" ") + spec.unit;
      if (spec.needs_hierarchy) {
        grid += spec.needs_allgather ? " (multi-node, with allgather tensors)" : " (multi-node)";
      }
    }
    if (grid.empty()) continue;
    runs += (runs.empty() ? "" : "; ") + std::string(FrameworkName(framework)) + " runs:" + grid;
  }
  return "Evaluate a grid of settings (" + runs + "); knobs given as flags stay constant. " +
         "Default off";
}

}  // namespace

void AddSimulateCommand(CLI::App& root, Action* action) {
  auto opts = std::make_shared<SimulateOptions>();
  CLI::App* app = root.add_subcommand(
      "simulate",
      "Replay a recorded or imported run under other knob settings (network model fitted to the "
      "calibration of its topology) and predict step time and score; stores the predictions "
      "as simulated samples and simulated runs");
  PrintDefaultsInDescriptions(app);
  app->add_option("--db", opts->db, "SQLite database file.")->capture_default_str();
  app->add_option("--run", opts->run, "Id of the measured or imported run whose trace to replay (required)")
      ->required()
      ->check(AtLeast(1));
  opts->knobs.Add(app, /*with_config_file=*/false, TracedRunDefault);
  app->add_option("--config-file", opts->config_files,
                  "YAML config (horovodrun's format); repeatable, one setting per file; flags "
                  "given override every file. Default: none")
      ->check(CLI::ExistingFile);
  app->add_flag("--grid", opts->grid, GridHelp());
  app->add_option("--nodes", opts->nodes,
                  "Predict this many nodes (extrapolation). Default: the traced run's")
      ->check(Between(1, 65536));
  app->add_option("--ranks-per-node", opts->ranks_per_node,
                  "Predict this many ranks per node. Default: the traced run's")
      ->check(Between(1, 1024));
  app->add_option("--timeline", opts->timeline,
                  "Write the predicted per-collective timeline (CSV, times in us from the step "
                  "start) to this file. Default: none");
  app->add_option("--threads", opts->threads, "Threads evaluating settings; 0 = all cores.")
      ->capture_default_str()
      ->check(Between(0, 1024));
  app->add_flag("--explain", opts->explain,
                "Also print the fitted network and negotiation models. Default off");
  app->add_flag("--json", opts->json, "Print one JSON object on stdout. Default off");
  app->callback([opts, action] {
    std::string command =
        "autotune simulate --db " + opts->db + " --run " + std::to_string(opts->run);
    if (opts->grid) command += " --grid";
    if (opts->nodes > 0) command += " --nodes " + std::to_string(opts->nodes);
    if (opts->ranks_per_node > 0) {
      command += " --ranks-per-node " + std::to_string(opts->ranks_per_node);
    }
    for (const std::string& f : opts->config_files) command += " --config-file " + f;
    *action = [opts, command] { return RunSimulate(*opts, command); };
  });
}

}  // namespace autotune::cli
