// `autotune report`: one self-contained HTML page of a database (runs, step timelines, the
// searches, simulated against measured, knob effects, a comparison), plotted with Vega-Lite.
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "store/store.h"
#include "tools/command.h"
#include "tools/help_defaults.h"
#include "tools/report/data.h"

namespace autotune::cli {
namespace {

struct ReportOptions {
  std::string db = "autotune.db";
  std::vector<int64_t> runs;
  std::vector<int64_t> compare;
  std::string out = "report.html";
};

int RunReport(const ReportOptions& opts) {
  std::unique_ptr<Store> store;
  Status s = Store::Open(opts.db, Store::Mode::kReadOnly, &store);
  if (!s.ok()) return Fail(s);
  ReportRequest request;
  request.runs = opts.runs;
  if (opts.compare.size() == 2) request.compare = std::make_pair(opts.compare[0], opts.compare[1]);
  ReportPage page;
  s = BuildReportPage(*store, opts.db, request, &page);
  if (!s.ok()) return Fail(s);
  for (const std::string& bad : page.unreadable_runs) Warn(bad + " (run left out of the report)");
  const std::string html = RenderReportHtml(page);
  s = WriteOutputFile(opts.out, html);
  if (!s.ok()) return Fail(s);
  std::cout << "report: " << opts.out << " (" << ViewCount(page) << " plots, " << html.size()
            << " bytes)\n";
  return 0;
}

}  // namespace

void AddReportCommand(CLI::App& root, Action* action) {
  auto opts = std::make_shared<ReportOptions>();
  CLI::App* app =
      root.add_subcommand("report",
                          "Write one self-contained HTML page of a database: runs, step timelines, "
                          "searches, simulated against measured, knob effects, a comparison");
  app->footer(
      "The page opens offline (the plotting scripts are inlined). Without --run, the newest 3\n"
      "measured or imported runs get a step timeline and step-time distribution; without\n"
      "--compare, the oldest and newest complete runs of the newest run's workload, topology,\n"
      "scale and backend are compared. The database is only read.");
  PrintDefaultsInDescriptions(app);
  app->add_option("--db", opts->db, "SQLite database file.")->capture_default_str();
  app->add_option("--run", opts->runs, "Run to show in detail (repeatable)");
  app->add_option("--compare", opts->compare, "Two run ids A B to compare (as `compare A B`)")
      ->expected(2);
  app->add_option("--out", opts->out, "HTML file to write.")->capture_default_str();
  app->callback([opts, action] { *action = [opts]() -> int { return RunReport(*opts); }; });
}

}  // namespace autotune::cli
