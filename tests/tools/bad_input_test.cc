// Bad input: one clear line on stderr, a non-zero exit, and the database unchanged.
#include <gtest/gtest.h>

#include <filesystem>

#include "store/store.h"
#include "tests/support/cli.h"

namespace autotune::testing {
namespace {

class BadInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = dir_.File("runs.db");
    // A database holding one finished run, so "unchanged" means something.
    std::unique_ptr<Store> store;
    ASSERT_TRUE(Store::Open(db_, Store::Mode::kReadWrite, &store).ok());
    RunInfo run;
    ASSERT_TRUE(BuiltinWorkload("vgg16", &run.workload).ok());
    run.steps_planned = 1;
    ASSERT_TRUE(store->CreateRun(&run).ok());
    StepTrace step;
    step.step_ms = 12;
    step.bytes = 100;
    step.score_bytes_per_s = 100 / 0.012;
    ASSERT_TRUE(store->AppendStep(run.id, step).ok());
    ASSERT_TRUE(store->FinishRun(run.id, true).ok());
    store.reset();
    before_ = ReadFile(db_);
    ASSERT_FALSE(before_.empty());
  }

  // The command failed with exactly one line on stderr containing `needle`, and left the
  // database byte-for-byte as it was.
  void ExpectOneLineFailure(const CommandResult& r, const std::string& needle) {
    EXPECT_NE(r.exit_code, 0) << r.out << r.err;
    EXPECT_EQ(LineCount(r.err), 1) << "stderr was:\n" << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << "stderr was:\n" << r.err;
    EXPECT_EQ(ReadFile(db_), before_) << "the database changed";
  }

  std::string Record(const std::string& extra) {
    return "record --np 2 --scale 0.01 --steps 2 --warmup-steps 0 --db " + db_ + " " + extra;
  }

  TempDir dir_;
  std::string db_;
  std::string before_;
};

TEST_F(BadInputTest, UnknownWorkload) {
  ExpectOneLineFailure(RunAutotune(Record("--workload resnet51")), "resnet51");
}

TEST_F(BadInputTest, MalformedWorkloadJson) {
  std::string file = dir_.File("model.json");
  WriteFile(file, R"({"name": "m", "forward_ms": 1, "backward_ms": 2, "tensors": [)");
  ExpectOneLineFailure(RunAutotune(Record("--workload " + file)), "model.json");
  WriteFile(file, R"({"name": "m", "forward_ms": 1, "backward_ms": 2, "optimizer_ms": 1,
                      "tensors": [{"name": "a", "shape": [-3], "ready_ms": 1}]})");
  ExpectOneLineFailure(RunAutotune(Record("--workload " + file)), "shape");
}

TEST_F(BadInputTest, MalformedConfigYaml) {
  std::string file = dir_.File("bad.yaml");
  WriteFile(file, "params:\n  fusion_threshold_mb: [1, 2\n");
  ExpectOneLineFailure(RunAutotune(Record("--workload resnet50 --config-file " + file)),
                       "bad.yaml");
  WriteFile(file, "params:\n  cycle_time: 5\n");
  ExpectOneLineFailure(RunAutotune(Record("--workload resnet50 --config-file " + file)),
                       "cycle_time");
}

TEST_F(BadInputTest, OutOfRangeKnob) {
  ExpectOneLineFailure(RunAutotune(Record("--workload resnet50 --cycle-time-ms 0")),
                       "cycle_time_ms");
  ExpectOneLineFailure(RunAutotune(Record("--workload resnet50 --fusion-threshold-mb 9000")),
                       "fusion_threshold_mb");
  ExpectOneLineFailure(RunAutotune(Record("--workload resnet50 --num-groups -1")), "num_groups");
}

TEST_F(BadInputTest, UnknownFlag) {
  CommandResult r = RunAutotune("record --np 2 --fusion-treshold-mb 4 --db " + db_);
  ExpectOneLineFailure(r, "fusion-treshold-mb");
}

TEST_F(BadInputTest, ForeignDatabaseIsRefusedUntouched) {
  std::string foreign = dir_.File("notes.db");
  WriteFile(foreign, "these are my notes, not a database\n");
  CommandResult r = RunAutotune(
      "record --np 2 --workload resnet50 --scale 0.01 --steps 1 "
      "--db " +
      foreign);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(LineCount(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("not an autotune database"), std::string::npos) << r.err;
  EXPECT_EQ(ReadFile(foreign), "these are my notes, not a database\n");
  r = RunAutotune("runs --db " + foreign);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("not an autotune database"), std::string::npos) << r.err;
}

TEST_F(BadInputTest, UnwritableDatabasePath) {
  CommandResult r = RunAutotune("record --np 2 --workload resnet50 --scale 0.01 --steps 1 --db " +
                                dir_.File("no/such/dir/x.db"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(LineCount(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("x.db"), std::string::npos) << r.err;
}

TEST_F(BadInputTest, UnknownRunId) {
  ExpectOneLineFailure(RunAutotune("compare --db " + db_ + " 1 77"), "run 77");
}

TEST_F(BadInputTest, MissingDatabaseForRuns) {
  CommandResult r = RunAutotune("runs --db " + dir_.File("absent.db"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(LineCount(r.err), 1) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir_.File("absent.db")));
}

TEST_F(BadInputTest, WorkloadsUnknownName) {
  CommandResult r = RunAutotune("workloads alexnet");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(LineCount(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("alexnet"), std::string::npos);
}

}  // namespace
}  // namespace autotune::testing
