#include "tools/torch_python.h"

#include <unistd.h>

#include <cstdlib>

namespace autotune::cli {

std::string TorchSiteDir() {
  const char* dir = std::getenv("AUTOTUNE_TORCH_DIR");
  return dir != nullptr && *dir != '\0' ? dir : AUTOTUNE_TORCH_SITE_DIR;
}

std::string TorchPython() {
  const char* python = std::getenv("AUTOTUNE_PYTHON");
  if (python != nullptr && *python != '\0') return python;
  return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
}

std::string PythonPathWithSite() {
  const char* current = std::getenv("PYTHONPATH");
  std::string out = TorchSiteDir();
  if (current != nullptr && *current != '\0') out += std::string(":") + current;
  return out;
}

}  // namespace autotune::cli
