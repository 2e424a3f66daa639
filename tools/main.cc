// autotune: offline tuning of distributed training's communication knobs.
#include <exception>
#include <iostream>

#include "tools/command.h"

int main(int argc, char** argv) {
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
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() != 0) {
      std::cerr << "autotune: error: " << e.what() << "\n";
      return 2;
    }
    return app.exit(e);
  }
  if (!action) return autotune::cli::Fail("no command chosen; see autotune --help");
  try {
    return action();
  } catch (const std::exception& e) {
    return autotune::cli::Fail(e.what());
  }
}
