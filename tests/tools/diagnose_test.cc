// `autotune diagnose` on a database written through the store: a hand-made run whose parts
// are known by construction (table and JSON), and bad input (one line, non-zero exit).
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "store/store.h"
#include "tests/support/cli.h"
#include "tests/support/sim_fixtures.h"

namespace autotune::testing {
namespace {

constexpr double kMs = 1000.0;  // microseconds per millisecond

// One rank, one tensor ready at 100 ms (backward 10..100 ms); nothing runs 100..103, the
// cycle negotiates 103..108, the collective copies in 108..110, reduces 110..136 and copies
// out 136..138; the step ends at 145 ms. Parts: compute 107, cycle wait 3, negotiation 5,
// copies 4, collectives 26.
int64_t AddHandMadeRun(Store& store, int host_cores = 0) {
  RunInfo run;
  run.host.cores = host_cores;
  run.workload = sim::testing::MakeWorkload({4096}, {90.0}, 10.0, 90.0, 7.0);
  run.topology = sim::testing::Topo(1, 1);
  run.steps_planned = 1;
  EXPECT_TRUE(store.CreateRun(&run).ok());
  StepTrace st;
  st.step_ms = 145.0;
  st.backward_start_us = 10 * kMs;
  st.bytes = 4096;
  st.tensors = {{0, 0, 100 * kMs, 138 * kMs}};
  CycleRecord cycle;
  cycle.start_us = 103 * kMs;
  cycle.negotiate_end_us = 108 * kMs;
  cycle.submitted = cycle.responses = cycle.collectives = 1;
  st.cycles = {cycle};
  CollectiveRecord c;
  c.bytes = 4096;
  c.tensors = {0};
  c.start_us = 108 * kMs;
  c.copy_in_end_us = 110 * kMs;
  c.comm_end_us = 136 * kMs;
  c.end_us = 138 * kMs;
  st.collectives = {c};
  EXPECT_TRUE(store.AppendStep(run.id, st).ok());
  EXPECT_TRUE(store.FinishRun(run.id, true).ok());
  return run.id;
}

class DiagnoseCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = dir_.File("d.db");
    std::unique_ptr<Store> store;
    ASSERT_TRUE(Store::Open(db_, Store::Mode::kReadWrite, &store).ok());
    run_ = AddHandMadeRun(*store);
  }

  void ExpectOneLineFailure(const std::string& args, const std::string& needle) {
    const CommandResult r = RunAutotune("diagnose " + args);
    EXPECT_NE(r.exit_code, 0) << r.out << r.err;
    EXPECT_EQ(LineCount(r.err), 1) << "stderr was:\n" << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << "stderr was:\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }

  TempDir dir_;
  std::string db_;
  int64_t run_ = 0;
};

TEST_F(DiagnoseCliTest, JsonHasTheConstructedParts) {
  const CommandResult r =
      RunAutotune("diagnose --json --db " + db_ + " --run " + std::to_string(run_));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["run"], run_);
  EXPECT_EQ(j["kind"], "measured");
  EXPECT_EQ(j["steps"], 1);
  EXPECT_NEAR(j["step_ms"].get<double>(), 145.0, 1e-9);
  EXPECT_NEAR(j["compute_ms"].get<double>(), 107.0, 1e-9);
  EXPECT_NEAR(j["rank_skew_ms"].get<double>(), 0.0, 1e-9);
  EXPECT_NEAR(j["exposed_comm_ms"].get<double>(), 38.0, 1e-9);
  EXPECT_NEAR(j["negotiation_ms"].get<double>(), 5.0, 1e-9);
  EXPECT_NEAR(j["cycle_wait_ms"].get<double>(), 3.0, 1e-9);
  EXPECT_NEAR(j["copy_ms"].get<double>(), 4.0, 1e-9);
  EXPECT_NEAR(j["collective_ms"].get<double>(), 26.0, 1e-9);
  EXPECT_NEAR(j["total_comm_ms"].get<double>(), 35.0, 1e-9);
  EXPECT_NEAR(j["hidden_comm_ms"].get<double>(), 0.0, 1e-9);
  EXPECT_NEAR(j["max_gain_fraction"].get<double>(), 38.0 / 145.0, 1e-12);
  // One step: its share is both quartiles and both halves; too few steps to test a trend.
  for (const char* key : {"max_gain_quartiles", "max_gain_halves"}) {
    ASSERT_EQ(j[key].size(), 2u) << key;
    EXPECT_NEAR(j[key][0].get<double>(), 38.0 / 145.0, 1e-12) << key;
    EXPECT_NEAR(j[key][1].get<double>(), 38.0 / 145.0, 1e-12) << key;
  }
  EXPECT_EQ(j["max_gain_trend_z"].get<double>(), 0.0);
  EXPECT_EQ(j["drifting"], false);
  EXPECT_EQ(j["verdict_kind"], "tune");
  EXPECT_NE(j["verdict"].get<std::string>().find("run autotune search"), std::string::npos);
  ASSERT_EQ(j["per_step"].size(), 1u);
  EXPECT_NEAR(j["per_step"][0]["collective_ms"].get<double>(), 26.0, 1e-9);
  // The replay's fitted communication scales: null here, a measured run with no calibration
  // (no simulation of it); DiagnoseFixturesTest.CommunicationScalesAreTheSimulations has them.
  EXPECT_TRUE(j["comm_contention"].is_null()) << j["comm_contention"];
  EXPECT_TRUE(j["comm_scale"].is_null()) << j["comm_scale"];
}

