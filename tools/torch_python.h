// Where autotune's Python side lives and which interpreter runs it (PyTorch support).
#pragma once

#include <string>
#include <vector>

#include "traces/status.h"

namespace autotune::cli {

// The folder holding sitecustomize.py and the autotune_torch package (the repository's
// python/): $AUTOTUNE_TORCH_DIR when set, else the first of these beside the running binary
// (/proc/self/exe) that holds sitecustomize.py: python/ (the build tree's copy),
// ../share/autotune/python (an installed binary), ../python (a binary in a folder of the
// source tree). NotFound, one line naming the places looked at and AUTOTUNE_TORCH_DIR, when
// none does (a binary copied away from its python/).
StatusOr<std::string> TorchSiteDir();
// The interpreter for the --from-torch helper: $AUTOTUNE_PYTHON when set, else
// /usr/bin/python3 (Debian's, where python3-torch is) when it exists, else python3.
std::string TorchPython();
// PYTHONPATH with the site folder first (the current value kept after it); TorchSiteDir's
// error when there is no site folder.
StatusOr<std::string> PythonPathWithSite();

// What a helper of autotune_torch printed.
struct TorchHelperOutput {
  int exit_status = 0;        // pclose's; 0 = success
  std::string out;            // stdout, whole
  std::string last_err_line;  // the last non-empty line of stderr ("" if none)
};
// Runs `TorchPython() -m MODULE ARGS...` with PYTHONPATH = PythonPathWithSite() and the extra
// environment `env` (NAME=VALUE each, set for the helper only), and waits for it. An error only
// when it cannot be started (no site folder, no shell); the helper's own failure is in
// exit_status and last_err_line.
Status RunTorchHelper(const std::string& module, const std::vector<std::string>& args,
                      const std::vector<std::string>& env, TorchHelperOutput* out);
// Whether a helper's last stderr line says PyTorch cannot be imported.
bool TorchMissing(const std::string& last_err_line);

}  // namespace autotune::cli
