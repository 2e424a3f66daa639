#include "tools/search_live_job.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "tools/command.h"
#include "tools/launch.h"

namespace autotune::cli {
int RunLiveStep(const std::string& what, const std::string& command, const std::string& db) {
  std::cerr << "search --live: " << what << ": " << command << "\n";
  const int status = std::system(command.c_str());
  if (status == 0) return 0;
  return Fail("search --live: `" + command + "` failed (status " + std::to_string(status) +
              "); the samples measured so far are in " + db);
}

int MeasureOnRealJob(const SearchFlags& flags, const RunInfo& base, const std::string& proposal,
                     const std::string& self) {
  const std::string timeline = proposal + ".timeline.json";
  std::remove(timeline.c_str());
  const std::string job =
      "HOROVOD_TIMELINE=" + ShellQuote(timeline) + " HOROVOD_TIMELINE_MARK_CYCLES=1 " +
      JoinCommandLine({self, "apply", "--config-file", proposal, "--", "sh", "-c",
                       flags.launcher}) +
      " >&2";
  if (int code = RunLiveStep("running the job under " + proposal, job, flags.db); code != 0) {
    return code;
  }
  const std::string import =
      JoinCommandLine({self, "import", "--horovod-timeline", timeline, "--db", flags.db,
                       "--nodes", std::to_string(base.topology.nodes), "--ranks-per-node",
                       std::to_string(base.topology.ranks_per_node), "--workload",
                       base.workload.name, "--config-file", proposal, "--warmup-steps",
                       std::to_string(flags.warmup_steps), "--max-steps",
                       std::to_string(flags.steps_per_sample)}) +
      " >&2";
  return RunLiveStep("importing its timeline", import, flags.db);
}

}  // namespace autotune::cli
