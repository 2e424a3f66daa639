// Runs the autotune binary as a user would and captures what it printed. Shared by the
// CLI tests of every layer (library autotune_cli_testing, tests/cli/CMakeLists.txt).
#pragma once

#include <filesystem>
#include <string>

namespace autotune::testing {

struct CommandResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs `autotune <args>` (args is shell-quoted by the caller) with a timeout.
CommandResult RunAutotune(const std::string& args);

// A fresh temporary directory, removed on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  // The path of `name` inside the directory; writes `text` there when it is not empty.
  std::string File(const std::string& name, const std::string& text = "") const;

 private:
  std::string path_;
};

std::string ReadFile(const std::string& path);
void WriteFile(const std::string& path, const std::string& text);
// Number of newline-terminated lines in text.
int LineCount(const std::string& text);

}  // namespace autotune::testing
