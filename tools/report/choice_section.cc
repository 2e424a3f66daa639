// ChoiceView (tools/report/search_section.h): the chosen setting against the default: the
// decision `search` stored for the run when there is one (shown as stored, not recomputed),
// else decided by the search's own code (tuner::KnobSearch) over the stored measured samples.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "tools/report/search_section.h"
#include "tools/search/decision_record.h"
#include "tools/search/setup.h"
#include "tuner/knob_search.h"

namespace autotune::cli {
namespace {

using nlohmann::json;

// Rows of one setting: its posterior (mean and 95% band, GB/s) and its measured scores.
void AddSettingRows(const std::string& label, const Knobs& knobs, const tuner::Reported& r,
                    const std::vector<Sample>& measured, json* rows) {
  const double sd = std::sqrt(r.prediction.variance);
  rows->push_back({{"setting", label},
                   {"kind", "posterior"},
                   {"gbps", r.prediction.mean / 1e9},
                   {"low", (r.prediction.mean - 1.96 * sd) / 1e9},
                   {"high", (r.prediction.mean + 1.96 * sd) / 1e9}});
  for (const Sample& s : measured) {
    if (s.knobs == knobs) {
      rows->push_back({{"setting", label},
                       {"kind", "measured"},
                       {"gbps", s.score_bytes_per_s / 1e9},
                       {"low", nullptr},
                       {"high", nullptr}});
    }
  }
}

json ChoiceSpec(json rows) {
  const json y = {{"field", "setting"},
                  {"type", "nominal"},
                  {"title", nullptr},
                  {"axis", {{"labelLimit", 420}}}};
  const json x = {{"field", "gbps"},
                  {"type", "quantitative"},
                  {"title", "score (GB/s)"},
                  {"scale", {{"zero", false}}}};
  const json posterior = {{"filter", "datum.kind === 'posterior'"}};
  json band = {{"transform", {posterior}},
               {"mark", {{"type", "rule"}, {"size", 3}}},
               {"encoding",
                {{"x", {{"field", "low"}, {"type", "quantitative"}}},
                 {"x2", {{"field", "high"}}},
                 {"y", y}}}};
  json mean = {{"transform", {posterior}},
               {"mark", {{"type", "point"}, {"filled", true}, {"size", 120}}},
               {"encoding",
                {{"x", x},
                 {"y", y},
                 {"tooltip", {{{"field", "gbps"}}, {{"field", "low"}}, {{"field", "high"}}}}}}};
  json measured = {
      {"transform", {{{"filter", "datum.kind === 'measured'"}}}},
      {"mark", {{"type", "point"}, {"shape", "diamond"}, {"color", "#d62728"}, {"size", 80}}},
      {"encoding", {{"x", x}, {"y", y}, {"tooltip", {{{"field", "gbps"}}}}}}};
  return {{"width", 520},
          {"height", {{"step", 50}}},
          {"data", {{"values", std::move(rows)}}},
          {"layer", {band, mean, measured}}};
}

std::string DecisionText(const tuner::Decision& d) {
  std::string text = std::string("Beats the default: ") + tuner::VerdictText(d.verdict) + ".";
  if (d.has_speedup) {
    char buffer[160];
    std::snprintf(buffer, sizeof(buffer),
                  " Speedup over the default %.3fx, %g%% bootstrap interval [%.3f, %.3f] (run "
                  "medians of step times).",
                  d.speedup.speedup, d.speedup.confidence * 100, d.speedup.low, d.speedup.high);
    text += buffer;
  }
  return text;
}

}  // namespace

Status ChoiceView(Store& store, const SearchGroup& group, ReportView* view, std::string* note) {
  const RunInfo& run = group.run;
  auto no_view = [note](const std::string& why) {
    *note = why;
    return Status::Ok();
  };
  SearchSetup setup;  // as `search` sets up its search of the run, with no flag given
  Status s = SetUpSearch(run, SearchRequest(), &setup);
  if (!s.ok()) return no_view(s.message());
  tuner::KnobSearch search(setup.space, setup.base, setup.options, nullptr, setup.complete);
  StatusOr<int> left_out = ObserveStored(group.measured, &search);
  if (!left_out.ok()) return left_out.status();
  if (search.measured() == 0) return no_view("nothing measured yet.");
  std::vector<tuner::MeasuredSteps> steps;
  AUTOTUNE_RETURN_IF_ERROR(LoadStepTimes(store, group.measured, &steps));
  StatusOr<tuner::SearchLoop::Conclusion> c = search.Judge(steps);
  if (!c.ok()) return no_view(c.status().message());
  StatusOr<Knobs> chosen = search.ToKnobs(c->candidate.point);
  StatusOr<Knobs> fallback = search.ToKnobs(c->default_setting.point);
  if (!chosen.ok() || !fallback.ok()) {
    return no_view((chosen.ok() ? fallback : chosen).status().message());
  }
  // The newest decision a search of any of the group's runs stored.
  std::vector<StoredDecision> decisions;
  AUTOTUNE_RETURN_IF_ERROR(store.ListDecisions(&decisions));
  const StoredDecision* stored = nullptr;
  for (const StoredDecision& d : decisions) {
    if (std::find(group.trace_runs.begin(), group.trace_runs.end(), d.run_id) !=
        group.trace_runs.end()) {
      stored = &d;
    }
  }
  const std::string decision =
      stored != nullptr ? "Stored " + DecisionLine(*stored, run.framework) + "."
                 : DecisionText(c->decision) + " (no decision stored yet: run `autotune search`)";
  json rows = json::array();
  const bool same = c->candidate.point == c->default_setting.point;
  AddSettingRows((same ? "chosen = default: " : "chosen: ") + KnobsShort(*chosen), *chosen,
                 c->candidate, group.measured, &rows);
  if (!same) {
    AddSettingRows("default: " + KnobsShort(*fallback), *fallback, c->default_setting,
                   group.measured, &rows);
  }
  *view = {"Chosen setting against the default",
           "The search's candidate (tuner::KnobSearch over the " +
               std::to_string(search.measured()) +
               " measured samples, as `autotune search` judges it) and the default: the model's "
               "posterior mean (dot) with its 95% band, and their measured scores (diamonds). " +
               decision,
           ChoiceSpec(std::move(rows))};
  return Status::Ok();
}

}  // namespace autotune::cli
