// `autotune simulate` end to end on a real store (a temporary SQLite file): bad input gives
// one line, a non-zero exit and an unchanged database; good input stores simulated samples
// and a simulated run that `autotune compare` reads.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <nlohmann/json.hpp>

#include "store/store.h"
#include "tests/support/cli.h"
#include "tests/support/sim_fixtures.h"
#include "tests/support/synthetic.h"

namespace autotune::testing {
namespace {

using sim::testing::Topo;

class SimulateCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = dir_.File("runs.db");
    ASSERT_TRUE(Store::Open(db_, Store::Mode::kReadWrite, &store_).ok());
  }

  // Stores a synthetic measured run of scaled resnet50 on topo; returns its id.
  int64_t AddRun(const Topology& topo) {
    Workload w;
    EXPECT_TRUE(BuiltinWorkload("resnet50", &w).ok());
    EXPECT_TRUE(ScaleWorkload(0.02, &w).ok());
    const sim::NetworkModel net =
        sim::NetworkModel::FromParams(sim::NetworkParams::Uniform(40, 115), topo);
    Trace trace;
    sim::SyntheticTraceOptions so;
    so.steps = 3;
    EXPECT_TRUE(
        sim::SynthesizeTrace(w, Knobs(), net, sim::NegotiationModel::Prior(net, 161), so, &trace)
            .ok());
    RunInfo run = trace.run;
    run.steps_planned = 3;
    EXPECT_TRUE(store_->CreateRun(&run).ok());
    for (const StepTrace& s : trace.steps) EXPECT_TRUE(store_->AppendStep(run.id, s).ok());
    EXPECT_TRUE(store_->FinishRun(run.id, true).ok());
    return run.id;
  }

  void AddCalibration(const Topology& topo) {
    Calibration cal = sim::SynthesizeCalibration(
        sim::NetworkModel::FromParams(sim::NetworkParams::Uniform(40, 115), topo));
    ASSERT_TRUE(store_->SaveCalibration(&cal).ok());
  }