// A run that cannot be simulated (no calibration) but whose host is known: the line names the
// host the diagnosis counted (1 rank on 2 cores), not "not modelled".
TEST_F(DiagnoseCliTest, WithoutASimulationTheLineNamesTheHostCounted) {
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(db_, Store::Mode::kReadWrite, &store).ok());
  const int64_t run = AddHandMadeRun(*store, 2);
  store.reset();
  const CommandResult r =
      RunAutotune("diagnose --json --db " + db_ + " --run " + std::to_string(run));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string cpu = nlohmann::json::parse(r.out)["cpu_share"].get<std::string>();
  EXPECT_NE(cpu.find("1 ranks share 2 cores"), std::string::npos) << cpu;
}

TEST_F(DiagnoseCliTest, TableShowsPartsAndVerdict) {
  const CommandResult r = RunAutotune("diagnose --db " + db_ + " --run " + std::to_string(run_));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* row :
       {"compute             107.000   73.8%", "negotiation           5.000    3.4%",
        "cycle wait            3.000    2.1%", "fusion copies         4.000    2.8%",
        "collectives          26.000   17.9%", "step                145.000  100.0%",
        "most any setting could gain: 26.2%",
        "verdict: exposed communication is 26.2% of the step"}) {
    EXPECT_NE(r.out.find(row), std::string::npos) << row << "\nin:\n" << r.out;
  }
}

TEST_F(DiagnoseCliTest, BadInputGivesOneLine) {
  ExpectOneLineFailure("--db " + db_ + " --run 99", "run 99 not found");
  ExpectOneLineFailure("--db " + dir_.File("none.db") + " --run 1", "no such database");
  const std::string not_a_db = dir_.File("text.db", "this is not SQLite\n");
  ExpectOneLineFailure("--db " + not_a_db + " --run 1", not_a_db);
  {
    std::unique_ptr<Store> store;
    ASSERT_TRUE(Store::Open(db_, Store::Mode::kReadWrite, &store).ok());
    RunInfo empty;
    empty.workload = sim::testing::MakeWorkload({4096}, {1.0}, 1.0, 1.0, 1.0);
    ASSERT_TRUE(store->CreateRun(&empty).ok());
    ASSERT_TRUE(store->FinishRun(empty.id, false).ok());
    ExpectOneLineFailure("--db " + db_ + " --run " + std::to_string(empty.id),
                         "run " + std::to_string(empty.id) + " has no recorded steps");
  }
}

