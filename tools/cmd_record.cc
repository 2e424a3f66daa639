// `autotune record`: plays a workload's gradient collectives on every rank of an MPI job
// (executor/record.h) and prints rank 0's summary. `--np N` re-launches under mpirun.
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "executor/backend_choice.h"
#include "executor/compute.h"
#include "executor/knob_environment.h"
#include "executor/layout.h"
#include "executor/like_run.h"
#include "executor/mpi_runtime.h"
#include "executor/record.h"
#include "executor/stop_signal.h"
#include "store/store.h"
#include "tools/command.h"
#include "tools/flag_checks.h"
#include "tools/help_defaults.h"
#include "tools/knob_flags.h"
#include "tools/launch.h"
#include "tools/progress.h"
#include "tools/search/record_autotune.h"
#include "tools/stall_flags.h"
#include "traces/backend_kind.h"
#include "traces/workload.h"

namespace autotune::cli {
namespace {

struct RecordFlags {
  executor::RecordOptions record;
  KnobFlags knobs;
  StallFlags stall;
  bool json = false;
  bool quiet = false;
  int np = 0;
  OnlineTuningFlags autotune;
  CLI::Option* steps_option = nullptr;
  std::string compute;  // --compute; empty: the backend's default
  std::string backend = BackendName(executor::RecordOptions().backend);  // --backend
  std::string framework;  // --framework; empty: the config file's (horovod without one)
};

// --compute into options->compute, the default of options->backend when it was not given.
Status ResolveComputeFlag(const RecordFlags& flags, executor::RecordOptions* options) {
  executor::ComputeMode mode = executor::ComputeMode::kSpin;
  if (flags.compute.empty()) {
    mode = executor::DefaultComputeMode(options->backend);
  } else {
    AUTOTUNE_RETURN_IF_ERROR(executor::ParseComputeMode(flags.compute, &mode));
  }
  options->compute = mode;
  return Status::Ok();
}

// --autotune: without --steps, exactly the warm-up and tuning samples are played.
void ApplyAutotuneFlags(const RecordFlags& flags, executor::RecordOptions* options) {
  if (!flags.autotune.enabled) return;
  const TuningFlags& tuning = flags.autotune.tuning;
  options->steps_per_sample = tuning.steps_per_sample;
  if (flags.steps_option->count() == 0) {
    options->steps = (tuning.warmup_samples + tuning.max_samples) * tuning.steps_per_sample;
  }
}

void PrintSummary(const executor::RecordResult& result, const Status& status, bool json) {
  const RunInfo& run = result.run;
  const bool verified = status.ok() && result.steps_verified > 0;
  if (json) {
    nlohmann::json j = {{"run", run.id},
                        {"complete", run.complete},
                        {"verified", verified},
                        {"steps", run.steps_recorded},
                        {"steps_planned", run.steps_planned},
                        {"score_bytes_per_s", run.score_bytes_per_s},
                        {"step_ms_median", run.step_ms_median},
                        {"step_ms_p95", run.step_ms_p95},
                        {"workload", run.workload.name},
                        {"scale", run.scale},
                        {"topology", run.topology.key()},
                        {"backend", BackendName(run.backend)},
                        {"framework", FrameworkName(run.framework)},
                        {"knobs", KnobsToJson(run.knobs)}};
    std::cout << j.dump() << std::endl;
    return;
  }
  std::printf(
      "run %lld (%s): %s x%g on %s %s, score %.3f GB/s, step %.2f ms median, %.2f ms p95 "
      "over %d steps; results %s\n",
      static_cast<long long>(run.id), run.complete ? "complete" : "incomplete",
      run.workload.name.c_str(), run.scale, run.topology.key().c_str(), BackendName(run.backend),
      run.score_bytes_per_s / 1e9, run.step_ms_median, run.step_ms_p95, run.steps_recorded,
      verified ? ("verified on " + std::to_string(result.steps_verified) + " steps").c_str()
               : "not verified");
  std::fflush(stdout);
}

// Rank 0's progress line: steps stored of planned, the last step's time, time left (from
// the mean step so far).
std::function<void(int, int, double)> StepProgress(ProgressLine* line) {
  const auto start = std::chrono::steady_clock::now();
  return [line, start](int done, int planned, double step_ms) {
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    char text[160];
    std::snprintf(text, sizeof text, "record: step %d/%d, last %.1f ms, %s left", done, planned,
                  step_ms, ProgressLine::Duration(elapsed / done * (planned - done)).c_str());
    line->Update(text, done == planned);
  };
}

// The knobs (and their constants), the stall settings and the framework, from the flags and
// config file.
Status ResolveKnobsAndStall(const RecordFlags& flags, Knobs* knobs,
                           std::set<std::string>* constants, StallSettings* stall,
                           Framework* framework) {
  ConfigFile config;
  AUTOTUNE_RETURN_IF_ERROR(flags.knobs.Resolve(knobs, constants, &config));
  *framework = config.framework;
  if (!flags.framework.empty()) {
    AUTOTUNE_RETURN_IF_ERROR(ParseFramework(flags.framework, framework).WithPrefix("--framework"));
  }
  return flags.stall.Resolve(&config, stall);
}

// Everything that can be checked without MPI: knobs, config file, backend (for nccl: a
// CUDA device here), workload, database.
Status ValidateBeforeLaunch(const RecordFlags& flags) {
  executor::RecordOptions options = flags.record;
  std::set<std::string> constants;
  AUTOTUNE_RETURN_IF_ERROR(ResolveKnobsAndStall(flags, &options.knobs, &constants, &options.stall,
                                               &options.framework));
  AUTOTUNE_RETURN_IF_ERROR(executor::ParseBackendFlag(flags.backend, &options.backend));
  if (flags.autotune.enabled) {
    std::unique_ptr<OnlineTuner> tuner;  // checks that something is left to tune
    AUTOTUNE_RETURN_IF_ERROR(OnlineTuner::Create(OnlineTuningFlags(), options.knobs, constants,
                                                 options.backend, options.framework,
                                                 tuner::JobFacts(), &tuner));
  }
  AUTOTUNE_RETURN_IF_ERROR(ResolveComputeFlag(flags, &options));
  Workload workload;
  AUTOTUNE_RETURN_IF_ERROR(executor::ResolveRecordInputs(options, &workload));
  std::unique_ptr<Store> store;  // refuses foreign, newer or unwritable databases untouched
  AUTOTUNE_RETURN_IF_ERROR(Store::Open(options.db_path, Store::Mode::kReadWrite, &store));
  if (options.like_run == 0) return Status::Ok();
  executor::LikeRun like;
  return executor::LoadLikeRun(store.get(), options.like_run, &like);
}

int RunRecordCommand(RecordFlags& flags) {
  if (!LaunchedByMpi()) {
    if (flags.np <= 0) return Fail(MpiLaunchHint("record"));
    // Bad input fails here, once, before any rank starts (mpirun would add its own lines).
    const Status valid = ValidateBeforeLaunch(flags);
    if (!valid.ok()) return Fail(valid);
    return RelaunchUnderMpirun(flags.np, {"record", flags.record.db_path});
  }
  executor::InstallStopSignalHandlers();  // before MPI_Init: a stop may come at any time
  Knobs knobs;
  std::set<std::string> constants;
  executor::RecordOptions options = flags.record;
  Status resolved =
      ResolveKnobsAndStall(flags, &knobs, &constants, &options.stall, &options.framework);
  if (resolved.ok()) resolved = executor::ParseBackendFlag(flags.backend, &options.backend);
  if (resolved.ok()) resolved = ResolveComputeFlag(flags, &options);
  if (resolved.ok()) {  // Open MPI reads its knobs' environment in MPI_Init, just below
    const Status env = executor::ApplyKnobEnvironment(knobs, KnobLibrary::kOpenMpi);
    if (!env.ok()) return Fail(env);
  }
  executor::MpiSession mpi(nullptr, nullptr);
  if (!mpi.status().ok()) return Fail(mpi.status());
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);

