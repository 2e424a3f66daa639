#include "tools/report/runs_section.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "simulator/stored_simulation.h"
#include "traces/stats.h"

namespace autotune::cli {

std::string Verdict(const RatioInterval& speedup, double confidence);  // cmd_compare.cc

namespace {

using nlohmann::json;

// `autotune compare`'s defaults: the same interval as the command prints.
constexpr double kCompareConfidence = 0.95;
constexpr int kCompareResamples = 2000;

constexpr const char* kReady = "gradient ready";
const json kTimelineKinds = {kReady, "negotiation", "copy in", "collective", "copy out"};

std::string RunLabel(const RunInfo& run) {
  return "run " + std::to_string(run.id) + " (" + run.workload.name + ", " + run.topology.key() +
         ", " + KnobsShort(run.knobs, run.framework) + ")";
}

json Segment(const std::string& lane, const char* kind, double start_us, double end_us,
             const std::string& label, int64_t bytes) {
  return {{"lane", lane},
          {"kind", kind},
          {"start_ms", start_us / 1000.0},
          {"end_ms", end_us / 1000.0},
          {"label", label},
          {"bytes", bytes}};
}

std::string Lane(int rank, const char* what) { return "rank " + std::to_string(rank) + " " + what; }

// The rows of one step's timeline; `lanes` gets each lane once, in display order.
json TimelineRows(const StepTrace& step, const Workload& workload,
                  std::vector<std::string>* lanes) {
  json rows = json::array();
  auto add_lane = [lanes](const std::string& lane) {
    if (std::find(lanes->begin(), lanes->end(), lane) == lanes->end()) lanes->push_back(lane);
  };
  for (const TensorEvent& t : step.tensors) {
    const std::string lane = Lane(t.rank, "gradients");
    add_lane(lane);
    const bool known = t.tensor >= 0 && t.tensor < static_cast<int>(workload.tensors.size());
    rows.push_back(Segment(lane, kReady, t.ready_us, t.ready_us,
                           known ? workload.tensors[t.tensor].name : "?", 0));
  }
  for (const CycleRecord& c : step.cycles) {
    const std::string lane = Lane(c.rank, "negotiation");
    add_lane(lane);
    rows.push_back(Segment(lane, "negotiation", c.start_us, c.negotiate_end_us,
                           "cycle " + std::to_string(c.cycle) + ": " + std::to_string(c.responses) +
                               " responses, " + std::to_string(c.cache_hits) + " cache hits",
                           0));
  }
  for (const CollectiveRecord& c : step.collectives) {
    const std::string lane = Lane(c.rank, "collectives");
    add_lane(lane);
    const std::string label = std::string(OpName(c.op)) + " #" + std::to_string(c.seq) + " (" +
                              AlgorithmName(c.algorithm) + ", " + std::to_string(c.tensors.size()) +
                              " tensors)";
    rows.push_back(Segment(lane, "copy in", c.start_us, c.copy_in_end_us, label, c.bytes));
    rows.push_back(Segment(lane, "collective", c.copy_in_end_us, c.comm_end_us, label, c.bytes));
    rows.push_back(Segment(lane, "copy out", c.comm_end_us, c.end_us, label, c.bytes));
  }
  return rows;
}

json TimelineSpec(json rows, const std::vector<std::string>& lanes) {
  const json y = {{"field", "lane"}, {"type", "nominal"}, {"sort", lanes}, {"title", nullptr}};
  const json color = {{"field", "kind"},
                      {"type", "nominal"},
                      {"scale", {{"domain", kTimelineKinds}}},
                      {"title", nullptr}};
  const json tooltip = json::array({{{"field", "kind"}},
                                    {{"field", "label"}},
                                    {{"field", "start_ms"}, {"format", ".3f"}},
                                    {{"field", "end_ms"}, {"format", ".3f"}},
                                    {{"field", "bytes"}, {"format", ","}}});
  const json x = {{"field", "start_ms"}, {"type", "quantitative"}, {"title", "ms from step start"}};
  json spans = {{"transform", {{{"filter", std::string("datum.kind !== '") + kReady + "'"}}}},
                {"mark", {{"type", "bar"}, {"height", {{"band", 0.7}}}}},
                {"encoding",
                 {{"x", x},
                  {"x2", {{"field", "end_ms"}}},
                  {"y", y},
                  {"color", color},
                  {"tooltip", tooltip}}}};
  json ticks = {{"transform", {{{"filter", std::string("datum.kind === '") + kReady + "'"}}}},
                {"mark", {{"type", "tick"}, {"thickness", 1}}},
                {"encoding", {{"x", x}, {"y", y}, {"color", color}, {"tooltip", tooltip}}}};
  return {{"width", 900},
          {"height", {{"step", 28}}},
          {"data", {{"values", std::move(rows)}}},
          {"layer", {spans, ticks}}};
}

json HistogramSpec(const std::vector<double>& step_ms, const RunInfo& run) {
  json values = json::array();
  for (double ms : step_ms) values.push_back({{"step_ms", ms}});
  const json stats = json::array({{{"statistic", "median"}, {"ms", run.step_ms_median}},
                                  {{"statistic", "p95"}, {"ms", run.step_ms_p95}}});
  json bars = {{"data", {{"values", values}}},
               {"mark", "bar"},
               {"encoding",
                {{"x",
                  {{"bin", {{"maxbins", 30}}},
                   {"field", "step_ms"},
                   {"type", "quantitative"},
                   {"title", "step time (ms)"}}},
                 {"y", {{"aggregate", "count"}, {"type", "quantitative"}, {"title", "steps"}}}}}};
  json rules = {{"data", {{"values", stats}}},
                {"mark", {{"type", "rule"}, {"strokeDash", {4, 3}}, {"size", 2}}},
                {"encoding",
                 {{"x", {{"field", "ms"}, {"type", "quantitative"}}},
                  {"color", {{"field", "statistic"}, {"type", "nominal"}, {"title", nullptr}}}}}};
  return {{"width", 420}, {"height", 220}, {"layer", {bars, rules}}};
}

json DistributionsSpec(const RunInfo& a, const std::vector<double>& a_ms, const RunInfo& b,
                       const std::vector<double>& b_ms) {
  json values = json::array();
  const std::string la = "A: run " + std::to_string(a.id), lb = "B: run " + std::to_string(b.id);
  for (double ms : a_ms) values.push_back({{"run", la}, {"step_ms", ms}});
  for (double ms : b_ms) values.push_back({{"run", lb}, {"step_ms", ms}});
  const json y = {{"field", "run"}, {"type", "nominal"}, {"title", nullptr}};
  const json x = {{"field", "step_ms"},
                  {"type", "quantitative"},
                  {"title", "step time (ms)"},
                  {"scale", {{"zero", false}}}};
  json box = {
      {"mark", {{"type", "boxplot"}, {"extent", 1.5}, {"opacity", 0.5}}},
      {"encoding", {{"x", x}, {"y", y}, {"color", {{"field", "run"}, {"legend", nullptr}}}}}};
  json ticks = {{"mark", {{"type", "tick"}, {"opacity", 0.6}}},
                {"encoding",
                 {{"x", x},
                  {"y", y},
                  {"color", {{"field", "run"}, {"legend", nullptr}}},
                  {"tooltip", {{{"field", "step_ms"}, {"format", ".3f"}}}}}}};
  return {{"width", 640},
          {"height", {{"step", 60}}},
          {"data", {{"values", values}}},
          {"layer", {box, ticks}}};
}

json SpeedupSpec(const RatioInterval& speedup) {
  const json row = {{"what", "speedup of B over A"},
                    {"ratio", speedup.ratio},
                    {"low", speedup.low},
                    {"high", speedup.high}};
  const json x = {{"field", "low"},
                  {"type", "quantitative"},
                  {"title", "speedup (x)"},
                  {"scale", {{"zero", false}}}};
  const json y = {{"field", "what"}, {"type", "nominal"}, {"title", nullptr}};
  json interval = {{"mark", {{"type", "rule"}, {"size", 3}}},
                   {"encoding", {{"x", x}, {"x2", {{"field", "high"}}}, {"y", y}}}};
  json point = {{"mark", {{"type", "point"}, {"filled", true}, {"size", 120}}},
                {"encoding",
                 {{"x", {{"field", "ratio"}, {"type", "quantitative"}}},
                  {"y", y},
                  {"tooltip",
                   {{{"field", "ratio"}, {"format", ".3f"}},
                    {{"field", "low"}, {"format", ".3f"}},
                    {{"field", "high"}, {"format", ".3f"}}}}}}};
  json one = {{"data", {{"values", {{{"x", 1.0}}}}}},
              {"mark", {{"type", "rule"}, {"strokeDash", {4, 3}}, {"color", "#888"}}},
              {"encoding", {{"x", {{"field", "x"}, {"type", "quantitative"}}}}}};
  return {{"width", 640},
          {"height", {{"step", 50}}},
          {"data", {{"values", {row}}}},
          {"layer", {interval, point, one}}};
}

}  // namespace

ReportSection RunsSection(const std::vector<RunInfo>& runs) {
  ReportSection section;
  section.title = "Runs";
  section.notes.push_back(
      "Every run of the database; click a column to sort. Score: bytes "
      "reduced and gathered per second (Horovod's definition).");
  section.table.columns = {"id",         "created",        "kind",        "workload",
                           "scale",      "topology",       "backend",     "knobs",
                           "score GB/s", "step ms median", "step ms p95", "complete"};
  for (const RunInfo& r : runs) {
    const std::string complete = r.complete ? "yes"
                                            : "no (" + std::to_string(r.steps_recorded) + "/" +
                                                  std::to_string(r.steps_planned) + ")";
    section.table.rows.push_back(
        {r.id, r.created_at, RunKindName(r.kind), r.workload.name, r.scale, r.topology.key(),
         BackendName(r.backend), KnobsShort(r.knobs, r.framework),
         std::round(r.score_bytes_per_s / 1e6) / 1e3, std::round(r.step_ms_median * 1e3) / 1e3,
         std::round(r.step_ms_p95 * 1e3) / 1e3, complete});
  }
  if (runs.empty()) section.notes.push_back("(no runs)");
  return section;
}

int MedianStepIndex(const Trace& trace) {
  if (trace.steps.empty()) return -1;
  std::vector<double> times;
  for (const StepTrace& s : trace.steps) times.push_back(s.step_ms);
  const double median = Median(times);
  int best = 0;
  for (int i = 1; i < static_cast<int>(times.size()); ++i) {
    if (std::fabs(times[i] - median) < std::fabs(times[best] - median)) best = i;
  }
  return best;
}

Status RunSection(Store& store, int64_t run_id, ReportSection* section) {
  Trace trace;
  AUTOTUNE_RETURN_IF_ERROR(store.LoadTrace(run_id, &trace));
  const int index = MedianStepIndex(trace);
  if (index < 0) {
    return Status::InvalidArgument("run " + std::to_string(run_id) + " has no stored steps");
  }
  const RunInfo& run = trace.run;
  const StepTrace& step = trace.steps[index];
  section->title = "Run " + std::to_string(run_id) + ": " + RunKindName(run.kind) + " " +
                   run.workload.name + " on " + run.topology.key();
  section->notes.push_back(RunLabel(run) + ", backend " + BackendName(run.backend) + ", " +
                           std::to_string(trace.steps.size()) + " steps" +
                           (run.complete ? "" : " (incomplete)") + ".");
  // What its simulations fit the network model to (as `simulate` and `runs` say it).
  if (IsMeasuredKind(run.kind)) {
    sim::NetworkChoice network;
    std::vector<Trace> others;
    // Another run's unreadable trace does not take this run's section away (as in `runs`).
    const Status s = sim::ChooseNetwork(store, trace, &network, &others);
    section->notes.push_back("Network model of its simulations: " +
                             (s.ok() ? network.Line() : "not known: " + s.message()) + ".");
  } else {
    section->notes.push_back("Network model: " + run.hardware + ".");
  }
  std::vector<std::string> lanes;
  json rows = TimelineRows(step, run.workload, &lanes);
  section->views.push_back(
      {"Step timeline (step " + std::to_string(step.step) + ", the median one)",
       "Per rank, when each gradient became ready (ticks); per recording rank, each cycle's "
       "negotiation and each fused collective split into copy-in, collective and copy-out "
       "(hover for its tensors and bytes). Step time " +
           FormatNumber("%.3f ms.", step.step_ms),
       TimelineSpec(std::move(rows), lanes)});
  std::vector<double> step_ms, score;
  AUTOTUNE_RETURN_IF_ERROR(store.GetStepSeries(run_id, &step_ms, &score));
  section->views.push_back({"Step-time distribution",
                            std::to_string(step_ms.size()) + " steps; median " +
                                FormatNumber("%.3f ms", run.step_ms_median) + ", p95 " +
                                FormatNumber("%.3f ms", run.step_ms_p95),
                            HistogramSpec(step_ms, run)});
  return Status::Ok();
}

Status CompareSection(Store& store, int64_t a, int64_t b, ReportSection* section) {
  RunInfo run_a, run_b;
  std::vector<double> a_ms, b_ms, scores;
  AUTOTUNE_RETURN_IF_ERROR(store.GetRun(a, &run_a));
  AUTOTUNE_RETURN_IF_ERROR(store.GetRun(b, &run_b));
  AUTOTUNE_RETURN_IF_ERROR(store.GetStepSeries(a, &a_ms, &scores));
  AUTOTUNE_RETURN_IF_ERROR(store.GetStepSeries(b, &b_ms, &scores));
  for (const auto& [id, ms] : {std::pair{a, &a_ms}, std::pair{b, &b_ms}}) {
    if (ms->empty()) {
      return Status::InvalidArgument("compare: run " + std::to_string(id) + " has no stored steps");
    }
  }
  const RatioInterval speedup =
      BootstrapMedianRatio(a_ms, b_ms, kCompareConfidence, kCompareResamples);
  const std::string verdict = Verdict(speedup, kCompareConfidence);
  section->title =
      "Compare run " + std::to_string(a) + " (A) with run " + std::to_string(b) + " (B)";
  section->notes = {"A = " + RunLabel(run_a), "B = " + RunLabel(run_b),
                    "verdict: " + verdict + " (as `autotune compare " + std::to_string(a) + " " +
                        std::to_string(b) + "` prints it)"};
  section->views.push_back({"Step-time distributions",
                            "Every step of each run (ticks) over its box plot; A median " +
                                FormatNumber("%.3f ms", Median(a_ms)) + ", B median " +
                                FormatNumber("%.3f ms", Median(b_ms)) + ".",
                            DistributionsSpec(run_a, a_ms, run_b, b_ms)});
  section->views.push_back(
      {"Speedup of B over A",
       "Median step time of A over that of B: " + FormatNumber("%.3fx", speedup.ratio) + ", 95% " +
           "bootstrap interval [" + FormatNumber("%.3f", speedup.low) + ", " +
           FormatNumber("%.3f", speedup.high) +
           "] (2000 resamples); the dashed line is 1 (no change). " + verdict + ".",
       SpeedupSpec(speedup)});
  return Status::Ok();
}

}  // namespace autotune::cli
