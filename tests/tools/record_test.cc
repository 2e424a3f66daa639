// The `record` command end to end (the autotune binary launching 4 local ranks with
// --np 4): launch hint, bad input, the JSON summary, and a SIGTERM half-way.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/cli.h"

namespace {

namespace fs = std::filesystem;
using autotune::testing::AutotuneBinary;
using autotune::testing::CommandResult;
using autotune::testing::LineCount;
using autotune::testing::QueryInt;
using autotune::testing::QueryText;
using autotune::testing::ReadFile;
using autotune::testing::RunCommand;
using autotune::testing::StartCommand;
using autotune::testing::TempDir;
using autotune::testing::WaitCommand;

class RecordCliTest : public ::testing::Test {
 protected:
  std::vector<std::string> Record(std::vector<std::string> extra) {
    std::vector<std::string> argv = {
        AutotuneBinary(), "record",   "--np",    "4",
        "--workload",     "resnet50", "--scale", "0.02",
        "--warmup-steps", "1",        "--db",    (dir_ / "runs.db").string()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  }
  TempDir temp_;
  const fs::path dir_ = temp_.path();
};

TEST_F(RecordCliTest, WithoutMpiAndWithoutNpSaysHowToLaunch) {
  CommandResult r = RunCommand(
      {AutotuneBinary(), "record", "--workload", "resnet50", "--db", (dir_ / "runs.db").string()},
      dir_);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(LineCount(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("--np"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("mpirun"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
  EXPECT_FALSE(fs::exists(dir_ / "runs.db"));
}

TEST_F(RecordCliTest, JsonSummaryHasTheKeysScriptsRead) {
  CommandResult r =
      RunCommand(Record({"--steps", "3", "--json", "--fusion-threshold-mb", "2"}), dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  for (const char* key : {"run", "score_bytes_per_s", "step_ms_median", "step_ms_p95", "steps",
                          "complete", "verified"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["steps"], 3);
  EXPECT_EQ(j["complete"], true);
  EXPECT_EQ(j["verified"], true);
  EXPECT_GT(j["score_bytes_per_s"].get<double>(), 0.0);
  EXPECT_LE(j["step_ms_median"].get<double>(), j["step_ms_p95"].get<double>());
  EXPECT_EQ(j["knobs"]["fusion_threshold_mb"], 2.0);
  EXPECT_EQ(QueryInt(dir_ / "runs.db", "SELECT COUNT(*) FROM steps"), 3);
}

// --framework ddp plays DDP's buckets: the run says so, its collectives are DDP's buckets of
// 0.25 MB caps (resnet50 x0.02 is about 2 MB of gradients: more than 5 buckets; without its
// last tensor a bucket is under its cap) and it has no background cycles; a ddp: config file makes a run DDP's without the flag.
TEST_F(RecordCliTest, FrameworkDdpRecordsDdpsBuckets) {
  CommandResult r = RunCommand(
      Record({"--steps", "2", "--json", "--framework", "ddp", "--ddp-bucket-cap-mb", "0.25",
              "--ddp-first-bucket-mb", "0.25"}),
      dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["framework"], "ddp");
  EXPECT_EQ(j["verified"], true);
  EXPECT_EQ(j["knobs"]["ddp_bucket_cap_mb"], 0.25);
  const std::string db = (dir_ / "runs.db").string();
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM cycles"), 0);
  EXPECT_GT(QueryInt(db, "SELECT COUNT(*) FROM collectives WHERE step = 0"), 5);
  // A bucket closes once it reaches the cap: without its last tensor it is under 0.25 MiB.
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM collectives c WHERE tensor_count > 1 AND "
                         "bytes - (SELECT t.bytes FROM tensors t WHERE t.run_id = c.run_id AND "
                         "t.tensor = CAST(substr(c.tensors, length(rtrim(c.tensors, "
                         "'0123456789')) + 1) AS INTEGER)) >= 262144"),
            0);
  autotune::testing::WriteFile((dir_ / "ddp.yaml").string(), "ddp:\n  bucket_cap_mb: 4\n");
  r = RunCommand(Record({"--steps", "1", "--json", "--config-file", (dir_ / "ddp.yaml").string()}),
                 dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["framework"], "ddp");
  r = RunCommand({AutotuneBinary(), "runs", "--db", db}, dir_);
  EXPECT_NE(r.out.find("bucket_cap=4MB"), std::string::npos) << r.out;
}

TEST_F(RecordCliTest, BadInputGivesOneLineAndLeavesTheDatabaseUnchanged) {
  ASSERT_EQ(RunCommand(Record({"--steps", "2"}), dir_).exit_code, 0);
  const fs::path db = dir_ / "runs.db";
  const std::string before = ReadFile(db);
  ASSERT_FALSE(before.empty());
  std::ofstream(dir_ / "bad.json") << "{\"name\": \"x\", \"tensors\": [";
  std::ofstream(dir_ / "bad.yaml") << "params:\n  fusion_threshold_mb: [1, 2\n";
  std::ofstream(dir_ / "foreign.db") << "this is not a database\n";
  const std::string foreign_before = ReadFile(dir_ / "foreign.db");
  const std::vector<std::vector<std::string>> cases = {
      {"--workload", "no-such-model"},
      {"--workload", (dir_ / "bad.json").string()},
      {"--config-file", (dir_ / "bad.yaml").string()},
      {"--fusion-threshold-mb", "1000"},
      {"--cycle-time-ms", "0.01"},
      {"--steps", "0"},
  };
  for (const auto& c : cases) {
    CommandResult r = RunCommand(Record(c), dir_);
    EXPECT_NE(r.exit_code, 0) << c[0] << " " << c[1];
    EXPECT_EQ(LineCount(r.err), 1) << c[0] << " " << c[1] << ":\n" << r.err;
    EXPECT_EQ(r.err.rfind("autotune: error: ", 0), 0u) << r.err;
    EXPECT_EQ(ReadFile(db), before) << c[0] << " " << c[1];
  }
  std::vector<std::string> foreign = Record({"--steps", "2"});
  foreign[foreign.size() - 3] = (dir_ / "foreign.db").string();  // the --db value
  CommandResult r = RunCommand(foreign, dir_);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(LineCount(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("foreign.db"), std::string::npos) << r.err;
  EXPECT_EQ(ReadFile(dir_ / "foreign.db"), foreign_before);
}

// Stops a 4-rank record --np half-way with `signo` sent to the launcher: the completed steps
// stay, the run is incomplete and says which signal the user sent (the launcher passes it on
// to mpirun as SIGUSR1).
void StopHalfWay(const fs::path& dir, int signo, const std::string& name,
                 const std::vector<std::string>& argv) {
  const fs::path db = dir / "runs.db";
  const int planned = 400;
  const pid_t pid = StartCommand(argv, dir / "out.txt", dir / "err.txt");
  ASSERT_GT(pid, 0);
  // Wait until two steps are stored (polling the database), unless the run ends first.
  bool exited = false;
  int code = 0;
  while (QueryInt(db, "SELECT COUNT(*) FROM steps") < 2) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
      code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_FALSE(exited) << "record ended (code " << code << ") before storing 2 steps:\n"
                       << ReadFile(dir / "err.txt");
  kill(pid, signo);  // to `timeout`, which passes it on to the launcher
  code = WaitCommand(pid);
  const std::string err = ReadFile(dir / "err.txt");
  EXPECT_NE(code, 0);
  EXPECT_NE(err.find("incomplete"), std::string::npos) << err;
  const int64_t steps = QueryInt(db, "SELECT COUNT(*) FROM steps");
  EXPECT_GE(steps, 2);
  EXPECT_LT(steps, planned);
  EXPECT_EQ(QueryInt(db, "SELECT complete FROM runs"), 0);
  EXPECT_EQ(QueryInt(db, "SELECT steps_recorded FROM runs"), steps);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM tensor_events"), steps * 4 * 161);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(DISTINCT step) FROM collectives"), steps);
  EXPECT_EQ(QueryText(db, "SELECT end_reason FROM runs"), "stopped by " + name);
  EXPECT_NE(err.find("stopped by " + name), std::string::npos) << err;
}

TEST_F(RecordCliTest, SigtermHalfWayKeepsCompletedStepsAndMarksTheRunIncomplete) {
  StopHalfWay(dir_, SIGTERM, "SIGTERM", Record({"--steps", "400"}));
}

TEST_F(RecordCliTest, SigintHalfWayIsStoredAsSigint) {
  StopHalfWay(dir_, SIGINT, "SIGINT", Record({"--steps", "400"}));
}

}  // namespace
