// The page of `autotune report`, built from a database: the runs table, the runs shown in
// detail, every search (tools/report/search_section.h) and one comparison
// (tools/report/runs_section.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "store/store.h"
#include "tools/report/page.h"
#include "traces/status.h"

namespace autotune::cli {

// Runs shown in detail when none are named: the newest this many measured or imported runs.
inline constexpr int kDefaultDetailRuns = 3;

struct ReportRequest {
  std::vector<int64_t> runs;  // runs shown in detail; empty: DefaultDetailRuns
  // Runs compared (A, B); empty: DefaultComparison.
  std::optional<std::pair<int64_t, int64_t>> compare;
};

// The newest kDefaultDetailRuns measured or imported runs with stored steps, oldest first.
std::vector<int64_t> DefaultDetailRuns(const std::vector<RunInfo>& runs);

// The oldest and the newest complete measured or imported runs of the newest such run's
// workload, topology, scale and backend; nullopt when there are fewer than two.
std::optional<std::pair<int64_t, int64_t>> DefaultComparison(const std::vector<RunInfo>& runs);

// The whole page; `db` names the database in the subtitle. NotFound names a requested run
// that does not exist.
Status BuildReportPage(Store& store, const std::string& db, const ReportRequest& request,
                       ReportPage* page);

}  // namespace autotune::cli
