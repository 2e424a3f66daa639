// `autotune calibrate --backend gloo` end to end: torch's gloo allreduce timed by the helper on
// 2 local ranks under mpirun and stored as a calibration of library gloo; a failing helper or
// a bad rendezvous is one line and leaves the database as it was; `record` refuses gloo.
// Skipped, with one line, where /usr/bin/python3 cannot import torch.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/cli.h"

namespace autotune {
namespace {

namespace fs = std::filesystem;
using testing::AutotuneBinary;
using testing::CommandResult;
using testing::LineCount;
using testing::QueryInt;
using testing::QueryText;
using testing::ReadFile;
using testing::RunCommand;
using testing::TempDir;

bool TorchAvailable() {
  return RunCommand({"/usr/bin/python3", "-c", "import torch.distributed"},
                    fs::temp_directory_path())
             .exit_code == 0;
}

class GlooCalibrateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!TorchAvailable()) GTEST_SKIP() << "/usr/bin/python3 cannot import torch (python3-torch)";
  }

  // calibrate --backend gloo on 2 local ranks, 1 KiB to 16 KiB, with `env` (NAME=VALUE) set.
  CommandResult Calibrate(const std::vector<std::string>& env = {}) {
    std::vector<std::string> argv = {"env", "OMP_NUM_THREADS=1"};
    argv.insert(argv.end(), env.begin(), env.end());
    const std::vector<std::string> command = {
        AutotuneBinary(), "calibrate",    "--np",      "2",       "--backend", "gloo",
        "--min-bytes",    "1024",         "--max-bytes", "16384", "--repetitions", "3",
        "--quiet",        "--db",         db_.string()};
    argv.insert(argv.end(), command.begin(), command.end());
    return RunCommand(argv, dir_.string());
  }

  TempDir temp_;
  const fs::path dir_ = temp_.path();
  const fs::path db_ = dir_ / "runs.db";
};

// One world allreduce point per size (1, 2, 4, 8, 16 KiB), of 2 ranks, with its repetitions,
// times ordered min <= median <= max; the calibration is library gloo on one node of 2 ranks.
TEST_F(GlooCalibrateTest, StoresGloosAllreduceCurve) {
  const CommandResult r = Calibrate();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("calibration 1: 1x2 gloo, 5 points, 1024..16384 bytes, 3 repetitions"),
            std::string::npos)
      << r.out;
  const std::string db = db_.string();
  EXPECT_EQ(QueryText(db, "SELECT backend || ' ' || nodes || 'x' || ranks_per_node FROM "
                          "calibrations"),
            "gloo 1x2");
  EXPECT_EQ(QueryText(db, "SELECT hardware FROM calibrations").rfind("gloo (torch ", 0), 0u);
  EXPECT_EQ(QueryText(db, "SELECT group_concat(bytes) FROM (SELECT bytes FROM "
                          "calibration_points ORDER BY bytes)"),
            "1024,2048,4096,8192,16384");
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM calibration_points WHERE op = 'allreduce' AND "
                         "scope = 'world' AND ranks = 2 AND repetitions = 3 AND min_us > 0 AND "
                         "min_us <= median_us AND median_us <= max_us"),
            5);
}

// The helper failing on every rank (an interpreter that exits 1 at once) or a port that is no
// port: one line naming it, a non-zero exit, the database byte for byte as it was.
TEST_F(GlooCalibrateTest, AFailureIsOneLineAndLeavesTheDatabase) {
  ASSERT_EQ(Calibrate().exit_code, 0);
  const std::string before = ReadFile(db_);
  const CommandResult failed = Calibrate({"AUTOTUNE_PYTHON=/bin/false"});
  EXPECT_NE(failed.exit_code, 0);
  EXPECT_EQ(failed.err, "autotune: error: calibrate --backend gloo: the helper failed\n");
  const CommandResult port = Calibrate({"MASTER_PORT=99999"});
  EXPECT_NE(port.exit_code, 0);
  EXPECT_EQ(LineCount(port.err), 1) << port.err;
  EXPECT_NE(port.err.find("MASTER_PORT 99999: not a TCP port (1..65535)"), std::string::npos)
      << port.err;
  EXPECT_TRUE(ReadFile(db_) == before) << "database changed";
  EXPECT_EQ(QueryInt(db_.string(), "SELECT count(*) FROM calibrations"), 1);
}

// gloo is a library calibrate measures, not a data plane of the executor.
TEST_F(GlooCalibrateTest, RecordRefusesGloo) {
  const CommandResult r = RunCommand({AutotuneBinary(), "record", "--np", "2", "--backend",
                                      "gloo", "--steps", "1", "--db", db_.string()},
                                     dir_.string());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.err,
            "autotune: error: --backend gloo: not a data plane of the executor (mpi | nccl); "
            "gloo is measured by `autotune calibrate --backend gloo`\n");
  EXPECT_FALSE(fs::exists(db_));
}

}  // namespace
}  // namespace autotune
