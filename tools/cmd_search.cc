// `autotune search`: offline multi-fidelity tuning from a database. Simulates settings chosen by
// the tuner on run ID's trace (not a blind grid), blends them with every measured sample of the
// same workload, scale and topology, writes the best setting and the next ones worth measuring.
// The database is only read, except with --live (tools/search_live.h), where `autotune record`
// adds the measurements.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "simulator/simulation.h"
#include "tools/command.h"
#include "tools/knob_flags.h"
#include "tools/search_live.h"
#include "tools/tuning_io.h"
#include "traces/config_file.h"
#include "traces/store.h"
#include "tuner/bayes_search.h"
#include "tuner/knob_space.h"

namespace autotune::cli {
namespace {

using tuner::BayesSearch;
using tuner::Fidelity;
using tuner::Observation;
using tuner::Point;
using tuner::Space;

std::string Gbps(double bytes_per_s) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.4g GB/s", bytes_per_s / 1e9);
  return buffer;
}

// Everything the search needs, loaded from the database and the flags.
struct Inputs {
  RunInfo run;
  Knobs base;  // defaults + constants
  Space space;
  std::optional<sim::Simulation> simulation;  // empty when no calibration exists
  std::vector<Observation> measured;
  int skipped_measured = 0;  // samples of another scale or with a moved constant
};

Status LoadInputs(const SearchFlags& flags, Inputs* in) {
  std::set<std::string> constants;
  AUTOTUNE_RETURN_IF_ERROR(flags.knobs.Resolve(&in->base, &constants));
  std::unique_ptr<Store> store;
  AUTOTUNE_RETURN_IF_ERROR(Store::Open(flags.db, Store::Mode::kReadOnly, &store));
  Trace trace;
  AUTOTUNE_RETURN_IF_ERROR(store->LoadTrace(flags.run, &trace));
  in->run = trace.run;
  if (in->run.kind != "measured" || trace.steps.empty()) {
    return Status::InvalidArgument("run " + std::to_string(flags.run) +
                                   " has no recorded trace to simulate from (kind " + in->run.kind +
                                   ", " + std::to_string(trace.steps.size()) + " steps)");
  }
  in->space = tuner::KnobSearchSpace(in->run.backend == "nccl" ? tuner::KnobBackend::kNccl
                                                               : tuner::KnobBackend::kMpi);
  for (const std::string& name : constants) {
    if (in->space.IndexOf(name) < 0) continue;  // a knob of the other backend: stays in base
    AUTOTUNE_RETURN_IF_ERROR(
        in->space.SetConstantText(name, KnobValue(in->base, name)).WithPrefix("constant " + name));
  }
  // The simulator does not model the backend's own algorithm knobs: left free, the model
  // would pick them at random. They stay at their given or default value unless asked.
  for (int i = 0; i < in->space.num_dimensions() && !flags.tune_backend_knobs; ++i) {
    const tuner::Dimension& d = in->space.dimension(i);
    if (d.lifetime != tuner::Lifetime::kPerLaunch || in->space.is_constant(i)) continue;
    AUTOTUNE_RETURN_IF_ERROR(in->space.SetConstantText(d.name, KnobValue(in->base, d.name)));
  }
  Calibration calibration;
  Status found = store->FindCalibration(in->run.topology, in->run.backend, &calibration);
  if (found.ok()) {
    in->simulation.emplace();
    AUTOTUNE_RETURN_IF_ERROR(
        sim::Simulation::Build(trace, calibration, std::nullopt, &*in->simulation));
  } else if (found.code() != Status::Code::kNotFound) {
    return found;
  }
  std::vector<Sample> samples;
  AUTOTUNE_RETURN_IF_ERROR(store->ListSamples(in->run.workload.name, in->run.topology, &samples));
  for (const Sample& sample : samples) {
    if (sample.fidelity != autotune::Fidelity::kMeasured) continue;
    RunInfo origin;
    Point point;
    if (!store->GetRun(sample.run_id, &origin).ok() || origin.scale != in->run.scale ||
        origin.backend != in->run.backend || !KnobsToPoint(in->space, sample.knobs, &point).ok() ||
        !in->space.Validate(point).ok()) {
      ++in->skipped_measured;
      continue;
    }
    in->measured.push_back({point, Fidelity::kMeasured, sample.score_bytes_per_s});
  }
  return Status::Ok();
}

nlohmann::json SettingJson(const Space& space, const Point& point, const Knobs& base) {
  Knobs knobs;
  (void)PointToKnobs(space, point, base, &knobs);
  return KnobsToJson(knobs);
}

// One setting the search reports: where it is, what the measured-fidelity model predicts there,
// and what was measured there (if anything).
struct Reported {
  Point point;
  tuner::Prediction prediction;
  int measured_count = 0;
  double measured_mean = 0.0;
};

StatusOr<Reported> Report(BayesSearch& search, const Point& point) {
  Reported r;
  r.point = point;
  StatusOr<tuner::Prediction> p = search.Predict(Fidelity::kMeasured, point);
  if (!p.ok()) return p.status();
  r.prediction = *p;
  for (const Observation& o : search.observations()) {
    if (o.fidelity == Fidelity::kMeasured && o.point == point) {
      r.measured_mean += o.score;
      ++r.measured_count;
    }
  }
  if (r.measured_count > 0) r.measured_mean /= r.measured_count;
  return r;
}

// Whether `best` is shown to beat the default: only with both measured and a gap beyond two
// standard deviations of the model's uncertainty; otherwise says what evidence is missing.
std::string BeatsDefault(const Reported& best, const Reported& def) {
  if (best.point == def.point) return "is the default";
  if (best.measured_count == 0) return "not shown: predicted, not measured yet";
  if (def.measured_count == 0) return "not shown: the default was never measured";
  const double gap = best.prediction.mean - def.prediction.mean;
  const double spread = std::sqrt(best.prediction.variance + def.prediction.variance);
  return gap > 2.0 * spread ? "yes" : "not shown: within the model's uncertainty";
}

std::string ProposalPath(const std::string& out, int index) {
  std::string stem = out;
  for (const char* ext : {".yaml", ".yml"}) {
    const std::string e(ext);
    if (stem.size() > e.size() && stem.compare(stem.size() - e.size(), e.size(), e) == 0) {
      stem.resize(stem.size() - e.size());
      break;
    }
  }
  return stem + ".next" + std::to_string(index) + ".yaml";
}

int WriteResults(const SearchFlags& flags, const Inputs& in, BayesSearch& search, Round* round) {
  const Space& space = in.space;
  const int measured = search.count(Fidelity::kMeasured);
  const int simulated = search.count(Fidelity::kSimulated);
  if (measured + simulated == 0) {
    return Fail("search: no measured samples of " + in.run.workload.name + " on " +
                in.run.topology.key() +
                " and no calibration to simulate with; run `autotune "
                "calibrate` (and `autotune record`) first");
  }
  // The best setting: the measured setting with the best posterior mean, unless a setting only
  // simulated is predicted better by more than two standard deviations of the difference (then
  // it is written, saying it is a prediction). Without measured samples, the best prediction.
  std::optional<Reported> best_measured, best_predicted;
  std::set<Point> seen;
  for (const Observation& o : search.observations()) {
    if (!seen.insert(o.point).second) continue;
    StatusOr<Reported> r = Report(search, o.point);
    if (!r.ok()) return Fail(r.status().WithPrefix("search"));
    std::optional<Reported>& slot = r->measured_count > 0 ? best_measured : best_predicted;
    if (!slot || r->prediction.mean > slot->prediction.mean) slot = *r;
  }
  std::optional<Reported> best = best_measured ? best_measured : best_predicted;
  if (best_measured && best_predicted) {
    const double gap = best_predicted->prediction.mean - best_measured->prediction.mean;
    const double spread =
        std::sqrt(best_predicted->prediction.variance + best_measured->prediction.variance);
    if (gap > 2.0 * spread) best = best_predicted;
  }
  StatusOr<Reported> def = Report(search, space.Default());
  if (!def.ok()) return Fail(def.status().WithPrefix("search"));

  // What to measure next: the default if it never was, then the tuner's proposals, unless
  // the budget is spent or nothing is expected to improve.
  std::string stop_reason;
  std::vector<tuner::Suggestion> proposals;
  if (def->measured_count == 0) {
    tuner::Suggestion s;
    s.point = def->point;
    s.prediction = def->prediction;
    s.origin = "default, never measured";
    proposals.push_back(s);
  }
  const int wanted = flags.propose - static_cast<int>(proposals.size());
  if (measured >= flags.max_samples) {
    stop_reason = tuner::StopReasonName(tuner::StopReason::kBudgetSpent);
  } else if (wanted > 0) {
    StatusOr<std::vector<tuner::Suggestion>> batch =
        search.SuggestBatch(Fidelity::kMeasured, wanted);
    if (!batch.ok()) return Fail(batch.status().WithPrefix("search"));
    StatusOr<tuner::Incumbent> incumbent = search.Best(Fidelity::kMeasured);
    const tuner::Suggestion& first = batch->front();
    if (incumbent.ok() && measured >= 3 && first.origin == "expected improvement" &&
        first.expected_improvement < flags.min_ei_ratio * std::fabs(incumbent->prediction.mean)) {
      stop_reason = tuner::StopReasonName(tuner::StopReason::kExpectedImprovementBelowThreshold);
    } else {
      for (const tuner::Suggestion& s : *batch) {
        if (s.point != def->point || def->measured_count > 0) proposals.push_back(s);
      }
    }
  }

  auto provenance = [&](const Reported& r, const std::string& evidence) {
    nlohmann::json p = {{"db", flags.db},
                        {"run", in.run.id},
                        {"evidence", evidence},
                        {"predicted_score", r.prediction.mean},
                        {"predicted_stddev", std::sqrt(r.prediction.variance)},
                        {"measured_samples", measured},
                        {"simulated_samples", simulated},
                        {"rho", search.rho()}};
    if (r.measured_count > 0) p["measured_score"] = r.measured_mean;
    return p;
  };
  ConfigFile best_config;
  Status status = PointToKnobs(space, best->point, in.base, &best_config.knobs);
  if (!status.ok()) return Fail(status);
  const std::string evidence = best->measured_count > 0
                                   ? "measured " + std::to_string(best->measured_count) + "x"
                                   : (measured > 0 ? "predicted by co-kriging, not measured yet"
                                                   : "simulated only, not measured yet");
  nlohmann::json best_provenance = provenance(*best, evidence);
  best_provenance["beats_default"] = BeatsDefault(*best, *def);
  best_provenance["default_predicted_score"] = def->prediction.mean;
  best_config.provenance_json = best_provenance.dump();
  status = SaveConfigFile(flags.out, best_config);
  if (!status.ok()) return Fail(status);

  nlohmann::json proposal_list = nlohmann::json::array();
  for (size_t i = 0; i < proposals.size(); ++i) {
    const tuner::Suggestion& s = proposals[i];
    ConfigFile config;
    status = PointToKnobs(space, s.point, in.base, &config.knobs);
    if (!status.ok()) return Fail(status);
    Reported r{s.point, s.prediction, 0, 0.0};
    nlohmann::json p = provenance(r, "proposal: " + s.origin);
    p["expected_improvement"] = s.expected_improvement;
    config.provenance_json = p.dump();
    const std::string path = ProposalPath(flags.out, static_cast<int>(i) + 1);
    status = SaveConfigFile(path, config);
    if (!status.ok()) return Fail(status);
    round->proposal_files.push_back(path);
    proposal_list.push_back({{"file", path},
                             {"origin", s.origin},
                             {"knobs", KnobsToJson(config.knobs)},
                             {"predicted_score_bytes_per_s", s.prediction.mean},
                             {"predicted_stddev", std::sqrt(s.prediction.variance)},
                             {"expected_improvement", s.expected_improvement}});
  }

  round->stop_reason = stop_reason;
  if (flags.json) {
    nlohmann::json j = {{"run", in.run.id},
                        {"workload", in.run.workload.name},
                        {"topology", in.run.topology.key()},
                        {"backend", in.run.backend},
                        {"simulated_samples", simulated},
                        {"measured_samples", measured},
                        {"skipped_measured_samples", in.skipped_measured},
                        {"rho", search.rho()},
                        {"stop_reason", stop_reason},
                        {"best",
                         {{"file", flags.out},
                          {"knobs", KnobsToJson(best_config.knobs)},
                          {"predicted_score_bytes_per_s", best->prediction.mean},
                          {"predicted_stddev", std::sqrt(best->prediction.variance)},
                          {"evidence", evidence},
                          {"beats_default", best_provenance["beats_default"]}}},
                        {"default",
                         {{"knobs", SettingJson(space, def->point, in.base)},
                          {"predicted_score_bytes_per_s", def->prediction.mean},
                          {"measured", def->measured_count > 0}}},
                        {"proposals", proposal_list}};
    if (best->measured_count > 0) j["best"]["measured_score_bytes_per_s"] = best->measured_mean;
    std::cout << j.dump() << "\n";
    return 0;
  }
  std::cout << "search: run " << in.run.id << " (" << in.run.workload.name << ", "
            << in.run.topology.key() << ", " << in.run.backend << "): " << simulated
            << " simulated, " << measured << " measured samples";
  if (in.skipped_measured > 0) std::cout << " (" << in.skipped_measured << " skipped)";
  std::cout << ", rho " << search.rho() << "\n";
  std::cout << "best: " << KnobsShort(best_config.knobs) << "  predicted "
            << Gbps(best->prediction.mean) << " +- " << Gbps(std::sqrt(best->prediction.variance))
            << " (" << evidence
            << "; beats default: " << best_provenance["beats_default"].get<std::string>() << ") -> "
            << flags.out << "\n";
  for (const nlohmann::json& p : proposal_list) {
    std::cout << "measure next: " << p["file"].get<std::string>() << " ("
              << p["origin"].get<std::string>() << ", predicted "
              << Gbps(p["predicted_score_bytes_per_s"].get<double>()) << ")\n";
  }
  if (!stop_reason.empty()) std::cout << "stop: " << stop_reason << "\n";
  return 0;
}

}  // namespace

