// Runs the autotune binary as a user would and captures what it printed; read-only looks
// into the SQLite database it wrote. The one such helper for the CLI tests of every layer
// (library autotune_test_cli, tests/support/CMakeLists.txt). Every command runs under
// `timeout` (a guard against hangs, not a performance limit) with stdin from /dev/null and
// without the environment of an MPI launcher (as when typed in a shell).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace autotune::testing {

// Seconds after which `timeout` ends a command started here.
inline constexpr int kCommandTimeoutS = 900;

struct CommandResult {
  int exit_code = -1;  // 128 + signal when the command was killed
  std::string out;     // stdout
  std::string err;     // stderr
};

// The path of the autotune binary this build made.
std::string AutotuneBinary();

// Runs `autotune <args>`; args is one shell-quoted string, as typed after the program name.
CommandResult RunAutotune(const std::string& args);

// Starts `timeout kCommandTimeoutS argv...` with stdout and stderr written to out_path and
// err_path; returns the pid (of timeout), or -1 when fork fails.
pid_t StartCommand(const std::vector<std::string>& argv, const std::string& out_path,
                   const std::string& err_path);

// Waits for pid; its exit code (128 + signal when it was killed).
int WaitCommand(pid_t pid);

// Runs argv to completion; DIR/out.txt and DIR/err.txt hold its output afterwards.
CommandResult RunCommand(const std::vector<std::string>& argv, const std::string& dir);

// A TCP port nobody is bound to now, the kernel's pick for port 0 (for a job's rendezvous, such
// as torch's MASTER_PORT: a port derived from the pid can be one another job's socket holds).
// 0 when none can be had.
int FreeTcpPort();

// A fresh temporary directory, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  // The path of `name` inside the directory; writes `text` there when it is not empty.
  std::string File(const std::string& name, const std::string& text = "") const;

 private:
  std::string path_;
};

// The whole file, "" when it cannot be read.
std::string ReadFile(const std::string& path);
// Replaces the file's contents with text.
void WriteFile(const std::string& path, const std::string& text);
// Number of newline-terminated lines in text.
int LineCount(const std::string& text);

// The first column of the first row of sql on the database at db_path, opened read-only;
// -1 when there is none or the database cannot be read.
int64_t QueryInt(const std::string& db_path, const std::string& sql);
// As QueryInt, as text; "" when there is none.
std::string QueryText(const std::string& db_path, const std::string& sql);

}  // namespace autotune::testing
