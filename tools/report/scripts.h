// The plotting library `autotune report` inlines into its page: vega, vega-lite and
// vega-embed, minified, as pinned in tools/report/web/package-lock.json. Embedded into the
// binary at build time (tools/report/embed_scripts.cmake), so the page needs no network.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace autotune::cli {

struct ReportScript {
  std::string path;       // inside node_modules, e.g. "vega/build/vega.min.js"
  std::string_view text;  // the whole script
};

// The scripts in load order (vega, vega-lite, vega-embed).
const std::vector<ReportScript>& ReportScripts();

}  // namespace autotune::cli
