#include "tools/search/live.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>

#include "store/store.h"
#include "tools/command.h"
#include "tools/launch.h"
#include "tools/search/live_job.h"
#include "traces/workload.h"

namespace autotune::cli {

// --live: measures the proposals itself, running `autotune record` through the launcher (or,
// for a run imported from a real job, that job's own command: live_job.h), and
// searches again, until the measured-sample budget is spent or nothing is worth measuring.
int RunLive(SearchFlags flags) {
  RunInfo run;
  {
    std::unique_ptr<Store> store;
    Status status = Store::Open(flags.db, Store::Mode::kReadOnly, &store);
    if (status.ok()) status = store->GetRun(flags.run, &run);
    if (!status.ok()) return Fail(status);
  }
  const bool real_job = run.kind == RunKind::kImported;
  if (real_job && flags.launcher.empty()) {
    return Fail("search --live: run " + std::to_string(run.id) +
                " was imported from a real job; give that job's command as --launcher, e.g. "
                "--launcher \"horovodrun -np 4 -H a:2,b:2 python train.py\"");
  }
  const std::vector<std::string>& builtin = BuiltinWorkloadNames();
  if (!real_job && std::find(builtin.begin(), builtin.end(), run.workload.name) == builtin.end()) {
    return Fail("search --live: run " + std::to_string(run.id) + " plays workload '" +
                run.workload.name +
                "', not a built-in one; record its proposals by hand with "
                "`autotune record --workload FILE --config-file OUT.next1.yaml`");
  }
  // Bagua's time-based flags become step counts by the run's median step time.
  TuningFlags& tuning = flags.tuning;
  if (tuning.time_based()) {
    const double step_s = run.step_ms_median / 1000.0;
    if (!(step_s > 0)) {
      return Fail("search --live: run " + std::to_string(run.id) +
                  " has no step time to map --autotune-warmup-time-s / "
                  "--autotune-sampling-confidence-time-s to steps");
    }
    auto steps_for = [step_s](double seconds) {
      return static_cast<int>(std::ceil(seconds / step_s - 1e-9));
    };
    if (tuning.warmup_time_s >= 0) tuning.warmup_samples = steps_for(tuning.warmup_time_s);
    if (tuning.sampling_confidence_time_s > 0) {
      tuning.steps_per_sample = std::max(1, steps_for(tuning.sampling_confidence_time_s));
    }
    std::cerr << "search --live: step time " << run.step_ms_median << " ms -> "
              << tuning.warmup_samples << " warm-up steps, " << tuning.steps_per_sample
              << " steps per sample\n";
  }
  char self[4096];
  const ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (length <= 0) return Fail("search --live: cannot find the autotune binary (/proc/self/exe)");
  self[length] = '\0';
  for (int round_index = 1;; ++round_index) {
    Round round;
    std::cerr << "search --live: round " << round_index << "\n";
    if (int code = RunSearch(flags, &round); code != 0) return code;
    if (round.stop != tuner::StopReason::kNotStopped || round.proposal_files.empty()) return 0;
    for (const std::string& proposal : round.proposal_files) {
      if (real_job) {
        if (int code = MeasureOnRealJob(flags, run, proposal, self); code != 0) return code;
        continue;
      }
      char scale[32];
      std::snprintf(scale, sizeof(scale), "%.17g", run.scale);
      std::string command =
          (flags.launcher.empty() ? "" : flags.launcher + " ") + ShellQuote(self) + " record" +
          (flags.launcher.empty() ? " --np " + std::to_string(run.topology.world_size()) : "") +
          " --workload " + ShellQuote(run.workload.name) + " --scale " + scale + " --steps " +
          std::to_string(tuning.steps_per_sample) + " --warmup-steps " +
          std::to_string(tuning.warmup_samples) + " --db " + ShellQuote(flags.db) +
          " --config-file " + ShellQuote(proposal) + " >&2";
      if (int code = RunLiveStep("measuring " + proposal, command, flags.db); code != 0) {
        return code;
      }
    }
  }
}

}  // namespace autotune::cli
