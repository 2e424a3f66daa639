#include "tools/torch_python.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "tools/launch.h"

namespace autotune::cli {
namespace {

// The last non-empty line of text ("" if none).
std::string LastLine(const std::string& text) {
  std::istringstream in(text);
  std::string line, last;
  while (std::getline(in, line)) {
    if (!line.empty()) last = line;
  }
  return last;
}

}  // namespace

StatusOr<std::string> TorchSiteDir() {
  const char* dir = std::getenv("AUTOTUNE_TORCH_DIR");
  if (dir != nullptr && *dir != '\0') return std::string(dir);
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) {
    return Status::NotFound("autotune's Python side: cannot read /proc/self/exe (" +
                            ec.message() + "); set AUTOTUNE_TORCH_DIR to its python/ folder");
  }
  const std::filesystem::path bin = exe.parent_path();
  for (const std::filesystem::path& candidate :
       {bin / "python", bin / ".." / "share" / "autotune" / "python", bin / ".." / "python"}) {
    if (std::filesystem::is_regular_file(candidate / "sitecustomize.py", ec)) {
      return std::filesystem::weakly_canonical(candidate, ec).string();
    }
  }
  return Status::NotFound("autotune's Python side (sitecustomize.py) is not beside " +
                          exe.string() + " (python/, ../share/autotune/python, ../python); " +
                          "set AUTOTUNE_TORCH_DIR to the repository's python/ folder");
}

std::string TorchPython() {
  const char* python = std::getenv("AUTOTUNE_PYTHON");
  if (python != nullptr && *python != '\0') return python;
  return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
}

StatusOr<std::string> PythonPathWithSite() {
  StatusOr<std::string> site = TorchSiteDir();
  if (!site.ok()) return site.status();
  const char* current = std::getenv("PYTHONPATH");
  std::string out = *site;
  if (current != nullptr && *current != '\0') out += std::string(":") + current;
  return out;
}

}  // namespace autotune::cli

namespace autotune::cli {

Status RunTorchHelper(const std::string& module, const std::vector<std::string>& args,
                      const std::vector<std::string>& env, TorchHelperOutput* out) {
  const std::string python = TorchPython();
  const StatusOr<std::string> python_path = PythonPathWithSite();
  if (!python_path.ok()) return python_path.status();
  const std::filesystem::path err =
      std::filesystem::temp_directory_path() /
      ("autotune-torch-helper-" + std::to_string(getpid()) + ".err");
  std::string command = "PYTHONPATH=" + ShellQuote(*python_path);
  for (const std::string& assignment : env) command += " " + ShellQuote(assignment);
  std::vector<std::string> argv = {python, "-m", module};
  argv.insert(argv.end(), args.begin(), args.end());
  command += " " + JoinCommandLine(argv) + " 2>" + ShellQuote(err.string());
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return Status::IoError("cannot run " + python);
  out->out.clear();
  char chunk[4096];
  for (size_t n; (n = std::fread(chunk, 1, sizeof chunk, pipe)) > 0;) out->out.append(chunk, n);
  out->exit_status = pclose(pipe);
  std::ifstream err_in(err);
  std::stringstream err_text;
  err_text << err_in.rdbuf();
  std::error_code ec;
  std::filesystem::remove(err, ec);
  out->last_err_line = LastLine(err_text.str());
  return Status::Ok();
}

bool TorchMissing(const std::string& last_err_line) {
  return last_err_line.find("No module named 'torch'") != std::string::npos ||
         last_err_line.find("PyTorch is not importable") != std::string::npos;
}

}  // namespace autotune::cli
