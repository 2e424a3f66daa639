// `autotune report` end to end, checked in a real browser: a database made by real runs
// (`record --np 2` twice, `calibrate`, `simulate`, `search`), the page it writes opened in
// Debian's headless Chromium with the network closed. Every plot must draw marks, the page
// must see no script error, and its statistics must match the database's and `compare`'s.
// The page, the rendered DOM and a screenshot stay in AUTOTUNE_TEST_OUTPUT_DIR/report_browser.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "tests/support/cli.h"

namespace {

namespace fs = std::filesystem;
using autotune::testing::AutotuneBinary;
using autotune::testing::CommandResult;
using autotune::testing::QueryText;
using autotune::testing::ReadFile;
using autotune::testing::RunCommand;

// The page's plots as this database must give them: two measured runs in detail (timeline
// and distribution each); one search (convergence, samples, chosen against default,
// simulated against measured, three knob effects); the comparison (distributions, speedup).
constexpr int kExpectedPlots = 2 * 2 + 7 + 2;

std::string Chromium() {
  for (const char* name : {"chromium", "chromium-browser"}) {
    const std::string path = std::string("/usr/bin/") + name;
    if (fs::exists(path)) return path;
  }
  return "";
}

// Chromium headless with nothing reachable: no sandbox (root in CI), no GPU, every proxied
// request refused.
std::vector<std::string> ChromiumArgv(const std::string& chromium, const fs::path& profile) {
  return {chromium,
          "--headless",
          "--no-sandbox",
          "--disable-gpu",
          "--disable-dev-shm-usage",
          "--disable-background-networking",
          "--proxy-server=http://127.0.0.1:9",
          "--user-data-dir=" + profile.string(),
          "--enable-logging=stderr",
          "--virtual-time-budget=30000"};
}

class ReportBrowserTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(AUTOTUNE_TEST_OUTPUT_DIR) / "report_browser";
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    db_ = (dir_ / "runs.db").string();
  }
  // Runs `autotune args...` in dir_; fails the test on a non-zero exit.
  CommandResult Autotune(std::vector<std::string> args) {
    args.insert(args.begin(), AutotuneBinary());
    args.insert(args.end(), {"--db", db_});
    CommandResult r = RunCommand(args, dir_.string());
    EXPECT_EQ(r.exit_code, 0) << args[1] << ": " << r.err;
    return r;
  }
  void Record(const std::string& threshold_mb) {
    Autotune({"record", "--np", "2", "--workload", "resnet50", "--scale", "0.02", "--steps", "8",
              "--warmup-steps", "1", "--fusion-threshold-mb", threshold_mb});
  }
  double SampleStepMs(const std::string& where) {
    return std::atof(
        QueryText(db_, "SELECT step_ms FROM samples WHERE " + where + " ORDER BY id DESC LIMIT 1")
            .c_str());
  }
  fs::path dir_;
  std::string db_;
};

std::string Attribute(const std::string& tag, const std::string& name) {
  std::smatch m;
  const std::regex re(name + "=\"([^\"]*)\"");
  return std::regex_search(tag, m, re) ? m[1].str() : "";
}