  std::unique_ptr<OnlineTuner> tuner;  // rank 0 with --autotune
  Status st = resolved;
  tuner::JobFacts job;  // what shapes the online search's space: the ranks' layout, the workload
  if (st.ok() && flags.autotune.enabled) {  // every rank: the layout is found collectively
    executor::NodeLayout layout;
    executor::LayoutComms comms;
    st = executor::DetectLayout(MPI_COMM_WORLD, &layout, &comms);
    executor::FreeLayoutComms(&comms);
    if (st.ok()) job.topology = layout.ToTopology();
  }
  if (st.ok() && rank == 0 && flags.autotune.enabled) {
    st = executor::ResolveRecordInputs(options, &job.workload);
  }
  if (st.ok() && rank == 0 && flags.autotune.enabled) {
    OnlineTuningFlags autotune = flags.autotune;
    autotune.steps_given = flags.steps_option->count() > 0;
    autotune.db = flags.record.db_path;
    st = OnlineTuner::Create(autotune, knobs, constants, options.backend, options.framework, job,
                             &tuner);
  }
  st = executor::AgreeOnStatus(MPI_COMM_WORLD, st);
  executor::RecordResult result;
  ProgressLine progress(flags.quiet);
  if (st.ok()) {
    options.knobs = knobs;
    // The compute mode in force is part of the command that made the run, given or not.
    options.command = JoinCommandLine(SelfArgv());
    if (flags.compute.empty() && options.compute) {
      options.command += std::string(" --compute ") + executor::ComputeModeName(*options.compute);
    }
    options.world = MPI_COMM_WORLD;
    ApplyAutotuneFlags(flags, &options);
    if (rank == 0) options.on_step = StepProgress(&progress);
    if (tuner) {
      options.tuning = [&tuner](const executor::TuningSample& sample,
                                executor::TuningDecision* decision) {
        return tuner->Step(sample, decision);
      };
    }
    st = executor::RunRecord(options, &result);
  }
  progress.Done();
  if (rank != 0) return st.ok() ? 0 : 1;
  if (result.run.id > 0) PrintSummary(result, st, flags.json);
  if (tuner && tuner->observed() > 0) {
    const Status wrote = tuner->WriteBest(flags.record.db_path, result.run.id, flags.json);
    if (st.ok()) st = wrote;
  }
  return st.ok() ? 0 : Fail(st);
}

}  // namespace

