// Where autotune's Python side lives and which interpreter runs it (PyTorch support).
#pragma once

#include <string>

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

}  // namespace autotune::cli
