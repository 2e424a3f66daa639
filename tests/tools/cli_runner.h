// Runs the built autotune binary through the shell and captures what it printed.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace autotune::tools_testing {

struct CommandResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

inline std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A fresh directory under the system temp dir, removed by the destructor.
class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "autotune_tools_test_XXXXXX").string();
    path_ = mkdtemp(pattern.data()) ? pattern : "";
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }
  std::string File(const std::string& name, const std::string& text = "") const {
    std::string p = path_ + "/" + name;
    if (!text.empty()) std::ofstream(p) << text;
    return p;
  }

 private:
  std::string path_;
};

// Runs `AUTOTUNE_BINARY <args>` with sh; args are shell words as written.
inline CommandResult RunAutotune(const TempDir& dir, const std::string& args) {
  const std::string out_path = dir.path() + "/stdout.txt", err_path = dir.path() + "/stderr.txt";
  std::string command = std::string("'") + AUTOTUNE_BINARY + "' " + args + " >'" + out_path +
                        "' 2>'" + err_path + "'";
  int status = std::system(command.c_str());
  CommandResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = ReadAll(out_path);
  result.err = ReadAll(err_path);
  return result;
}

}  // namespace autotune::tools_testing
