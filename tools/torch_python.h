// Where autotune's Python side lives and which interpreter runs it (PyTorch support).
#pragma once

#include <string>

namespace autotune::cli {

// The folder holding sitecustomize.py and the autotune_torch package: $AUTOTUNE_TORCH_DIR
// when set, else the source tree's tools/torch/site this binary was built from.
std::string TorchSiteDir();
// The interpreter for the --from-torch helper: $AUTOTUNE_PYTHON when set, else
// /usr/bin/python3 (Debian's, where python3-torch is) when it exists, else python3.
std::string TorchPython();
// PYTHONPATH with the site folder first (the current value kept after it).
std::string PythonPathWithSite();

}  // namespace autotune::cli