int RunSearch(const SearchFlags& flags, Round* round) {
  Inputs in;
  Status status = LoadInputs(flags, &in);
  if (!status.ok()) return Fail(status);
  const Space& space = in.space;
  if (space.encoded_size() == 0) return Fail("search: every knob is a constant; nothing to tune");
  SampleLog log;
  status = log.Open(flags.log_file);
  if (!status.ok()) return Fail(status);

  tuner::SearchOptions options;
  options.max_measured_samples = flags.max_samples;
  options.seed = flags.seed;
  options.refit_period = 20;
  options.model.residual_gp.fixed_noise_stddev = flags.gp_noise;
  options.model.simulated_gp.seed = flags.seed;
  options.model.residual_gp.seed = flags.seed;
  BayesSearch search(space, options);
  auto simulate = [&](const Point& point) {
    return ObserveSimulated(*in.simulation, in.base, &log, &search, point);
  };
  // Measured samples first, each simulated too (co-kriging wants nested designs); the default
  // is always simulated.
  for (const Observation& o : in.measured) {
    Knobs knobs;
    (void)PointToKnobs(space, o.point, in.base, &knobs);
    log.Write(knobs, "measured", o.score);
    status = search.Observe(o);
    if (!status.ok()) return Fail(status.WithPrefix("measured sample"));
  }
  const Point default_point = space.Default();
  if (in.simulation) {
    std::set<Point> simulated;
    for (const Observation& o : in.measured) {
      if (simulated.insert(o.point).second) status = simulate(o.point);
      if (!status.ok()) return Fail(status);
    }
    if (!simulated.count(default_point)) status = simulate(default_point);
    if (!status.ok()) return Fail(status);
    for (int i = 0; i < flags.sim_budget; ++i) {
      StatusOr<tuner::Suggestion> next = search.Suggest(Fidelity::kSimulated);
      if (!next.ok()) return Fail(next.status().WithPrefix("search"));
      status = simulate(next->point);
      if (!status.ok()) return Fail(status);
      if ((i + 1) % 20 == 0 || i + 1 == flags.sim_budget) {
        StatusOr<tuner::Incumbent> best = search.Best(Fidelity::kSimulated);
        std::cerr << "search: simulated " << i + 1 << "/" << flags.sim_budget
                  << " settings, best predicted " << (best.ok() ? Gbps(best->prediction.mean) : "?")
                  << "\n";
      }
    }
  } else {
    std::cerr << "search: note: no calibration for " << in.run.topology.key() << " ("
              << in.run.backend << "); measured samples only. Run `autotune calibrate` to add "
              << "the simulator.\n";
  }
  return WriteResults(flags, in, search, round);
}

