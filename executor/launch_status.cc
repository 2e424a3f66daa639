#include "executor/launch_status.h"

#include <cstdlib>
#include <fstream>

namespace autotune::executor {

std::string LauncherSignalName() {
  const char* path = std::getenv(kLaunchStatusEnv);
  if (path == nullptr || *path == '\0') return "SIGUSR1";
  const std::map<std::string, std::string> notes = ReadLaunchStatus(path);
  const auto it = notes.find(kLauncherSignalKey);
  return it == notes.end() || it->second.empty() ? "SIGUSR1" : it->second;
}

void NoteLaunchStatus(const std::string& key, const std::string& value) {
  const char* path = std::getenv(kLaunchStatusEnv);
  if (path == nullptr || *path == '\0') return;
  std::ofstream out(path, std::ios::app);
  out << key << ' ' << value << '\n';
  out.flush();
}

std::map<std::string, std::string> ReadLaunchStatus(const std::string& path) {
  std::map<std::string, std::string> notes;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    const size_t space = line.find(' ');
    if (space == std::string::npos) continue;
    notes[line.substr(0, space)] = line.substr(space + 1);
  }
  return notes;
}

}  // namespace autotune::executor
