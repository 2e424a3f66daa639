// The CLI's plumbing: each subcommand registers itself on the root app and, when chosen,
// leaves an action that main() runs; the action's return value is the exit code.
#pragma once

#include <functional>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "traces/files.h"
#include "traces/status.h"

namespace autotune::cli {

using Action = std::function<int()>;

// Prints "autotune: error: <message>" on stderr (the one error line; bytes that are not
// printable UTF-8 escaped, so input echoed in it cannot break the line) and returns 1.
inline int Fail(const std::string& message) {
  std::cerr << "autotune: error: " << EscapeForTerminal(message) << "\n";
  return 1;
}
inline int Fail(const Status& status) { return Fail(status.message()); }
// Prints "autotune: warning: <message>" on stderr, escaped as Fail's.
inline void Warn(const std::string& message) {
  std::cerr << "autotune: warning: " << EscapeForTerminal(message) << "\n";
}

// Each Add*Command defines one subcommand of root and sets *action when it is chosen.
void AddRecordCommand(CLI::App& root, Action* action);
void AddCalibrateCommand(CLI::App& root, Action* action);
void AddRunsCommand(CLI::App& root, Action* action);
void AddCompareCommand(CLI::App& root, Action* action);
void AddWorkloadsCommand(CLI::App& root, Action* action);
void AddSimulateCommand(CLI::App& root, Action* action);
void AddSearchCommand(CLI::App& root, Action* action);
void AddApplyCommand(CLI::App& root, Action* action);
void AddImportCommand(CLI::App& root, Action* action);
void AddDiagnoseCommand(CLI::App& root, Action* action);
void AddTimelineCommand(CLI::App& root, Action* action);
void AddReportCommand(CLI::App& root, Action* action);

}  // namespace autotune::cli