void AddSearchCommand(CLI::App& root, Action* action) {
  auto flags = std::make_shared<SearchFlags>();
  CLI::App* app = root.add_subcommand(
      "search",
      "Tune the knobs offline (simulator + measured samples, multi-fidelity GP); write the best "
      "setting and the next ones worth measuring");
  app->footer(
      "Simulates settings the tuner picks on run ID's trace (not a grid), blends them with every\n"
      "measured sample of the same workload, scale and topology (co-kriging), writes the best\n"
      "setting to --out with its prediction and evidence, and the next settings worth measuring\n"
      "to OUT.next1.yaml ... Knobs given as flags or in --config-file are constants, never tuned.\n"
      "The database is only read. Record a proposal with `autotune record --config-file F`.");
  app->add_option("--db", flags->db, "SQLite database file. Default ./autotune.db");
  app->add_option("--run", flags->run, "Recorded run whose trace the simulator replays")
      ->required();
  app->add_option("--sim-budget", flags->sim_budget,
                  "Settings to simulate, chosen by expected improvement. Default 120")
      ->check(CLI::NonNegativeNumber);
  app->add_option("--max-samples,--autotune-bayes-opt-max-samples,--autotune-max-samples",
                  flags->max_samples,
                  "Measured-sample budget: with this many measured samples, stop proposing. "
                  "Default 20")
      ->check(CLI::PositiveNumber);
  app->add_option("--propose", flags->propose,
                  "Settings to propose for measurement, one YAML each (OUT.next1.yaml, ...); "
                  "the default comes first while it was never measured. Default 1")
      ->check(CLI::NonNegativeNumber);
  app->add_option("--out", flags->out, "Config file for the best setting (YAML)")->required();
  app->add_flag("--json", flags->json, "Print a JSON summary on stdout");
  app->add_option("--autotune-log-file", flags->log_file,
                  "CSV, one row per sample: Horovod's columns first (hierarchical_allreduce, "
                  "hierarchical_allgather, cycle_time_ms, tensor_fusion_threshold in MB, score in "
                  "bytes/us), then the other knobs, fidelity, score_bytes_per_s");
  app->add_option("--autotune-gaussian-process-noise", flags->gp_noise,
                  "Fixed noise standard deviation of measured scores, in units of their spread "
                  "(Horovod's meaning); a negative value learns it from the data. Default 0.8 "
                  "(Horovod's)");
  app->add_option("--min-expected-improvement", flags->min_ei_ratio,
                  "Stop proposing when the expected improvement is below this fraction of the "
                  "best predicted score. Default 0.002");
  app->add_option("--seed", flags->seed, "Random seed of the tuner. Default 1");
  app->add_flag("--tune-backend-knobs", flags->tune_backend_knobs,
                "Also tune the per-launch backend knobs (MPI/NCCL algorithm settings). The "
                "simulator does not model them, so only measured samples inform them. Default: "
                "they keep their given or default value");
  flags->knobs.Add(app);
  app->add_flag("--live", flags->live,
                "Measure the proposals too: run `autotune record --config-file OUT.nextI.yaml` "
                "through --launcher for each, then search again, until --max-samples measured "
                "samples exist or nothing is worth measuring (prints one summary per round)");
  app->add_option("--launcher", flags->launcher,
                  "Command prefix that launches `autotune record` on the cluster, e.g. \"mpirun "
                  "-np 4 --hostfile hosts\". Default: record's own --np with the run's rank "
                  "count on this machine");
  app->add_option("--autotune-warmup-samples", flags->warmup_steps,
                  "--live: warm-up steps played and discarded before each measured sample. "
                  "Default 3")
      ->check(CLI::NonNegativeNumber);
  app->add_option("--autotune-steps-per-sample", flags->steps_per_sample,
                  "--live: measured steps per sample (one record run). Default 10")
      ->check(CLI::PositiveNumber);
  app->add_option("--autotune-warmup-time-s", flags->warmup_time_s,
                  "--live: warm-up time per sample in seconds (Bagua's autotune_warmup_time), "
                  "instead of --autotune-warmup-samples: ceil(time / the run's median step "
                  "time) warm-up steps")
      ->check(CLI::NonNegativeNumber);
  app->add_option("--autotune-sampling-confidence-time-s", flags->sampling_confidence_time_s,
                  "--live: time each measured sample lasts, in seconds (Bagua's "
                  "autotune_sampling_confidence_time), instead of --autotune-steps-per-sample: "
                  "ceil(time / the run's median step time) steps")
      ->check(CLI::PositiveNumber);
  app->callback([flags, action] {
    *action = [flags]() -> int {
      if (flags->live) return RunLive(*flags);
      Round round;
      return RunSearch(*flags, &round);
    };
  });
}

}  // namespace autotune::cli
