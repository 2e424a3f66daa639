#include "tools/report/data.h"

#include <algorithm>

#include "tools/report/runs_section.h"
#include "tools/report/search_section.h"

namespace autotune::cli {
namespace {

bool Detailable(const RunInfo& run) { return IsMeasuredKind(run.kind) && run.steps_recorded > 0; }

Status AddSearchSections(Store& store, const std::vector<RunInfo>& runs, ReportPage* page) {
  std::vector<SearchGroup> groups;
  AUTOTUNE_RETURN_IF_ERROR(LoadSearchGroups(store, runs, &groups));
  for (const SearchGroup& group : groups) {
    ReportSection section;
    AUTOTUNE_RETURN_IF_ERROR(SearchSection(store, group, &section));
    page->sections.push_back(std::move(section));
  }
  return Status::Ok();
}

}  // namespace

std::vector<int64_t> DefaultDetailRuns(const std::vector<RunInfo>& runs) {
  std::vector<int64_t> ids;
  for (auto it = runs.rbegin(); it != runs.rend() && ids.size() < kDefaultDetailRuns; ++it) {
    if (Detailable(*it)) ids.push_back(it->id);
  }
  std::reverse(ids.begin(), ids.end());
  return ids;
}

std::optional<std::pair<int64_t, int64_t>> DefaultComparison(const std::vector<RunInfo>& runs) {
  const RunInfo* newest = nullptr;
  for (const RunInfo& r : runs) {
    if (IsMeasuredKind(r.kind) && r.complete) newest = &r;
  }
  if (newest == nullptr) return std::nullopt;
  for (const RunInfo& r : runs) {
    if (IsMeasuredKind(r.kind) && r.complete && SameSearchGroup(r, *newest) && r.id != newest->id) {
      return std::make_pair(r.id, newest->id);
    }
  }
  return std::nullopt;
}

Status BuildReportPage(Store& store, const std::string& db, const ReportRequest& request,
                       ReportPage* page) {
  std::vector<RunInfo> runs;
  std::vector<Status> unreadable;
  AUTOTUNE_RETURN_IF_ERROR(store.ListRuns(&runs, &unreadable));
  page->title = "autotune report";
  page->subtitle = db + ": " + std::to_string(runs.size()) + " runs";
  if (!unreadable.empty()) {
    page->subtitle += " (" + std::to_string(unreadable.size()) + " unreadable, left out)";
  }
  for (const Status& s : unreadable) page->unreadable_runs.push_back(s.message());
  page->sections.push_back(RunsSection(runs));
  const std::vector<int64_t> detail = request.runs.empty() ? DefaultDetailRuns(runs) : request.runs;
  for (int64_t id : detail) {
    ReportSection section;
    AUTOTUNE_RETURN_IF_ERROR(RunSection(store, id, &section));
    page->sections.push_back(std::move(section));
  }
  AUTOTUNE_RETURN_IF_ERROR(AddSearchSections(store, runs, page));
  const auto pair = request.compare ? request.compare : DefaultComparison(runs);
  if (pair) {
    ReportSection section;
    AUTOTUNE_RETURN_IF_ERROR(CompareSection(store, pair->first, pair->second, &section));
    page->sections.push_back(std::move(section));
  }
  return Status::Ok();
}

}  // namespace autotune::cli
