// `autotune search`: offline multi-fidelity tuning from a database. Simulates settings chosen by
// the tuner on run ID's trace (not a blind grid), blends them with every measured sample of the
// same workload, scale and topology, writes the best setting (the default unless measured step
// times show another faster beyond noise) and the next ones worth measuring. The round itself is
// tools/search/offline.h; --live (tools/search/live.h) measures the proposals and searches again.
#include <memory>

#include "tools/command.h"
#include "tools/flag_checks.h"
#include "tools/knob_flags.h"
#include "tools/search/live.h"
#include "tools/search/offline.h"
#include "tools/search/tuning_flags.h"
#include "traces/knob_table.h"

namespace autotune::cli {
namespace {

// The knobs searched only on request, as --tune-groups names them: "num_groups, an argument
// of hvd.DistributedOptimizer".
std::string OnRequestKnobsText() {
  std::string out;
  for (const KnobSpec& spec : KnobTable()) {
    if (!KnobSearchedOnRequest(spec)) continue;
    if (!out.empty()) out += "; ";
    out += spec.name;
    if (*spec.script_call != '\0') out += std::string(", an argument of ") + spec.script_call;
  }
  return out;
}

}  // namespace

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
      "default only when measured step times show it faster beyond noise (95% Student-t\n"
      "interval of the speedup above 1); else the default, and one line says so. While that\n"
      "interval contains 1, the proposals repeat the best and the default. Knobs given as flags\n"
      "or in --config-file are constants, never tuned. The rest are searched in the space the\n"
      "job shapes (fusion threshold 0 or between its two smallest tensors and one step's bytes,\n"
      "cycle time up to the step time, cache off or holding every tensor, hierarchical knobs\n"
      "held on CPU Horovod or one node, DDP's bucket cap in whole MB): stderr notes it, one\n"
      "line a knob. The database is only read. Record a proposal with\n"
      "`autotune record --config-file F`.");
  app->add_option("--db", flags->db, "SQLite database file. Default ./autotune.db");
  app->add_option("--run", flags->run,
                  "Recorded or imported run whose trace the simulator replays")
      ->required();
  app->add_option("--sim-budget", flags->sim_budget,
                  "Settings to simulate, chosen by expected improvement. Default 120")
      ->check(AtLeast(0));
  AddTuningFlags(app, TuningCommand::kSearch, {TuningFlag::kMaxSamples}, &flags->tuning);
  app->add_option("--propose", flags->propose,
                  "Settings to propose for measurement, one YAML each (OUT.next1.yaml, ...); "
                  "the default comes first while it was never measured. Default 1")
      ->check(AtLeast(0));
  app->add_option("--out", flags->out, "Config file for the best setting (YAML)")->required();
  app->add_flag("--json", flags->json, "Print a JSON summary on stdout");
  app->add_flag("--quiet", flags->quiet,
                "No progress on stderr (settings simulated, samples measured, best so far; "
                "redrawn in place on a terminal, else a line every few seconds). Default off");
  AddTuningFlags(app, TuningCommand::kSearch, {TuningFlag::kLogFile, TuningFlag::kGpNoise},
                 &flags->tuning);
  app->add_option("--min-expected-improvement", flags->min_ei_ratio,
                  "Stop proposing when the expected improvement is below this fraction of the "
                  "best predicted score. Default 0.002");
  AddTuningFlags(app, TuningCommand::kSearch, {TuningFlag::kSeed}, &flags->tuning);
  app->add_option("--target", flags->target,
                  "What the measurements run on: cpu (Horovod on CPUs, which turns hierarchical "
                  "collectives off: they stay constants), nccl, or executor (autotune record). "
                  "Default: from the run (a Horovod timeline of an MPI job: cpu; backend nccl: "
                  "nccl; else executor)");
  app->add_flag("--tune-groups", flags->tune_groups,
                "Also search " + OnRequestKnobsText() +
                    " in the training script that `apply` cannot set (the files then say so). "
                    "Default: it keeps the run's value");
  app->add_flag("--tune-backend-knobs", flags->tune_backend_knobs,
                "Also tune the per-launch backend knobs (MPI/NCCL algorithm settings). The "
                "simulator does not model them, so only measured samples inform them. Default: "
                "they keep their given or default value");
  flags->knobs.Add(app);
  CLI::Option* live = app->add_flag(
      "--live", flags->live,
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
  app->add_flag("--production-runs", flags->production_runs,
                "--live on a run imported from a real job: run each proposal twice, first "
                "without the timeline or trace (the job as it runs in production) and then "
                "traced; the job must print its step times, a JSON line with \"step_ms\": [...] "
                "on stdout (as bench/horovod/train.py does; import --step-log's format). The "
                "production run's step times decide the verdict (tracing costs each setting "
                "differently: on the real Horovod MLP from -12% to +13% of the step), the trace "
                "feeds the model. Doubles the job's runs")
      ->needs(live);
  AddTuningFlags(app, TuningCommand::kSearch,
                 {TuningFlag::kWarmupSamples, TuningFlag::kStepsPerSample, TuningFlag::kWarmupTime,
                  TuningFlag::kSamplingConfidenceTime},
                 &flags->tuning);
  app->callback([flags, action] {
    *action = [flags]() -> int {
      if (flags->live) return RunLive(*flags);
      Round round;
      return RunSearch(*flags, &round);
    };
  });
}

}  // namespace autotune::cli
