// `--backend` on `record` and `calibrate` end to end (the autotune binary with --np 2) on a machine
// without a GPU: `--backend nccl` (no CUDA device, or no NCCL in the build) and an unknown backend
// are refused before mpirun starts, with one line naming the cause, a non-zero exit, and the
// database left byte for byte as it was (or not made).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "executor/nccl/nccl_factory.h"
#include "tests/support/cli.h"

namespace autotune {
namespace {

namespace fs = std::filesystem;
using testing::AutotuneBinary;
using testing::CommandResult;
using testing::LineCount;
using testing::QueryText;
using testing::ReadFile;
using testing::RunCommand;
using testing::TempDir;

class BackendCliTest : public ::testing::Test {
 protected:
  std::vector<std::string> Command(const std::string& subcommand, const std::string& backend) {
    if (subcommand == "record") {
      return {AutotuneBinary(), "record",  "--np", "2",         "--backend",
              backend,          "--scale", "0.02", "--steps",   "1",
              "--warmup-steps", "0",       "--db", db_.string()};
    }
    return {AutotuneBinary(), "calibrate", "--np",          "2", "--backend", backend,
            "--max-bytes",    "4096",      "--repetitions", "1", "--db",      db_.string()};
  }

  // record and calibrate with this backend: refused with exactly "autotune: error: <message>"
  // on stderr, nothing on stdout, non-zero exit, the database as it was before.
  void ExpectRefused(const std::string& backend, const std::string& message) {
    ExpectRefused(backend, message, message);
  }
  // The same with calibrate's own message (calibrate also takes gloo).
  void ExpectRefused(const std::string& backend, const std::string& record_message,
                     const std::string& calibrate_message) {
    const bool existed = fs::exists(db_);
    const std::string before = existed ? ReadFile(db_) : "";
    for (const char* subcommand : {"record", "calibrate"}) {
      const std::string& message =
          std::string(subcommand) == "record" ? record_message : calibrate_message;
      const CommandResult r = RunCommand(Command(subcommand, backend), dir_);
      EXPECT_NE(r.exit_code, 0) << subcommand;
      EXPECT_EQ(LineCount(r.err), 1) << subcommand << ":\n" << r.err;
      EXPECT_EQ(r.err, "autotune: error: " + message + "\n") << subcommand;
      EXPECT_TRUE(r.out.empty()) << subcommand << ":\n" << r.out;
      EXPECT_EQ(fs::exists(db_), existed) << subcommand;
      if (existed) {
        EXPECT_TRUE(ReadFile(db_) == before) << subcommand << ": database changed";
      }
    }
  }

  // A database holding one complete run, made with the default backend.
  void RecordWithTheDefaultBackend() {
    std::vector<std::string> argv = Command("record", "mpi");
    argv.erase(argv.begin() + 4, argv.begin() + 6);  // no --backend: the default
    const CommandResult r = RunCommand(argv, dir_);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(QueryText(db_, "SELECT backend FROM runs"), "mpi");
    ASSERT_FALSE(ReadFile(db_).empty());
  }

  TempDir temp_;
  const fs::path dir_ = temp_.path();
  const fs::path db_ = dir_ / "runs.db";
};

TEST_F(BackendCliTest, NcclWithoutADeviceIsRefusedBeforeLaunch) {
  const Status available = executor::NcclAvailable();
  if (available.ok()) GTEST_SKIP() << "a CUDA device is present: --backend nccl runs here";
  // The one line names the backend and the cause (no device, or no NCCL in this build).
  ASSERT_EQ(available.message().rfind("--backend nccl: ", 0), 0u) << available.message();
  EXPECT_TRUE(available.message().find("no CUDA device") != std::string::npos ||
              available.message().find("without NCCL") != std::string::npos)
      << available.message();
  ExpectRefused("nccl", available.message());
  RecordWithTheDefaultBackend();
  ExpectRefused("nccl", available.message());
}

TEST_F(BackendCliTest, UnknownBackendIsRefusedBeforeLaunch) {
  const std::string record = "--backend bogus: unknown backend (mpi | nccl)";
  const std::string calibrate = "--backend bogus: unknown backend (mpi | nccl | gloo)";
  ExpectRefused("bogus", record, calibrate);
  RecordWithTheDefaultBackend();
  ExpectRefused("bogus", record, calibrate);
  ExpectRefused("MPI", "--backend MPI: unknown backend (mpi | nccl)",
                "--backend MPI: unknown backend (mpi | nccl | gloo)");
}

// calibrate --mpi-tcp-eager-limit: the calibration is stored at the limit given, and a shell's
// exported limit does not mislabel one made without the flag (autotune sets or unsets the
// variable before MPI_Init, as record does); another backend refuses the flag in one line.
TEST_F(BackendCliTest, CalibrateStoresTheEagerLimitItRanUnder) {
  std::vector<std::string> argv = Command("calibrate", "mpi");
  argv.insert(argv.begin(), {"env", "OMPI_MCA_btl_tcp_eager_limit=99999"});
  std::vector<std::string> with_flag = argv;
  with_flag.insert(with_flag.end(), {"--mpi-tcp-eager-limit", "131072"});
  CommandResult r = RunCommand(with_flag, dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("at mpi_tcp_eager_limit 131072"), std::string::npos) << r.out;
  r = RunCommand(argv, dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(QueryText(db_, "SELECT group_concat(tcp_eager_limit) FROM (SELECT "
                           "tcp_eager_limit FROM calibrations ORDER BY id)"),
            "131072,0");

  const std::string before = ReadFile(db_);
  std::vector<std::string> gloo = Command("calibrate", "gloo");
  gloo.insert(gloo.end(), {"--mpi-tcp-eager-limit", "131072"});
  r = RunCommand(gloo, dir_);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.err,
            "autotune: error: --mpi-tcp-eager-limit: an Open MPI knob; --backend gloo does not "
            "use it\n");
  EXPECT_TRUE(ReadFile(db_) == before) << "database changed";
}

}  // namespace
}  // namespace autotune