TEST_F(ReportBrowserTest, EveryPlotRendersInChromiumWithoutErrors) {
  const std::string chromium = Chromium();
  if (chromium.empty()) GTEST_SKIP() << "chromium not installed (tools/setup.sh installs it)";
  Record("128");   // run 1: the default threshold
  Record("0.25");  // run 2
  Autotune({"calibrate", "--np", "2", "--repetitions", "3", "--max-bytes", "1048576"});
  Autotune({"simulate", "--run", "1", "--grid"});
  Autotune({"simulate", "--run", "1"});                                   // run 1's knobs
  Autotune({"simulate", "--run", "1", "--fusion-threshold-mb", "0.25"});  // run 2's
  Autotune({"search", "--run", "1", "--sim-budget", "10", "--out", (dir_ / "best.yaml").string()});
  const std::string page = (dir_ / "report.html").string();
  const auto started = std::chrono::steady_clock::now();
  Autotune({"report", "--out", page});
  ASSERT_TRUE(fs::exists(page));
  const std::string html = ReadFile(page);
  EXPECT_EQ(html.find("src=\"http"), std::string::npos) << "the page must load nothing";
  // The chosen setting is the decision `search` stored, shown as stored.
  EXPECT_NE(html.find("Stored decision 1 (search, "), std::string::npos);

  // The statistics printed: `compare`'s verdict, and MAPE and Spearman from the samples.
  const CommandResult compare = Autotune({"compare", "1", "2"});
  std::smatch verdict;
  ASSERT_TRUE(std::regex_search(compare.out, verdict, std::regex("verdict: ([^\n]*)")));
  EXPECT_NE(html.find(verdict[1].str()), std::string::npos) << verdict[1];
  const double m1 = SampleStepMs("fidelity = 'measured' AND run_id = 1");
  const double m2 = SampleStepMs("fidelity = 'measured' AND run_id = 2");
  const double s2 = SampleStepMs("fidelity = 'simulated'");  // the last one: run 2's knobs
  const double s1 = SampleStepMs(
      "fidelity = 'simulated' AND id < (SELECT max(id) FROM samples)");  // run 1's knobs
  char expected[96];
  std::snprintf(expected, sizeof(expected), "MAPE %.1f%%, Spearman %.3f",
                (std::fabs(s1 - m1) / m1 + std::fabs(s2 - m2) / m2) / 2 * 100,
                (m1 - m2) * (s1 - s2) > 0 ? 1.0 : -1.0);
  EXPECT_NE(html.find(expected), std::string::npos) << expected;

  // Rendered in the browser: every plot drew marks, no error anywhere.
  const CommandResult dom = RunCommand(
      [&] {
        auto argv = ChromiumArgv(chromium, dir_ / "profile");
        argv.insert(argv.end(), {"--dump-dom", "file://" + page});
        return argv;
      }(),
      dir_.string());
  ASSERT_EQ(dom.exit_code, 0) << dom.err;
  autotune::testing::WriteFile((dir_ / "rendered.html").string(), dom.out);
  std::smatch summary;
  ASSERT_TRUE(std::regex_search(dom.out, summary, std::regex("<p id=\"render-summary\"[^>]*>")))
      << "the page never finished rendering";
  EXPECT_EQ(Attribute(summary[0], "data-plots"), std::to_string(kExpectedPlots));
  EXPECT_EQ(Attribute(summary[0], "data-rendered"), std::to_string(kExpectedPlots));
  const std::regex plot_tag("<div [^>]*id=\"plot-[0-9]+\"[^>]*>");
  int plots = 0;
  for (auto it = std::sregex_iterator(dom.out.begin(), dom.out.end(), plot_tag);
       it != std::sregex_iterator(); ++it, ++plots) {
    const std::string tag = it->str();
    EXPECT_EQ(Attribute(tag, "data-rendered"), "yes") << tag;
    EXPECT_GT(std::atoi(Attribute(tag, "data-marks").c_str()), 0) << tag;
  }
  EXPECT_EQ(plots, kExpectedPlots);
  std::smatch errors;
  ASSERT_TRUE(
      std::regex_search(dom.out, errors, std::regex("<pre id=\"page-errors\">([^<]*)</pre>")));
  EXPECT_EQ(errors[1].str(), "");
  EXPECT_EQ(dom.err.find("Uncaught"), std::string::npos) << dom.err;

  const fs::path png = dir_ / "report.png";
  auto argv = ChromiumArgv(chromium, dir_ / "profile");
  argv.insert(argv.end(), {"--hide-scrollbars", "--window-size=1400,6000",
                           "--screenshot=" + png.string(), "file://" + page});
  const CommandResult shot = RunCommand(argv, dir_.string());
  ASSERT_EQ(shot.exit_code, 0) << shot.err;
  ASSERT_TRUE(fs::exists(png));
  EXPECT_GT(fs::file_size(png), 50000u) << "a blank page would be far smaller";
  fs::remove_all(dir_ / "profile");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("report: %s (%zu bytes), screenshot %s; report + browser checks %.1f s\n",
              page.c_str(), html.size(), png.c_str(), seconds);
}

}  // namespace