  void Exec(const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(db_.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sql;
    sqlite3_close(db);
  }

  // Closes our handle and remembers the database bytes.
  void Freeze() {
    store_.reset();
    before_ = ReadFile(db_);
  }

  void ExpectOneLineFailure(const std::string& args, const std::string& needle) {
    const CommandResult r = RunAutotune("simulate --db " + db_ + " " + args);
    EXPECT_NE(r.exit_code, 0) << r.out << r.err;
    EXPECT_EQ(LineCount(r.err), 1) << "stderr was:\n" << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << "stderr was:\n" << r.err;
    EXPECT_EQ(ReadFile(db_), before_) << "the database changed";
  }

  TempDir dir_;
  std::string db_;
  std::string before_;
  std::unique_ptr<Store> store_;
};

TEST_F(SimulateCliTest, NoCalibrationSaysHowToMakeOne) {
  const int64_t run = AddRun(Topo(1, 2));
  Freeze();
  ExpectOneLineFailure("--run " + std::to_string(run), "no calibration for topology 1x2");
  ExpectOneLineFailure("--run " + std::to_string(run), "autotune calibrate --np 2 --db " + db_);
}

TEST_F(SimulateCliTest, UnknownRunAndRunWithoutTrace) {
  AddCalibration(Topo(1, 2));
  RunInfo empty;
  ASSERT_TRUE(BuiltinWorkload("vgg16", &empty.workload).ok());
  empty.topology = Topo(1, 2);
  ASSERT_TRUE(store_->CreateRun(&empty).ok());
  ASSERT_TRUE(store_->FinishRun(empty.id, false).ok());
  Freeze();
  ExpectOneLineFailure("--run 99", "run 99 not found");
  ExpectOneLineFailure("--run " + std::to_string(empty.id),
                       "run " + std::to_string(empty.id) + " has no recorded steps");
}

TEST_F(SimulateCliTest, CorruptRows) {
  AddCalibration(Topo(1, 2));
  const int64_t a = AddRun(Topo(1, 2));
  const int64_t b = AddRun(Topo(1, 2));
  Freeze();
  // An event for a tensor the workload does not have: the store rejects the row.
  Exec("UPDATE tensor_events SET tensor = 999 WHERE run_id = " + std::to_string(a) +
       " AND step = 1 AND rank = 1 AND tensor = 5");
  // Every rank's event of one tensor gone: the simulator names the tensor.
  Exec("DELETE FROM tensor_events WHERE run_id = " + std::to_string(b) +
       " AND step = 2 AND tensor = 7");
  before_ = ReadFile(db_);
  ExpectOneLineFailure("--run " + std::to_string(a), "tensor_events");
  ExpectOneLineFailure("--run " + std::to_string(b), "step 2: tensor 7");
}

TEST_F(SimulateCliTest, BadKnobsAndUnreachableTopology) {
  AddCalibration(Topo(1, 2));
  const int64_t run = AddRun(Topo(1, 2));
  Freeze();
  const std::string r = "--run " + std::to_string(run);
  ExpectOneLineFailure(r + " --cycle-time-ms 0", "cycle_time_ms");
  ExpectOneLineFailure(r + " --fusion-threshold-mb 9000", "fusion_threshold_mb");
  ExpectOneLineFailure(r + " --nodes 4", "no cross-node curves");
  const std::string yaml = dir_.File("bad.yaml");
  WriteFile(yaml, "params:\n  cycle_time: 5\n");
  ExpectOneLineFailure(r + " --config-file " + yaml, "cycle_time");
}

TEST_F(SimulateCliTest, SimulatedRunIsNotATraceToReplay) {
  AddCalibration(Topo(1, 2));
  const int64_t run = AddRun(Topo(1, 2));
  Freeze();
  const CommandResult ok =
      RunAutotune("simulate --json --db " + db_ + " --run " + std::to_string(run));
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  const int64_t simulated = nlohmann::json::parse(ok.out).at("run").get<int64_t>();
  before_ = ReadFile(db_);
  ExpectOneLineFailure("--run " + std::to_string(simulated), "simulate a measured run");
}

TEST_F(SimulateCliTest, PredictsStoresAndComparesWithTheMeasuredRun) {
  AddCalibration(Topo(2, 2));
  const int64_t run = AddRun(Topo(2, 2));
  Freeze();
  const std::string timeline = dir_.File("timeline.csv");
  CommandResult r = RunAutotune("simulate --json --db " + db_ + " --run " + std::to_string(run) +
                                " --fusion-threshold-mb 0 --timeline " + timeline);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_GT(j.at("step_ms_median").get<double>(), 0.0);
  EXPECT_GT(j.at("score_bytes_per_s").get<double>(), 0.0);
  EXPECT_EQ(j.at("settings").size(), 1u);
  EXPECT_EQ(j.at("settings")[0].at("knobs").at("fusion_threshold_mb").get<double>(), 0.0);
  EXPECT_GT(j.at("settings")[0].at("sample").get<int64_t>(), 0);
  const int64_t simulated = j.at("run").get<int64_t>();
  // Threshold 0: one collective per tensor, 161 per step, 3 steps, plus the header.
  EXPECT_EQ(LineCount(ReadFile(timeline)), 1 + 3 * 161);

  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(db_, Store::Mode::kReadOnly, &store).ok());
  RunInfo info;
  ASSERT_TRUE(store->GetRun(simulated, &info).ok());
  EXPECT_EQ(info.kind, RunKind::kSimulated);
  EXPECT_EQ(info.source_run, run);
  EXPECT_TRUE(info.complete);
  EXPECT_NEAR(info.step_ms_median, j.at("step_ms_median").get<double>(), 1e-6);
  std::vector<Sample> samples;
  ASSERT_TRUE(store->ListSamples("resnet50", Topo(2, 2), &samples).ok());
  ASSERT_EQ(samples.size(), 2u);  // the measured run's and the simulated one
  EXPECT_EQ(samples[1].fidelity, Fidelity::kSimulated);
  EXPECT_EQ(samples[1].trace_run_id, run);
  EXPECT_GT(samples[1].calibration_id, 0);
  // One score: the simulated sample (scored by the simulator) and the simulated run (scored
  // by the store over the stored predicted steps) are the same statistic of the same steps.
  const double score = samples[1].score_bytes_per_s;
  EXPECT_NEAR(info.score_bytes_per_s, score, score * 1e-12);
  EXPECT_NEAR(j.at("score_bytes_per_s").get<double>(), score, score * 1e-12);
  store.reset();

  r = RunAutotune("compare --db " + db_ + " " + std::to_string(run) + " " +
                  std::to_string(simulated));
  EXPECT_EQ(r.exit_code, 0) << r.err;

  // A grid: 8 thresholds x 5 cycles x 2 caches x hierarchical on/off, in one call.
  r = RunAutotune("simulate --json --grid --db " + db_ + " --run " + std::to_string(run));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).at("settings").size(), 160u);
  // Extrapolated to 64 nodes.
  r = RunAutotune("simulate --json --db " + db_ + " --run " + std::to_string(run) + " --nodes 64");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).at("topology"), "64x2");
  EXPECT_GT(nlohmann::json::parse(r.out).at("step_ms_median").get<double>(),
            j.at("step_ms_median").get<double>() * 0.5);
}

}  // namespace
}  // namespace autotune::testing
