#include "tools/torch_python.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace autotune::cli {

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
