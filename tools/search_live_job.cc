#include "tools/search_live_job.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "tools/command.h"

namespace autotune::cli {
namespace {

std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Runs command through the shell; 0, or the exit code after one line naming it.
int RunStep(const std::string& what, const std::string& command, const std::string& db) {
  std::cerr << "search --live: " << what << ": " << command << "\n";
  const int status = std::system(command.c_str());
  if (status == 0) return 0;
  return Fail("search --live: `" + command + "` failed (status " + std::to_string(status) +
              "); the samples measured so far are in " + db);
}

}  // namespace

int MeasureOnRealJob(const SearchFlags& flags, const RunInfo& base, const std::string& proposal,
                     const std::string& self) {
  const std::string timeline = proposal + ".timeline.json";
  std::remove(timeline.c_str());
  const std::string job = "HOROVOD_TIMELINE=" + Quote(timeline) +
                          " HOROVOD_TIMELINE_MARK_CYCLES=1 " + Quote(self) +
                          " apply --config-file " + Quote(proposal) + " -- sh -c " +
                          Quote(flags.launcher) + " >&2";
  if (int code = RunStep("running the job under " + proposal, job, flags.db); code != 0) {
    return code;
  }
  const std::string import =
      Quote(self) + " import --horovod-timeline " + Quote(timeline) + " --db " +
      Quote(flags.db) + " --nodes " + std::to_string(base.topology.nodes) +
      " --ranks-per-node " + std::to_string(base.topology.ranks_per_node) + " --workload " +
      Quote(base.workload.name) + " --config-file " + Quote(proposal) + " --warmup-steps " +
      std::to_string(flags.warmup_steps) + " --max-steps " +
      std::to_string(flags.steps_per_sample) + " >&2";
  return RunStep("importing its timeline", import, flags.db);
}

}  // namespace autotune::cli
