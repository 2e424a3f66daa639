// What rank 0 tells the process that launched the job (`--np N`, tools/launch.h) through a
// file named by $AUTOTUNE_LAUNCH_STATUS: one "key value" line per note, appended. The
// launcher reads it after mpirun ends, to name the run a dead rank left behind and to stay
// quiet when rank 0 has already said why the job ended.
#pragma once

#include <map>
#include <string>

namespace autotune::executor {

inline constexpr const char* kLaunchStatusEnv = "AUTOTUNE_LAUNCH_STATUS";

// Appends "key value\n" to the file named by $AUTOTUNE_LAUNCH_STATUS (nothing when unset or
// unwritable: the note is a courtesy to the launcher, never a reason to fail).
void NoteLaunchStatus(const std::string& key, const std::string& value);

// The notes in the file at path, the last value of each key ({} when absent or unreadable).
std::map<std::string, std::string> ReadLaunchStatus(const std::string& path);

}  // namespace autotune::executor
