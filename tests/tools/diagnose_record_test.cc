// `autotune diagnose` on a run really recorded by 4 local ranks (--np 4): on every step the
// parts add up to the step time stored in the database, and the headline figures are the
// median step's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/cli.h"

namespace {

using autotune::testing::AutotuneBinary;
using autotune::testing::CommandResult;
using autotune::testing::QueryText;
using autotune::testing::RunCommand;
using autotune::testing::TempDir;

double Sum(const nlohmann::json& j) {
  return j["compute_ms"].get<double>() + j["negotiation_ms"].get<double>() +
         j["cycle_wait_ms"].get<double>() + j["copy_ms"].get<double>() +
         j["collective_ms"].get<double>();
}

TEST(DiagnoseRecordedRunTest, PartsAddUpOnEveryStep) {
  TempDir temp;
  const std::string db = temp.File("runs.db");
  CommandResult r = RunCommand(
      {AutotuneBinary(), "record", "--np", "4", "--workload", "resnet50", "--scale", "0.02",
       "--steps", "5", "--warmup-steps", "1", "--fusion-threshold-mb", "1", "--db", db},
      temp.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = RunCommand({AutotuneBinary(), "diagnose", "--json", "--run", "1", "--db", db}, temp.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["run"], 1);
  EXPECT_EQ(j["kind"], "measured");
  EXPECT_EQ(j["topology"], "1x4");
  ASSERT_EQ(j["per_step"].size(), 5u);
  std::vector<double> step_ms;
  for (const nlohmann::json& s : j["per_step"]) {
    const double step = s["step_ms"].get<double>();
    const std::string stored =
        QueryText(db, "SELECT step_ms FROM steps WHERE run_id = 1 AND step = " + s["step"].dump());
    ASSERT_FALSE(stored.empty()) << "step " << s["step"];
    EXPECT_NEAR(step, std::stod(stored), 1e-9 * step);
    EXPECT_NEAR(Sum(s), step, 1e-6 * step) << s.dump();
    EXPECT_NEAR(s["compute_ms"].get<double>() + s["exposed_comm_ms"].get<double>(), step,
                1e-6 * step);
    for (const char* part : {"compute_ms", "rank_skew_ms", "negotiation_ms", "cycle_wait_ms",
                             "copy_ms", "collective_ms", "total_comm_ms", "hidden_comm_ms"}) {
      EXPECT_GE(s[part].get<double>(), 0.0) << part;
    }
    EXPECT_LE(s["rank_skew_ms"].get<double>(), s["compute_ms"].get<double>());
    // Collectives ran (every tensor is reduced), so there was communication to account for.
    EXPECT_GT(s["total_comm_ms"].get<double>(), 0.0);
    step_ms.push_back(step);
  }
  // The headline is the median step (5 steps: the third shortest).
  std::sort(step_ms.begin(), step_ms.end());
  EXPECT_NEAR(j["step_ms"].get<double>(), step_ms[2], 1e-9 * step_ms[2]);
  EXPECT_NEAR(Sum(j), j["step_ms"].get<double>(), 1e-6 * step_ms[2]);
  // The bound is the median of the steps' own shares of exposed communication and of compute
  // slowed by the communication's CPU (5 steps: the third smallest). The run spun its compute
  // on 4 ranks of this host, so the host's cores are stored and the latter is counted.
  std::vector<double> shares;
  for (const nlohmann::json& s : j["per_step"]) {
    EXPECT_GE(s["comm_cpu_ms"].get<double>(), 0.0);
    EXPECT_LE(s["comm_cpu_ms"].get<double>(), s["compute_ms"].get<double>());
    shares.push_back((s["exposed_comm_ms"].get<double>() + s["comm_cpu_ms"].get<double>()) /
                     s["step_ms"].get<double>());
  }
  std::sort(shares.begin(), shares.end());
  ASSERT_EQ(shares.size(), 5u);
  const double gain = j["max_gain_fraction"].get<double>();
  EXPECT_NEAR(gain, shares[2], 1e-9);
  EXPECT_EQ(j["verdict_kind"], gain < 0.05 ? "keep_defaults" : "tune");
}

}  // namespace
