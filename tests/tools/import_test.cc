// `autotune import` end to end on the real Horovod timelines (tests/fixtures/horovod): the
// JSON summary, the stored imported run and its measured sample, a malformed or unreadable
// file leaving no database (or an existing one byte for byte), and the imported run used by
// runs, simulate, search and compare as a recorded one would be.
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "store/store.h"
#include "tests/support/cli.h"
#include "tests/support/sim_fixtures.h"
#include "tests/support/synthetic.h"

namespace autotune::testing {
namespace {

std::string Fixture(const std::string& file) {
  return std::string(AUTOTUNE_FIXTURES_DIR) + "/horovod/" + file;
}

std::string ImportArgs(const std::string& db, const std::string& file) {
  return "import --db '" + db + "' --horovod-timeline '" + file +
         "' --nodes 2 --ranks-per-node 2 --json";
}

// A calibration of 2x2 off a parametric network of about the emulated cluster's link.
void AddCalibration(const std::string& db) {
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(db, Store::Mode::kReadWrite, &store).ok());
  Calibration cal = sim::SynthesizeCalibration(sim::NetworkModel::FromParams(
      sim::NetworkParams::Uniform(40, 115), sim::testing::Topo(2, 2)));
  ASSERT_TRUE(store->SaveCalibration(&cal).ok());
}

TEST(ImportTest, JsonSummaryAndTheStoredRun) {
  TempDir dir;
  const std::string db = dir.File("runs.db");
  const CommandResult r = RunAutotune(ImportArgs(db, Fixture("resnet50_default.json")) +
                                      " --fusion-threshold-mb 128 --cycle-time-ms 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["run"], 1);
  EXPECT_EQ(j["kind"], "imported");
  EXPECT_EQ(j["workload"], "resnet50_default");
  EXPECT_EQ(j["topology"], "2x2");
  EXPECT_EQ(j["backend"], "mpi");
  EXPECT_EQ(j["tensors"], 161);                    // torchvision resnet50's parameters
  EXPECT_EQ(j["bytes_per_step"], 25557032LL * 4);  // float32
  EXPECT_EQ(j["steps"], 9);                        // 10 in the file, 1 warm-up
  EXPECT_EQ(j["truncated"], false);
  EXPECT_GT(j["step_ms_median"].get<double>(), 1000.0);
  EXPECT_GT(j["collectives_per_step"].get<int>(), 0);
  EXPECT_EQ(QueryText(db, "SELECT kind FROM runs WHERE id = 1"), "imported");
  EXPECT_EQ(QueryText(db, "SELECT hardware FROM runs WHERE id = 1"),
            "horovod timeline " + Fixture("resnet50_default.json"));
  EXPECT_NE(QueryText(db, "SELECT command FROM runs WHERE id = 1").find("import --db"),
            std::string::npos);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM steps WHERE run_id = 1"), 9);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM tensor_events WHERE run_id = 1"), 9 * 161 * 4);
  EXPECT_EQ(QueryInt(db,
                     "SELECT count(*) FROM samples WHERE run_id = 1 AND fidelity = "
                     "'measured'"),
            1);
  const CommandResult runs = RunAutotune("runs --json --db '" + db + "'");
  ASSERT_EQ(runs.exit_code, 0) << runs.err;
  EXPECT_EQ(nlohmann::json::parse(runs.out)[0]["kind"], "imported");
}

TEST(ImportTest, HumanSummaryAndACutOffFile) {
  TempDir dir;
  const std::string db = dir.File("runs.db");
  const std::string text = ReadFile(Fixture("mlp_default.json"));
  const std::string cut = dir.File("cut.json", text.substr(0, text.size() / 2));
  const CommandResult r = RunAutotune("import --db '" + db + "' --horovod-timeline '" + cut +
                                      "' --nodes 2 --ranks-per-node 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("imported " + cut + " as run 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cut off"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("404 tensors"), std::string::npos) << r.out;
}

TEST(ImportTest, MalformedFileChangesNothing) {
  TempDir dir;
  std::string text = ReadFile(Fixture("resnet50_f4_c10.json"));
  // One event's timestamp in the middle of the file quoted: "ts": "123".
  const size_t ts = text.find("\"ts\": ", text.size() / 2);
  ASSERT_NE(ts, std::string::npos);
  text.insert(text.find(',', ts), "\"");
  text.insert(ts + 6, "\"");
  const std::string bad = dir.File("bad.json", text);
  const std::string fresh = dir.path() + "/fresh.db";
  CommandResult r = RunAutotune(ImportArgs(fresh, bad));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(LineCount(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(bad + ": event "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("\"ts\" is not a number"), std::string::npos) << r.err;
  EXPECT_TRUE(ReadFile(fresh).empty()) << "a database was created";
  EXPECT_NE(access(fresh.c_str(), F_OK), 0);
  // An existing database stays byte for byte.
  const std::string db = dir.File("runs.db");
  ASSERT_EQ(RunAutotune(ImportArgs(db, Fixture("resnet50_default.json"))).exit_code, 0);
  const std::string before = ReadFile(db);
  r = RunAutotune(ImportArgs(db, bad));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(ReadFile(db), before);
  r = RunAutotune(ImportArgs(db, dir.path() + "/missing.json"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("cannot read timeline " + dir.path() + "/missing.json: No such file"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(ReadFile(db), before);
}

TEST(ImportTest, SimulateSearchAndCompareUseImportedRuns) {
  TempDir dir;
  const std::string db = dir.File("runs.db");
  for (const char* file : {"resnet50_default.json", "resnet50_f4_c10.json"}) {
    const std::string knobs = std::string(file) == "resnet50_default.json"
                                  ? ""
                                  : " --fusion-threshold-mb 4 --cycle-time-ms 10";
    const CommandResult r =
        RunAutotune(ImportArgs(db, Fixture(file)) + " --workload resnet50-real" + knobs);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  AddCalibration(db);
  CommandResult r = RunAutotune("simulate --db '" + db + "' --run 1 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  const double predicted = j["step_ms_median"].get<double>();
  const double recorded = j["recorded_step_ms_median"].get<double>();
  EXPECT_GT(predicted, 0.25 * recorded);  // a sanity bound: accuracy is bench/horovod's
  EXPECT_LT(predicted, 4.0 * recorded);
  // search blends both imported runs' measured samples (same workload, topology, scale).
  r = RunAutotune("search --db '" + db + "' --run 1 --sim-budget 10 --propose 1 --json --out '" +
                  dir.path() + "/best.yaml'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["measured_samples"], 2);
  r = RunAutotune("compare --db '" + db + "' 1 2 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

}  // namespace
}  // namespace autotune::testing