// The real Horovod timelines (shared fixtures) imported with 1 to 5 warm-up steps: the verdict
// does not depend on how many leading steps are left out; the bound's spread and drift are the
// steps' own. The MLP's is "tune": on that real
// job a setting other than the default was measured 1.30x faster (3 alternating runs each,
// shared/fixtures/horovod and bench/horovod).
TEST(DiagnoseFixturesTest, TheVerdictDoesNotDependOnTheWarmUp) {
  for (const char* fixture : {"mlp_default", "resnet50_default", "resnet50_f4_c10"}) {
    std::set<std::string> verdicts;
    std::vector<double> bounds;
    for (int warmup = 1; warmup <= 5; ++warmup) {
      TempDir dir;
      const std::string db = dir.File("f.db");
      const CommandResult imported = RunAutotune(
          "import --db '" + db + "' --horovod-timeline '" + AUTOTUNE_FIXTURES_DIR +
          "/horovod/" + fixture + ".json' --nodes 2 --ranks-per-node 2 --warmup-steps " +
          std::to_string(warmup));
      ASSERT_EQ(imported.exit_code, 0) << fixture << " " << imported.err;
      const CommandResult r = RunAutotune("diagnose --json --run 1 --db '" + db + "'");
      ASSERT_EQ(r.exit_code, 0) << fixture << " " << r.err;
      const nlohmann::json d = nlohmann::json::parse(r.out);
      verdicts.insert(d["verdict_kind"].get<std::string>());
      // The spread, from the steps' own parts: each step's share 1 - ideal / step, in order.
      std::vector<double> shares;
      for (const nlohmann::json& s : d["per_step"]) {
        shares.push_back(1.0 - s["ideal_step_ms"].get<double>() / s["step_ms"].get<double>());
      }
      const size_t n = shares.size(), half = n / 2;
      std::vector<double> first(shares.begin(), shares.begin() + half);
      std::vector<double> second(shares.end() - half, shares.end());
      auto median = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
      };
      std::vector<double> sorted = shares;
      std::sort(sorted.begin(), sorted.end());
      const std::string at = std::string(fixture) + " --warmup-steps " + std::to_string(warmup);
      // The bound: the median over the later half of the steps recorded, the warm-up counted
      // in (every kept step's with fewer than 6 kept).
      const size_t window = n >= 6 ? std::min(n, (n + static_cast<size_t>(warmup)) / 2) : n;
      EXPECT_NEAR(d["max_gain_fraction"].get<double>(),
                  median(std::vector<double>(shares.end() - static_cast<long>(window),
                                             shares.end())),
                  1e-12)
          << at;
      EXPECT_EQ(d["max_gain_steps"].get<size_t>(), window) << at;
      bounds.push_back(d["max_gain_fraction"].get<double>());
      // Nearest rank: the ceil(n/4)-th and ceil(3n/4)-th smallest.
      EXPECT_NEAR(d["max_gain_quartiles"][0].get<double>(), sorted[(n + 3) / 4 - 1], 1e-12) << at;
      EXPECT_NEAR(d["max_gain_quartiles"][1].get<double>(), sorted[(3 * n + 3) / 4 - 1], 1e-12)
          << at;
      if (n >= 6) {
        EXPECT_NEAR(d["max_gain_halves"][0].get<double>(), median(first), 1e-12) << at;
        EXPECT_NEAR(d["max_gain_halves"][1].get<double>(), median(second), 1e-12) << at;
      }
      // The MLP's timeline drifts: with one warm-up step, each of its first six steps exposes a
      // smaller share than any of its last six.
      if (std::string(fixture) == "mlp_default" && warmup == 1) {
        ASSERT_EQ(n, 12u);
        EXPECT_LT(*std::max_element(first.begin(), first.end()),
                  *std::min_element(second.begin(), second.end()));
        EXPECT_EQ(d["drifting"], true) << r.out;
        EXPECT_NE(d["verdict"].get<std::string>().find("the steps drift"), std::string::npos);
      }
    }
    EXPECT_EQ(verdicts.size(), 1u) << fixture;
    // Issue 21's target: the bound within 3 points over the five warm-up counts.
    EXPECT_LE(*std::max_element(bounds.begin(), bounds.end()) -
                  *std::min_element(bounds.begin(), bounds.end()),
              0.03)
        << fixture;
    if (std::string(fixture) == "mlp_default") {
      EXPECT_EQ(*verdicts.begin(), "tune");
    }
  }
}

