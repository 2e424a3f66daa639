// `autotune compare A B`: two runs side by side, with a bootstrap confidence interval on
// the speedup and a plain verdict.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "store/store.h"
#include "tools/command.h"
#include "tools/flag_checks.h"
#include "tools/help_defaults.h"
#include "traces/stats.h"

namespace autotune::cli {

nlohmann::json RunToJson(const RunInfo& r);  // cmd_runs.cc

namespace {

struct Side {
  RunInfo run;
  std::vector<double> step_ms;
  std::vector<double> score;
};

Status LoadSide(Store& store, int64_t id, Side* side) {
  AUTOTUNE_RETURN_IF_ERROR(store.GetRun(id, &side->run));
  AUTOTUNE_RETURN_IF_ERROR(store.GetStepSeries(id, &side->step_ms, &side->score));
  if (side->step_ms.empty()) {
    return Status::InvalidArgument("run " + std::to_string(id) + " has no stored steps");
  }
  return Status::Ok();
}

// Interquartile range as the spread of step times.
double Iqr(const std::vector<double>& v) { return Percentile(v, 75) - Percentile(v, 25); }

}  // namespace

// The verdict line on a speedup interval; also the report's (tools/report/runs_section.cc).
std::string Verdict(const RatioInterval& speedup, double confidence) {
  char buf[256];
  int pct = static_cast<int>(std::lround(confidence * 100));
  if (speedup.low <= 1.0 && speedup.high >= 1.0) {
    std::snprintf(buf, sizeof buf,
                  "within noise: the %d%% interval of the speedup [%.3f, %.3f] contains 1, so "
                  "neither run is reliably faster",
                  pct, speedup.low, speedup.high);
  } else if (speedup.low > 1.0) {
    std::snprintf(buf, sizeof buf, "B is faster: %.1f%% shorter median step (%d%% CI of speedup "
                  "%.3fx-%.3fx)", (1 - 1 / speedup.ratio) * 100, pct, speedup.low, speedup.high);
  } else {
    std::snprintf(buf, sizeof buf, "B is slower: %.1f%% longer median step (%d%% CI of speedup "
                  "%.3fx-%.3fx)", (1 / speedup.ratio - 1) * 100, pct, speedup.low, speedup.high);
  }
  return buf;
}

namespace {

struct CompareOptions {
  std::string db = "autotune.db";
  int64_t a = 0, b = 0;
  bool json = false;
  double confidence = 0.95;
  int resamples = 2000;
};

// Everything `compare` reports about runs A and B.
struct Comparison {
  Side a, b;
  RatioInterval speedup;  // > 1: B's steps are shorter than A's
  std::string verdict;
  // Knob name -> [value in A, value in B], differing knobs only.
  nlohmann::json knob_diff;
  std::vector<std::string> warnings;  // what makes the two runs not comparable
};

// Knob name -> [value in a, value in b] for every knob whose values differ.
nlohmann::json KnobDifferences(const Knobs& a, const Knobs& b) {
  nlohmann::json diff = nlohmann::json::object();
  for (const std::string& name : KnobNames()) {
    std::string va = KnobValue(a, name), vb = KnobValue(b, name);
    if (va != vb) diff[name] = {va, vb};
  }
  return diff;
}

// What differs between the two runs besides the knobs, or what makes either doubtful.
std::vector<std::string> ComparabilityWarnings(const RunInfo& a, const RunInfo& b) {
  std::vector<std::string> warnings;
  if (a.framework != b.framework) warnings.push_back("different frameworks");
  if (a.workload.name != b.workload.name) warnings.push_back("different workloads");
  if (!a.topology.SameShape(b.topology)) warnings.push_back("different topologies");
  if (a.scale != b.scale) warnings.push_back("different --scale");
  // The hardware string also names the executor's compute emulation (spin or sleep).
  if (a.hardware != b.hardware) warnings.push_back("different hardware or compute emulation");
  if (!a.complete || !b.complete) warnings.push_back("an incomplete run");
  return warnings;
}

// Prints the comparison as one JSON object on stdout.
void PrintJson(const Comparison& c, const CompareOptions& opts) {
  nlohmann::json out = {
      {"a", RunToJson(c.a.run)},
      {"b", RunToJson(c.b.run)},
      {"knob_differences", c.knob_diff},
      {"step_ms_median", {Median(c.a.step_ms), Median(c.b.step_ms)}},
      {"step_ms_iqr", {Iqr(c.a.step_ms), Iqr(c.b.step_ms)}},
      {"score_bytes_per_s_median", {Median(c.a.score), Median(c.b.score)}},
      {"speedup", c.speedup.ratio},
      {"speedup_ci", {c.speedup.low, c.speedup.high}},
      {"confidence", opts.confidence},
      {"significant", c.speedup.low > 1.0 || c.speedup.high < 1.0},
      {"verdict", c.verdict},
      {"warnings", c.warnings}};
  std::cout << out.dump() << "\n";
}

// Prints the comparison as a two-column table, then the speedup, verdict and warnings.
void PrintTable(const Comparison& c, const CompareOptions& opts) {
  const RunInfo& a = c.a.run;
  const RunInfo& b = c.b.run;
  std::printf("%-24s %-28s %-28s\n", "", ("A = run " + std::to_string(a.id)).c_str(),
              ("B = run " + std::to_string(b.id)).c_str());
  std::printf("%-24s %-28s %-28s\n", "kind / workload", (RunKindName(a.kind) + (" " + a.workload.name)).c_str(),
              (RunKindName(b.kind) + (" " + b.workload.name)).c_str());
  std::printf("%-24s %-28s %-28s\n", "topology", a.topology.key().c_str(),
              b.topology.key().c_str());
  std::printf("%-24s %-28s %-28s\n", "framework", FrameworkName(a.framework),
              FrameworkName(b.framework));
  for (const auto& [name, values] : c.knob_diff.items()) {
    std::printf("%-24s %-28s %-28s\n", name.c_str(), values[0].get<std::string>().c_str(),
                values[1].get<std::string>().c_str());
  }
  if (c.knob_diff.empty()) std::printf("%-24s %s\n", "knobs", "identical");
  std::printf("%-24s %-28s %-28s\n", "steps", std::to_string(c.a.step_ms.size()).c_str(),
              std::to_string(c.b.step_ms.size()).c_str());
  char ca[64], cb[64];
  std::snprintf(ca, sizeof ca, "%.3f (IQR %.3f)", Median(c.a.step_ms), Iqr(c.a.step_ms));
  std::snprintf(cb, sizeof cb, "%.3f (IQR %.3f)", Median(c.b.step_ms), Iqr(c.b.step_ms));
  std::printf("%-24s %-28s %-28s\n", "step ms median", ca, cb);
  std::snprintf(ca, sizeof ca, "%.4f", Median(c.a.score) / 1e9);
  std::snprintf(cb, sizeof cb, "%.4f", Median(c.b.score) / 1e9);
  std::printf("%-24s %-28s %-28s\n", "score GB/s median", ca, cb);
  std::printf("speedup of B over A: %.3fx  [%.3f, %.3f] (%g%% bootstrap CI, %d resamples)\n",
              c.speedup.ratio, c.speedup.low, c.speedup.high, opts.confidence * 100,
              opts.resamples);
  std::printf("verdict: %s\n", c.verdict.c_str());
  for (const std::string& w : c.warnings) std::printf("warning: comparing %s\n", w.c_str());
}

// The command's action: loads both runs, compares and prints. Returns the exit code.
int RunCompare(const CompareOptions& opts) {
  std::unique_ptr<Store> store;
  Status s = Store::Open(opts.db, Store::Mode::kReadOnly, &store);
  if (!s.ok()) return Fail(s);
  Comparison c;
  if (!(s = LoadSide(*store, opts.a, &c.a)).ok()) return Fail(s);
  if (!(s = LoadSide(*store, opts.b, &c.b)).ok()) return Fail(s);
  c.speedup = BootstrapMedianRatio(c.a.step_ms, c.b.step_ms, opts.confidence, opts.resamples);
  c.verdict = Verdict(c.speedup, opts.confidence);
  c.knob_diff = KnobDifferences(c.a.run.knobs, c.b.run.knobs);
  c.warnings = ComparabilityWarnings(c.a.run, c.b.run);
  if (opts.json) {
    PrintJson(c, opts);
  } else {
    PrintTable(c, opts);
  }
  return 0;
}

}  // namespace

void AddCompareCommand(CLI::App& root, Action* action) {
  auto opts = std::make_shared<CompareOptions>();
  CLI::App* app = root.add_subcommand(
      "compare", "Put runs A and B side by side: knob differences, score and step time with "
                 "spread, speedup of B over A with a bootstrap confidence interval, verdict");
  PrintDefaultsInDescriptions(app);
  app->add_option("A", opts->a, "Run id of the baseline")->required();
  app->add_option("B", opts->b, "Run id to compare with the baseline")->required();
  app->add_option("--db", opts->db, "SQLite database file.")->capture_default_str();
  app->add_option("--confidence", opts->confidence,
                  "Confidence level of the speedup interval, in (0, 1).")
      ->capture_default_str()
      ->check(Between(0.5, 0.999));
  app->add_option("--resamples", opts->resamples, "Bootstrap resamples over steps.")
      ->capture_default_str()
      ->check(Between(100, 1000000));
  app->add_flag("--json", opts->json, "Print one JSON object on stdout");
  app->callback([opts, action] {
    *action = [opts]() -> int { return RunCompare(*opts); };
  });
}

}  // namespace autotune::cli
