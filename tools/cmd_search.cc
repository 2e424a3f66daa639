// `autotune search`: offline multi-fidelity tuning from a database. Simulates settings chosen by
// the tuner on run ID's trace (not a blind grid), blends them with every measured sample of the
// same workload, scale and topology, writes the best setting (the default unless measured step
// times show another faster beyond noise) and the next ones worth measuring.
// The database is only read, except with --live (tools/search/live.h), where `autotune record`
// adds the measurements.
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "simulator/stored_simulation.h"
#include "tools/command.h"
#include "tools/knob_flags.h"
#include "tools/progress.h"
#include "tools/search/live.h"
#include "tools/search/round_files.h"
#include "tools/search/sample_log.h"
#include "store/store.h"
#include "tuner/knob_search.h"

namespace autotune::cli {
namespace {

// Everything the search needs, loaded from the database and the flags.
struct Inputs {
  RunInfo run;
  Knobs base;  // defaults + constants
  tuner::SpaceScope scope;
  tuner::Space space;
  std::optional<sim::Simulation> simulation;  // empty when no calibration exists
  Status uncalibrated;                        // then: why
  // Measured samples of the run's workload, topology, scale and backend; and how many more of
  // its workload and topology there are, of another scale or backend.
  std::vector<Sample> measured;
  int other_measured = 0;
  // The step times of the measured samples that are a whole run each (a run tuned online
  // holds several settings' steps, which cannot be told apart here).
  std::vector<tuner::MeasuredSteps> steps;
};

}  // namespace

Status LoadStepTimes(Store& store, const std::vector<Sample>& measured,
                     std::vector<tuner::MeasuredSteps>* out) {
  std::map<int64_t, int> samples_of_run;
  for (const Sample& sample : measured) ++samples_of_run[sample.run_id];
  for (const Sample& sample : measured) {
    if (sample.run_id <= 0 || samples_of_run[sample.run_id] != 1) continue;
    tuner::MeasuredSteps steps{sample.knobs, {}};
    std::vector<double> scores;
    AUTOTUNE_RETURN_IF_ERROR(store.GetStepSeries(sample.run_id, &steps.step_ms, &scores));
    if (!steps.step_ms.empty()) out->push_back(std::move(steps));
  }
  return Status::Ok();
}

namespace {

// The target and what it may move: --target or the run's; num_groups held at the run's value
// unless given or searched.
Status ResolveScope(const SearchFlags& flags, const std::set<std::string>& constants,
                    Inputs* in) {
  in->scope.target = TargetOf(in->run);
  in->scope.framework = in->run.framework;
  if (!flags.target.empty()) {
    AUTOTUNE_RETURN_IF_ERROR(
        tuner::ParseTarget(flags.target, &in->scope.target).WithPrefix("--target"));
  }
  in->scope.tune_groups = flags.tune_groups;
  if (!flags.tune_groups && constants.count("num_groups") == 0) {
    in->base.num_groups = in->run.knobs.num_groups;
  }
  return Status::Ok();
}

Status LoadInputs(const SearchFlags& flags, Inputs* in) {
  std::set<std::string> constants;
  AUTOTUNE_RETURN_IF_ERROR(flags.knobs.Resolve(&in->base, &constants));
  std::unique_ptr<Store> store;
  AUTOTUNE_RETURN_IF_ERROR(Store::Open(flags.db, Store::Mode::kReadOnly, &store));
  sim::StoredSimulation loaded;
  AUTOTUNE_RETURN_IF_ERROR(
      sim::LoadSimulation(*store, flags.run, {}, sim::IfUncalibrated::kNoSimulation, &loaded));
  in->run = loaded.run;
  in->simulation = std::move(loaded.simulation);
  in->uncalibrated = loaded.missing;
  AUTOTUNE_RETURN_IF_ERROR(ResolveScope(flags, constants, in));
  // The simulator does not model the backend's own algorithm knobs: left free, the model
  // would pick them at random. They stay at their given or default value unless asked.
  AUTOTUNE_RETURN_IF_ERROR(tuner::KnobSpace(
      in->run.backend, in->base, constants,
      flags.tune_backend_knobs ? tuner::FreeKnobs::kAll : tuner::FreeKnobs::kAllButBackend,
      in->scope, &in->space));
  SampleQuery query;
  query.workload = in->run.workload.name;
  query.topology = in->run.topology;
  query.fidelity = Fidelity::kMeasured;
  std::vector<Sample> all;
  AUTOTUNE_RETURN_IF_ERROR(store->ListSamples(query, &all));
  query.scale = in->run.scale;
  query.backend = in->run.backend;
  AUTOTUNE_RETURN_IF_ERROR(store->ListSamples(query, &in->measured));
  in->other_measured = static_cast<int>(all.size() - in->measured.size());
  return LoadStepTimes(*store, in->measured, &in->steps);
}

}  // namespace

tuner::SearchOptions MakeOptions(const SearchFlags& flags) {
  tuner::SearchOptions options;
  options.stop.max_measured_samples = flags.max_samples;
  options.stop.min_expected_improvement_ratio = flags.min_ei_ratio;
  options.seed = flags.seed;
  options.refit_period = 20;
  options.model.residual_gp.fixed_noise_stddev = flags.gp_noise;
  options.model.simulated_gp.seed = flags.seed;
  options.model.residual_gp.seed = flags.seed;
  return options;
}

namespace {

// Observes the stored measured samples whose knobs fit the space; returns how many were
// skipped (another scale or backend, or a moved constant).
StatusOr<int> ObserveStored(const Inputs& in, tuner::KnobSearch* search) {
  int skipped = in.other_measured;
  for (const Sample& sample : in.measured) {
    if (!search->ToPoint(sample.knobs).ok()) {
      ++skipped;
      continue;
    }
    AUTOTUNE_RETURN_IF_ERROR(search->ObserveMeasured(sample.knobs, sample.score_bytes_per_s)
                                 .WithPrefix("measured sample"));
  }
  return skipped;
}

// The simulated-prior phase on the run's trace, with its progress on stderr.
Status SimulatePrior(const SearchFlags& flags, const Inputs& in, tuner::KnobSearch* search) {
  if (!in.simulation) {
    std::cerr << "search: note: measured samples only: " << in.uncalibrated.message() << "\n";
    return Status::Ok();
  }
  const sim::Simulation& simulation = *in.simulation;
  ProgressLine progress(flags.quiet);
  return search->SimulatePrior(
      [&](const Knobs& knobs) { return simulation.Evaluate(knobs).score_bytes_per_s; },
      flags.sim_budget,
      [&](int picked) {
        StatusOr<tuner::Incumbent> best = search->Best(Fidelity::kSimulated);
        progress.Update("search: simulated " + std::to_string(picked) + "/" +
                            std::to_string(flags.sim_budget) + " settings, " +
                            std::to_string(in.measured.size()) + " measured, best predicted " +
                            (best.ok() ? Gbps(best->prediction.mean) : "?"),
                        picked == flags.sim_budget);
      });
}

// The round's conclusion with the knobs of each setting it names.
Status MakeReport(const SearchFlags& flags, const Inputs& in, int skipped,
                  tuner::KnobSearch& search, RoundReport* report) {
  StatusOr<tuner::SearchLoop::Conclusion> conclusion = search.Conclude(flags.propose, in.steps);
  if (!conclusion.ok()) return conclusion.status().WithPrefix("search");
  report->db = flags.db;
  report->out = flags.out;
  report->run = in.run;
  report->scope = in.scope;
  report->measured = search.measured();
  report->simulated = search.simulated();
  report->skipped_measured = skipped;
  report->rho = search.rho();
  report->conclusion = *conclusion;
  StatusOr<Knobs> knobs = search.ToKnobs(conclusion->candidate.point);
  if (!knobs.ok()) return knobs.status();
  report->candidate_knobs = *knobs;
  knobs = search.ToKnobs(conclusion->written().point);
  if (!knobs.ok()) return knobs.status();
  report->best_knobs = *knobs;
  knobs = search.ToKnobs(conclusion->default_setting.point);
  if (!knobs.ok()) return knobs.status();
  report->default_knobs = *knobs;
  for (const tuner::Suggestion& s : conclusion->proposals) {
    knobs = search.ToKnobs(s.point);
    if (!knobs.ok()) return knobs.status();
    report->proposal_knobs.push_back(*knobs);
  }
  return Status::Ok();
}

}  // namespace

tuner::Target TargetOf(const RunInfo& run) {
  if (run.backend == BackendKind::kNccl) return tuner::Target::kNccl;
  // A real Horovod job on CPUs (MPI activities in its timeline): no hierarchical collectives.
  if (run.kind == RunKind::kImported) return tuner::Target::kCpu;
  return tuner::Target::kExecutor;
}

int RunSearch(const SearchFlags& flags, Round* round) {
  Inputs in;
  Status status = LoadInputs(flags, &in);
  if (!status.ok()) return Fail(status);
  if (in.space.encoded_size() == 0) {
    return Fail("search: every knob is a constant; nothing to tune");
  }
  SampleLog log;
  status = log.Open(flags.log_file);
  if (!status.ok()) return Fail(status);
  tuner::KnobSearch search(in.space, in.base, MakeOptions(flags), LogTo(&log));
  StatusOr<int> skipped = ObserveStored(in, &search);
  if (!skipped.ok()) return Fail(skipped.status());
  status = SimulatePrior(flags, in, &search);
  if (!status.ok()) return Fail(status);
  if (search.measured() + search.simulated() == 0) {
    return Fail("search: no measured samples of " + in.run.workload.name + " on " +
                in.run.topology.key() +
                " and no calibration to simulate with; run `autotune "
                "calibrate` (and `autotune record`) first");
  }
  RoundReport report;
  status = MakeReport(flags, in, *skipped, search, &report);
  if (status.ok()) status = WriteSearchConfigs(&report);
  round->proposal_files = report.proposal_files;
  if (!status.ok()) return Fail(status);
  round->stop = report.conclusion.stop;
  if (flags.json) {
    std::cout << SearchJson(report).dump() << "\n";
  } else {
    PrintSearchSummary(report, std::cout);
  }
  return 0;
}

void AddSearchCommand(CLI::App& root, Action* action) {
  auto flags = std::make_shared<SearchFlags>();
  CLI::App* app = root.add_subcommand(
      "search",
      "Tune the knobs offline (simulator + measured samples, multi-fidelity GP); write the best "
      "setting and the next ones worth measuring");
  app->footer(
      "Simulates settings the tuner picks on run ID's trace (not a grid), blends them with every\n"
      "measured sample of the same workload, scale and topology (co-kriging), and proposes the\n"
      "next settings worth measuring (OUT.next1.yaml ...). --out gets a setting other than the\n"
      "default only when measured step times show it faster beyond noise (95% bootstrap\n"
      "interval of the speedup above 1); else the default, and one line says so. While that\n"
      "interval contains 1, the proposals repeat the best and the default. Knobs given as flags\n"
      "or in --config-file are constants, never tuned. The database is only read. Record a\n"
      "proposal with `autotune record --config-file F`.");
  app->add_option("--db", flags->db, "SQLite database file. Default ./autotune.db");
  app->add_option("--run", flags->run,
                  "Recorded or imported run whose trace the simulator replays")
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
  app->add_flag("--quiet", flags->quiet,
                "No progress on stderr (settings simulated, samples measured, best so far; "
                "redrawn in place on a terminal, else a line every few seconds). Default off");
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
  app->add_option("--target", flags->target,
                  "What the measurements run on: cpu (Horovod on CPUs, which turns hierarchical "
                  "collectives off: they stay constants), nccl, or executor (autotune record). "
                  "Default: from the run (a Horovod timeline of an MPI job: cpu; backend nccl: "
                  "nccl; else executor)");
  app->add_flag("--tune-groups", flags->tune_groups,
                "Also search num_groups, an argument of hvd.DistributedOptimizer in the "
                "training script that `apply` cannot set (the files then say so). Default: it "
                "keeps the run's value");
  app->add_flag("--tune-backend-knobs", flags->tune_backend_knobs,
                "Also tune the per-launch backend knobs (MPI/NCCL algorithm settings). The "
                "simulator does not model them, so only measured samples inform them. Default: "
                "they keep their given or default value");
  flags->knobs.Add(app);
  app->add_flag("--live", flags->live,
                "Measure the proposals too: run `autotune record --config-file OUT.nextI.yaml` "
                "through --launcher for each (for a run imported from a real job: the job's own "
                "command, --launcher, under `autotune apply --config-file OUT.nextI.yaml` with "
                "HOROVOD_TIMELINE on, then `autotune import` of that timeline), then search "
                "again, until --max-samples measured samples exist or nothing is worth "
                "measuring (prints one summary per round)");
  app->add_option("--launcher", flags->launcher,
                  "Command prefix that launches `autotune record` on the cluster, e.g. \"mpirun "
                  "-np 4 --hostfile hosts\". Default: record's own --np with the run's rank "
                  "count on this machine. For a run imported from a real job: that job's whole "
                  "command, e.g. \"horovodrun -np 4 -H a:2,b:2 python train.py\" (required)");
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
