// `autotune compare A B`: two runs side by side, with a bootstrap confidence interval on
// the speedup and a plain verdict.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "tools/command.h"
#include "traces/stats.h"
#include "traces/store.h"

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

}  // namespace

void AddCompareCommand(CLI::App& root, Action* action) {
  struct Options {
    std::string db = "autotune.db";
    int64_t a = 0, b = 0;
    bool json = false;
    double confidence = 0.95;
    int resamples = 2000;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* app = root.add_subcommand(
      "compare", "Put runs A and B side by side: knob differences, score and step time with "
                 "spread, speedup of B over A with a bootstrap confidence interval, verdict");
  app->add_option("A", opts->a, "Run id of the baseline")->required();
  app->add_option("B", opts->b, "Run id to compare with the baseline")->required();
  app->add_option("--db", opts->db, "SQLite database file. Default ./autotune.db");
  app->add_option("--confidence", opts->confidence,
                  "Confidence level of the speedup interval, in (0, 1). Default 0.95")
      ->check(CLI::Range(0.5, 0.999));
  app->add_option("--resamples", opts->resamples,
                  "Bootstrap resamples over steps. Default 2000")
      ->check(CLI::Range(100, 1000000));
  app->add_flag("--json", opts->json, "Print one JSON object on stdout");
  app->callback([opts, action] {
    *action = [opts]() -> int {
      std::unique_ptr<Store> store;
      Status s = Store::Open(opts->db, Store::Mode::kReadOnly, &store);
      if (!s.ok()) return Fail(s);
      Side a, b;
      if (!(s = LoadSide(*store, opts->a, &a)).ok()) return Fail(s);
      if (!(s = LoadSide(*store, opts->b, &b)).ok()) return Fail(s);
      // speedup > 1: B's steps are shorter than A's.
      RatioInterval speedup =
          BootstrapMedianRatio(a.step_ms, b.step_ms, opts->confidence, opts->resamples);
      std::string verdict = Verdict(speedup, opts->confidence);
      nlohmann::json knob_diff = nlohmann::json::object();
      for (const std::string& name : KnobNames()) {
        std::string va = KnobValue(a.run.knobs, name), vb = KnobValue(b.run.knobs, name);
        if (va != vb) knob_diff[name] = {va, vb};
      }
      std::vector<std::string> warnings;
      if (a.run.workload.name != b.run.workload.name) warnings.push_back("different workloads");
      if (!a.run.topology.SameShape(b.run.topology)) warnings.push_back("different topologies");
      if (a.run.scale != b.run.scale) warnings.push_back("different --scale");
      if (!a.run.complete || !b.run.complete) warnings.push_back("an incomplete run");

      if (opts->json) {
        nlohmann::json out = {
            {"a", RunToJson(a.run)},
            {"b", RunToJson(b.run)},
            {"knob_differences", knob_diff},
            {"step_ms_median", {Median(a.step_ms), Median(b.step_ms)}},
            {"step_ms_iqr", {Iqr(a.step_ms), Iqr(b.step_ms)}},
            {"score_bytes_per_s_median", {Median(a.score), Median(b.score)}},
            {"speedup", speedup.ratio},
            {"speedup_ci", {speedup.low, speedup.high}},
            {"confidence", opts->confidence},
            {"significant", speedup.low > 1.0 || speedup.high < 1.0},
            {"verdict", verdict},
            {"warnings", warnings}};
        std::cout << out.dump() << "\n";
        return 0;
      }
      std::printf("%-24s %-28s %-28s\n", "", ("A = run " + std::to_string(a.run.id)).c_str(),
                  ("B = run " + std::to_string(b.run.id)).c_str());
      std::printf("%-24s %-28s %-28s\n", "kind / workload",
                  (RunKindName(a.run.kind) + (" " + a.run.workload.name)).c_str(),
                  (RunKindName(b.run.kind) + (" " + b.run.workload.name)).c_str());
      std::printf("%-24s %-28s %-28s\n", "topology", a.run.topology.key().c_str(),
                  b.run.topology.key().c_str());
      for (const auto& [name, values] : knob_diff.items()) {
        std::printf("%-24s %-28s %-28s\n", name.c_str(), values[0].get<std::string>().c_str(),
                    values[1].get<std::string>().c_str());
      }
      if (knob_diff.empty()) std::printf("%-24s %s\n", "knobs", "identical");
      std::printf("%-24s %-28s %-28s\n", "steps", std::to_string(a.step_ms.size()).c_str(),
                  std::to_string(b.step_ms.size()).c_str());
      char ca[64], cb[64];
      std::snprintf(ca, sizeof ca, "%.3f (IQR %.3f)", Median(a.step_ms), Iqr(a.step_ms));
      std::snprintf(cb, sizeof cb, "%.3f (IQR %.3f)", Median(b.step_ms), Iqr(b.step_ms));
      std::printf("%-24s %-28s %-28s\n", "step ms median", ca, cb);
      std::snprintf(ca, sizeof ca, "%.4f", Median(a.score) / 1e9);
      std::snprintf(cb, sizeof cb, "%.4f", Median(b.score) / 1e9);
      std::printf("%-24s %-28s %-28s\n", "score GB/s median", ca, cb);
      std::printf("speedup of B over A: %.3fx  [%.3f, %.3f] (%g%% bootstrap CI, %d resamples)\n",
                  speedup.ratio, speedup.low, speedup.high, opts->confidence * 100,
                  opts->resamples);
      std::printf("verdict: %s\n", verdict.c_str());
      for (const std::string& w : warnings) std::printf("warning: comparing %s\n", w.c_str());
      return 0;
    };
  });
}

}  // namespace autotune::cli
