#include "tools/report/search_section.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "tools/report/stats.h"

namespace autotune::cli {
namespace {

using nlohmann::json;

Status LoadSamples(Store& store, SearchGroup* group) {
  SampleQuery query;
  query.workload = group->run.workload.name;
  query.topology = group->run.topology;
  query.fidelity = Fidelity::kMeasured;
  query.scale = group->run.scale;
  query.backend = group->run.backend;
  AUTOTUNE_RETURN_IF_ERROR(store.ListSamples(query, &group->measured));
  // A simulated sample belongs to the group through the trace it replayed.
  SampleQuery simulated;
  simulated.workload = query.workload;
  simulated.topology = query.topology;
  simulated.fidelity = Fidelity::kSimulated;
  std::vector<Sample> all;
  AUTOTUNE_RETURN_IF_ERROR(store.ListSamples(simulated, &all));
  for (Sample& s : all) {
    const auto& runs = group->trace_runs;
    if (std::find(runs.begin(), runs.end(), s.trace_run_id) != runs.end()) {
      group->simulated.push_back(std::move(s));
    }
  }
  return Status::Ok();
}

json Field(const char* name, const char* type, const char* title) {
  return {{"field", name}, {"type", type}, {"title", title}};
}

const json kFidelityColor = {{"field", "fidelity"},
                             {"type", "nominal"},
                             {"scale", {{"domain", {"measured", "simulated"}}}},
                             {"title", nullptr}};

// Best measured score so far against the number of measured samples.
ReportView ConvergenceView(const SearchGroup& group) {
  json values = json::array();
  double best = 0.0;
  int n = 0;
  for (const Sample& s : group.measured) {
    best = std::max(best, s.score_bytes_per_s);
    values.push_back({{"measured", ++n},
                      {"score_gbps", s.score_bytes_per_s / 1e9},
                      {"best_gbps", best / 1e9},
                      {"knobs", KnobsShort(s.knobs)}});
  }
  const json x = {{"field", "measured"},
                  {"type", "quantitative"},
                  {"title", "measured samples"},
                  {"axis", {{"tickMinStep", 1}}}};
  json line = {{"mark", {{"type", "line"}, {"interpolate", "step-after"}, {"point", true}}},
               {"encoding", {{"x", x}, {"y", Field("best_gbps", "quantitative", "GB/s")}}}};
  json each = {{"mark", {{"type", "point"}, {"color", "#999"}}},
               {"encoding",
                {{"x", x},
                 {"y", {{"field", "score_gbps"}, {"type", "quantitative"}}},
                 {"tooltip", {{{"field", "knobs"}}, {{"field", "score_gbps"}}}}}}};
  return {
      "Convergence: best score against measured samples",
      "The best measured score so far (line) and each measured sample's score (grey), in "
      "the order they were taken; best " +
          FormatNumber("%.4f GB/s", best / 1e9) + " after " + std::to_string(n) +
          " measured samples.",
      {{"width", 420}, {"height", 240}, {"data", {{"values", values}}}, {"layer", {line, each}}}};
}

json SampleRow(const Sample& s, int order) {
  return {{"order", order},
          {"fidelity", FidelityName(s.fidelity)},
          {"score_gbps", s.score_bytes_per_s / 1e9},
          {"step_ms", s.step_ms},
          {"threshold_mb", s.knobs.fusion_threshold_mb},
          {"cycle_ms", s.knobs.cycle_time_ms},
          {"allreduce", s.knobs.hierarchical_allreduce ? "hierarchical" : "flat"},
          {"knobs", KnobsShort(s.knobs)}};
}

// Every sample of the group, both fidelities, in the order they were stored.
json SampleRows(const SearchGroup& group) {
  std::vector<const Sample*> all;
  for (const Sample& s : group.measured) all.push_back(&s);
  for (const Sample& s : group.simulated) all.push_back(&s);
  std::sort(all.begin(), all.end(), [](const Sample* a, const Sample* b) { return a->id < b->id; });
  json rows = json::array();
  for (size_t i = 0; i < all.size(); ++i)
    rows.push_back(SampleRow(*all[i], static_cast<int>(i) + 1));
  return rows;
}

const json kSampleTooltip = {{{"field", "fidelity"}},
                             {{"field", "knobs"}},
                             {{"field", "step_ms"}, {"format", ".3f"}},
                             {{"field", "score_gbps"}, {"format", ".4f"}}};

ReportView SamplesView(const json& rows, size_t measured, size_t simulated) {
  return {"Every sample by fidelity",
          std::to_string(measured) + " measured and " + std::to_string(simulated) +
              " simulated samples, in the order they were stored.",
          {{"width", 420},
           {"height", 240},
           {"data", {{"values", rows}}},
           {"mark", {{"type", "point"}, {"filled", true}}},
           {"encoding",
            {{"x", Field("order", "quantitative", "sample (order stored)")},
             {"y", Field("score_gbps", "quantitative", "score (GB/s)")},
             {"color", kFidelityColor},
             {"shape", {{"field", "fidelity"}, {"type", "nominal"}, {"legend", nullptr}}},
             {"tooltip", kSampleTooltip}}}}};
}

ReportView SimulatedMeasuredView(const std::vector<SimulatedMeasuredPair>& pairs) {
  json values = json::array();
  std::vector<double> measured, simulated;
  double low = 1e300, high = 0.0;
  for (const SimulatedMeasuredPair& p : pairs) {
    values.push_back({{"measured_ms", p.measured_step_ms},
                      {"simulated_ms", p.simulated_step_ms},
                      {"knobs", KnobsShort(p.knobs)}});
    measured.push_back(p.measured_step_ms);
    simulated.push_back(p.simulated_step_ms);
    low = std::min({low, p.measured_step_ms, p.simulated_step_ms});
    high = std::max({high, p.measured_step_ms, p.simulated_step_ms});
  }
  const auto mape = MeanAbsolutePercentError(measured, simulated);
  const auto rho = SpearmanRankCorrelation(measured, simulated);
  const std::string stats =
      "MAPE " + (mape ? FormatNumber("%.1f%%", *mape * 100) : std::string("n/a")) + ", Spearman " +
      (rho ? FormatNumber("%.3f", *rho) : std::string("n/a (fewer than 2 distinct settings)")) +
      ", " + std::to_string(pairs.size()) + " settings";
  const json diagonal = json::array({{{"x", low * 0.95}}, {{"x", high * 1.05}}});
  json line = {{"data", {{"values", diagonal}}},
               {"mark", {{"type", "line"}, {"strokeDash", {4, 3}}, {"color", "#888"}}},
               {"encoding",
                {{"x", {{"field", "x"}, {"type", "quantitative"}}},
                 {"y", {{"field", "x"}, {"type", "quantitative"}}}}}};
  json points = {
      {"data", {{"values", values}}},
      {"mark", {{"type", "point"}, {"filled", true}, {"size", 80}}},
      {"encoding",
       {{"x", Field("measured_ms", "quantitative", "measured step time (ms)")},
        {"y", Field("simulated_ms", "quantitative", "simulated step time (ms)")},
        {"tooltip",
         {{{"field", "knobs"}}, {{"field", "measured_ms"}}, {{"field", "simulated_ms"}}}}}}};
  json spec = {{"width", 360},
               {"height", 360},
               {"title", {{"text", "simulated against measured"}, {"subtitle", stats}}},
               {"layer", {line, points}},
               {"resolve", {{"scale", {{"x", "shared"}, {"y", "shared"}}}}}};
  return {"Simulated against measured",
          "Median step time of each measured setting against the simulator's prediction of it "
          "(newest simulated sample of the same knobs); dashed: y = x. " +
              stats + ".",
          spec};
}

json KnobScatter(const json& rows, json x, const char* title) {
  return {{"width", 320},
          {"height", 220},
          {"title", title},
          {"data", {{"values", rows}}},
          {"mark", {{"type", "point"}, {"filled", true}, {"opacity", 0.7}}},
          {"encoding",
           {{"x", std::move(x)},
            {"y", Field("step_ms", "quantitative", "step time (ms)")},
            {"color", kFidelityColor},
            {"tooltip", kSampleTooltip}}}};
}

std::vector<ReportView> KnobViews(const json& rows) {
  json threshold = Field("threshold_mb", "quantitative", "fusion threshold (MB, symlog)");
  threshold["scale"] = {{"type", "symlog"}};
  json cycle = Field("cycle_ms", "quantitative", "cycle time (ms, log)");
  cycle["scale"] = {{"type", "log"}};
  json hierarchy = Field("allreduce", "nominal", "allreduce");
  hierarchy["scale"] = {{"domain", {"flat", "hierarchical"}}};
  json flat = KnobScatter(rows, hierarchy, "flat against hierarchical allreduce");
  flat["mark"] = {{"type", "tick"}, {"thickness", 2}};
  return {
      {"Step time against fusion threshold",
       "Every sample's median step time against its fusion threshold (a symmetric log "
       "axis, so 0 = no fusion shows); color: fidelity.",
       KnobScatter(rows, threshold, "fusion threshold")},
      {"Step time against cycle time",
       "Every sample's median step time against its background cycle time (log axis).",
       KnobScatter(rows, cycle, "cycle time")},
      {"Flat against hierarchical", "Every sample's median step time by allreduce kind.", flat}};
}

}  // namespace

bool SameSearchGroup(const RunInfo& a, const RunInfo& b) {
  return a.workload.name == b.workload.name && a.topology.SameShape(b.topology) &&
         a.scale == b.scale && a.backend == b.backend;
}

Status LoadSearchGroups(Store& store, const std::vector<RunInfo>& runs,
                        std::vector<SearchGroup>* groups) {
  std::vector<SearchGroup> all;
  for (const RunInfo& run : runs) {
    if (!IsMeasuredKind(run.kind)) continue;
    auto it = std::find_if(all.begin(), all.end(),
                           [&](const SearchGroup& g) { return SameSearchGroup(g.run, run); });
    if (it == all.end()) it = all.insert(all.end(), SearchGroup{});
    it->run = run;
    it->trace_runs.push_back(run.id);
  }
  for (SearchGroup& group : all) {
    AUTOTUNE_RETURN_IF_ERROR(LoadSamples(store, &group));
    if (!group.measured.empty() || !group.simulated.empty()) groups->push_back(std::move(group));
  }
  return Status::Ok();
}

std::vector<SimulatedMeasuredPair> PairSimulatedWithMeasured(const SearchGroup& group) {
  std::vector<SimulatedMeasuredPair> pairs;
  for (const Sample& m : group.measured) {
    const Sample* newest = nullptr;
    for (const Sample& s : group.simulated) {
      if (s.knobs == m.knobs && (newest == nullptr || s.id > newest->id)) newest = &s;
    }
    if (newest != nullptr) pairs.push_back({m.knobs, m.step_ms, newest->step_ms});
  }
  return pairs;
}

Status SearchSection(Store& store, const SearchGroup& group, ReportSection* section) {
  const RunInfo& run = group.run;
  section->title = "Search: " + run.workload.name + " on " + run.topology.key() + " (scale " +
                   FormatNumber("%g", run.scale) + ", " + BackendName(run.backend) + ")";
  section->notes.push_back(
      "The samples `autotune search --run " + std::to_string(run.id) +
      "` blends: measured samples of this workload, topology, scale and backend, and the "
      "simulated samples stored from their traces (`autotune simulate`).");
  if (!group.measured.empty()) section->views.push_back(ConvergenceView(group));
  const json rows = SampleRows(group);
  section->views.push_back(SamplesView(rows, group.measured.size(), group.simulated.size()));
  ReportView choice;
  std::string note;
  AUTOTUNE_RETURN_IF_ERROR(ChoiceView(store, group, &choice, &note));
  if (choice.spec.is_null()) {
    section->notes.push_back("Chosen against default: " + note);
  } else {
    section->views.push_back(std::move(choice));
  }
  const std::vector<SimulatedMeasuredPair> pairs = PairSimulatedWithMeasured(group);
  if (pairs.empty()) {
    section->notes.push_back(
        "Simulated against measured: no measured setting has a simulated "
        "sample yet (`autotune simulate --run ID` with its knobs).");
  } else {
    section->views.push_back(SimulatedMeasuredView(pairs));
  }
  for (ReportView& view : KnobViews(rows)) section->views.push_back(std::move(view));
  return Status::Ok();
}

}  // namespace autotune::cli