// diagnose reports the replay's communication scales as the simulation of the run fits them:
// on a real timeline imported with no calibrate (the job's own collectives), the same numbers
// `simulate --json` gives, within trace_calibration.h's bounds.
TEST(DiagnoseFixturesTest, CommunicationScalesAreTheSimulations) {
  TempDir dir;
  const std::string db = dir.File("f.db");
  const CommandResult imported =
      RunAutotune("import --db '" + db + "' --horovod-timeline '" + AUTOTUNE_FIXTURES_DIR +
                  "/horovod/mlp_default.json' --nodes 2 --ranks-per-node 2");
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  const CommandResult d = RunAutotune("diagnose --json --run 1 --db '" + db + "'");
  ASSERT_EQ(d.exit_code, 0) << d.err;
  const CommandResult s = RunAutotune("simulate --json --run 1 --db '" + db + "'");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  const nlohmann::json dj = nlohmann::json::parse(d.out);
  const nlohmann::json sj = nlohmann::json::parse(s.out);
  ASSERT_TRUE(dj["comm_contention"].is_number()) << d.out;
  EXPECT_EQ(dj["comm_contention"].get<double>(), sj["comm_contention"].get<double>());
  EXPECT_EQ(dj["comm_scale"].get<double>(), sj["comm_scale"].get<double>());
  EXPECT_GE(dj["comm_contention"].get<double>(), 1.0);
  EXPECT_LE(dj["comm_contention"].get<double>(), 4.0);
  EXPECT_GE(dj["comm_scale"].get<double>(), 0.5);
  EXPECT_LE(dj["comm_scale"].get<double>(), 2.0);
}

// A simulated run on another topology is diagnosed with the compute slowdown its simulation
// modelled, and stores that host: the MLP's 2x2 timeline imported as run on one host of 2
// cores holding both nodes (an emulated cluster), predicted on 4 nodes x 2 ranks, is 8 ranks
// on those 2 cores (a host that held every recorded node holds every predicted one).
TEST(DiagnoseFixturesTest, ASimulatedRunIsDiagnosedWithTheHostItsSimulationModelled) {
  TempDir dir;
  const std::string db = dir.File("f.db");
  const CommandResult imported = RunAutotune(
      "import --db '" + db + "' --horovod-timeline '" + AUTOTUNE_FIXTURES_DIR +
      "/horovod/mlp_default.json' --nodes 2 --ranks-per-node 2 --host-cores 2 --nodes-per-host 2");
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  const CommandResult s =
      RunAutotune("simulate --json --run 1 --nodes 4 --ranks-per-node 2 --db '" + db + "'");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  const int64_t simulated = nlohmann::json::parse(s.out)["run"].get<int64_t>();
  const CommandResult d =
      RunAutotune("diagnose --json --run " + std::to_string(simulated) + " --db '" + db + "'");
  ASSERT_EQ(d.exit_code, 0) << d.err;
  const std::string cpu = nlohmann::json::parse(d.out)["cpu_share"].get<std::string>();
  EXPECT_NE(cpu.find("8 ranks share 2 cores"), std::string::npos) << cpu;
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(db, Store::Mode::kReadOnly, &store).ok());
  RunInfo run;
  ASSERT_TRUE(store->GetRun(simulated, &run).ok());
  EXPECT_EQ(run.kind, RunKind::kSimulated);
  EXPECT_EQ(run.host.cores, 2);
  EXPECT_EQ(run.host.nodes_per_host, 4);
}

}  // namespace
}  // namespace autotune::testing