void AddRecordCommand(CLI::App& root, Action* action) {
  auto flags = std::make_shared<RecordFlags>();
  executor::RecordOptions& r = flags->record;
  CLI::App* app = root.add_subcommand(
      "record",
      "Play a workload's gradient collectives with Horovod semantics on real buffers (MPI on "
      "host memory, or NCCL on GPUs) on every rank and record the trace into SQLite. Runs "
      "under mpirun, or give --np N");
  PrintDefaultsInDescriptions(app);
  std::string builtin;
  for (const std::string& name : BuiltinWorkloadNames()) builtin += name + ", ";
  CLI::Option* workload =
      app->add_option("--workload", r.workload, "Workload: " + builtin + "or a workload JSON file.")
          ->capture_default_str();
  app->add_option("--like-run", r.like_run,
                  "Instead of --workload, replay run N of --db (recorded or imported): its "
                  "tensors, its in-job compute and ready times (medians over its steps) and "
                  "its ranks' skew")
      ->excludes(workload)
      ->check(CLI::Validator(
          [](const std::string& value) {
            return value.find_first_not_of("0123456789") == std::string::npos &&
                           value.find_first_not_of('0') != std::string::npos
                       ? std::string()
                       : "must be a run id >= 1, not " + value;
          },
          "RUN", "run id"));
  app->add_option("--compute", flags->compute,
                  "Emulated compute: spin (busy work on the rank's core, contending like "
                  "training) or sleep. Default spin on mpi, sleep on nccl (the GPU computes)");
  app->add_option("--scale", r.scale,
                  "Shrink every tensor and compute phase by this factor, in (0, 1].")
      ->capture_default_str();
  flags->steps_option =
      app->add_option("--steps", r.steps,
                      "Measured steps (stored), >= 1; with --autotune and no --steps, (warm-up "
                      "samples + max samples) x steps per sample.")
          ->capture_default_str();
  app->add_option("--warmup-steps", r.warmup_steps, "Warm-up steps (played, not stored), >= 0.")
      ->capture_default_str();
  app->add_option("--backend", flags->backend,
                  "Data-plane backend: mpi (host memory) or nccl (CUDA device memory).")
      ->capture_default_str();
  app->add_option("--framework", flags->framework,
                  "Whose semantics to play and record: horovod (background cycle, negotiation, "
                  "tensor fusion) or ddp (PyTorch DDP's gradient buckets). Default: the "
                  "--config-file's (ddp when it has a ddp: section), else horovod");
  flags->knobs.Add(app);
  flags->stall.Add(app);
  app->add_option("--db", r.db_path, "SQLite database file, created if missing.")
      ->capture_default_str();
  app->add_flag("--json", flags->json,
                "Print one JSON object on stdout (run, score_bytes_per_s, step_ms_median, "
                "step_ms_p95, steps, complete, verified, ...). Default off");
  app->add_flag("--verify-every-step", r.verify_every_step,
                "Check the reduced/gathered values of every measured step. Default off: the "
                "first and the last measured step");
  app->add_flag("--quiet", flags->quiet,
                "No progress on stderr (steps done, last step time, time left; redrawn in "
                "place on a terminal, else a line every few seconds). Default off");
  AddOnlineTuningFlags(app, &flags->autotune);
  app->add_option("--np", flags->np,
                  "Re-launch this command under mpirun with N local ranks (extra mpirun "
                  "arguments from $AUTOTUNE_MPIRUN_ARGS). Default: run in the current MPI job")
      ->check(AtLeast(1));
  app->callback([flags, action] { *action = [flags] { return RunRecordCommand(*flags); }; });
}

}  // namespace autotune::cli
