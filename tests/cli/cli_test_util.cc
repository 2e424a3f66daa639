#include "tests/cli/cli_test_util.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace autotune::testing {

CommandResult RunAutotune(const std::string& args) {
  TempDir capture;
  std::string out = capture.File("out"), err = capture.File("err");
  std::string cmd = "timeout 300 '" + std::string(AUTOTUNE_BINARY) + "' " + args + " >" + out +
                    " 2>" + err + " </dev/null";
  int status = std::system(cmd.c_str());
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = ReadFile(out);
  r.err = ReadFile(err);
  return r;
}

TempDir::TempDir() {
  char tmpl[] = "/tmp/autotune_cli_XXXXXX";
  path_ = mkdtemp(tmpl);
}

std::string TempDir::File(const std::string& name, const std::string& text) const {
  std::string file = path_ + "/" + name;
  if (!text.empty()) WriteFile(file, text);
  return file;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

int LineCount(const std::string& text) {
  int n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

}  // namespace autotune::testing
