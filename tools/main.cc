// autotune: offline tuning of distributed training's communication knobs.
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <string>

#include "tools/command.h"

namespace {

// True when name is a subcommand of app.
bool IsCommand(CLI::App& app, const std::string& name) {
  for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    if (sub->check_name(name)) return true;
  }
  return false;
}

// CLI11's "--np: must be at least 1" as the help writes it: "--np must be at least 1".
std::string ParseErrorLine(const CLI::ParseError& e) {
  std::string what = e.what();
  if (dynamic_cast<const CLI::ValidationError*>(&e) != nullptr && what.rfind("--", 0) == 0) {
    const size_t colon = what.find(": ");
    if (colon != std::string::npos && what.find(' ') > colon) what.erase(colon, 1);
  }
  return what;
}

}  // namespace

int main(int argc, char** argv) {
  // A file-size limit (ulimit -f) then fails a write with EFBIG, which is reported and
  // cleaned up, instead of killing the program mid-write.
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{
      "autotune: records real fused/hierarchical collectives (MPI, NCCL) into SQLite, replays\n"
      "them under other knob settings, and tunes the knobs with a multi-fidelity GP.",
      "autotune"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "autotune 0.1.0");
  autotune::cli::Action action;
  autotune::cli::AddRecordCommand(app, &action);
  autotune::cli::AddCalibrateCommand(app, &action);
  autotune::cli::AddRunsCommand(app, &action);
  autotune::cli::AddCompareCommand(app, &action);
  autotune::cli::AddWorkloadsCommand(app, &action);
  // Added by later layers: simulate, search, apply (one line each).
  autotune::cli::AddSimulateCommand(app, &action);
  autotune::cli::AddSearchCommand(app, &action);
  autotune::cli::AddApplyCommand(app, &action);
  autotune::cli::AddImportCommand(app, &action);
  autotune::cli::AddDiagnoseCommand(app, &action);
  autotune::cli::AddTimelineCommand(app, &action);
  autotune::cli::AddReportCommand(app, &action);
  if (argc >= 2 && argv[1][0] != '-' && !IsCommand(app, argv[1])) {
    autotune::cli::Fail("unknown command '" + std::string(argv[1]) +
                        "' (autotune --help lists the commands)");
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() != 0) {
      autotune::cli::Fail(ParseErrorLine(e));
      return 2;
    }
    return app.exit(e);
  }
  if (!action) return autotune::cli::Fail("no command chosen; see autotune --help");
  int code = 0;
  try {
    code = action();
  } catch (const std::exception& e) {
    code = autotune::cli::Fail(e.what());
  }
  // What went to standard output must have arrived (a full disk, a closed or full pipe).
  std::cout.flush();
  errno = 0;
  if (std::fflush(stdout) != 0 || std::ferror(stdout) || !std::cout) {
    const int err = errno;
    autotune::cli::Fail(std::string("cannot write standard output: ") +
                        (err == ENOSPC ? "no space left on the device (disk full)"
                         : err != 0    ? std::strerror(err)
                                       : "write error"));
    return code != 0 ? code : 1;
  }
  return code;
}
