// What rank 0 tells the process that launched the job (`--np N`, tools/launch.h) through a
// file named by $AUTOTUNE_LAUNCH_STATUS: one "key value" line per note, appended. The
// launcher reads it after mpirun ends, to name the run a dead rank left behind and to stay
// quiet when rank 0 has already said why the job ended.
#pragma once

#include <map>
#include <string>

namespace autotune::executor {

inline constexpr const char* kLaunchStatusEnv = "AUTOTUNE_LAUNCH_STATUS";
// The note the launcher adds when it gets SIGTERM or SIGINT ("SIGTERM"/"SIGINT"), which it
// passes on to mpirun as SIGUSR1: the stop signal the ranks see is then named by this.
inline constexpr const char* kLauncherSignalKey = "launcher_signal";

// The signal a stop of the ranks by SIGUSR1 stands for: the launcher's note when there is
// one (the user's SIGTERM or SIGINT to `record --np`), else "SIGUSR1".
std::string LauncherSignalName();

// Appends "key value\n" to the file named by $AUTOTUNE_LAUNCH_STATUS (nothing when unset or
// unwritable: the note is a courtesy to the launcher, never a reason to fail).
void NoteLaunchStatus(const std::string& key, const std::string& value);

// The notes in the file at path, the last value of each key ({} when absent or unreadable).
std::map<std::string, std::string> ReadLaunchStatus(const std::string& path);

}  // namespace autotune::executor
