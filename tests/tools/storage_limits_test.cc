// A database on storage that refuses writes: a tiny file system that fills up while `record`
// writes, and read-only media. The test mounts what it needs in a mount namespace of its
// own (unshare(CLONE_NEWNS), every mount private), so nothing outlives it; where mounting is
// not permitted it skips.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/statvfs.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
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
using autotune::testing::TempDir;

// resnet50 has 161 gradient tensors (DESIGN.md); the records here run 2 ranks.
constexpr int kTensorEventsPerStep = 161 * 2;

class StorageLimitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A private mount namespace: the mounts below are seen by this process and the commands
    // it starts only, and vanish with it.
    if (unshare(CLONE_NEWNS) != 0 || mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr)) {
      GTEST_SKIP() << "mounting is not permitted here (needs root or CAP_SYS_ADMIN)";
    }
  }
  void TearDown() override {
    for (auto it = mounts_.rbegin(); it != mounts_.rend(); ++it) umount2(it->c_str(), MNT_DETACH);
  }
  // Mounts a tmpfs of `bytes` at a new folder `name`; its path.
  fs::path MountTmpfs(const std::string& name, int64_t bytes) {
    const fs::path at = dir_ / name;
    fs::create_directory(at);
    const std::string options = "size=" + std::to_string(bytes);
    EXPECT_EQ(mount("tmpfs", at.c_str(), "tmpfs", 0, options.c_str()), 0) << at;
    mounts_.push_back(at);
    return at;
  }
  // Makes folder `at` read-only (a read-only bind mount of itself).
  void MakeReadOnly(const fs::path& at) {
    ASSERT_EQ(mount(at.c_str(), at.c_str(), nullptr, MS_BIND, nullptr), 0) << at;
    mounts_.push_back(at);
    ASSERT_EQ(mount(nullptr, at.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr), 0);
  }
  std::vector<std::string> Record(const fs::path& db, int steps) const {
    return {AutotuneBinary(), "record",  "--np",      "2",       "--workload",
            "resnet50",       "--scale", "0.02",      "--steps", std::to_string(steps),
            "--warmup-steps", "0",       "--compute", "sleep",   "--db",
            db.string()};
  }
  // The size of the database a record of `steps` steps leaves, on a roomy tmpfs.
  int64_t RecordedSize(int steps) {
    const fs::path at = MountTmpfs("measure" + std::to_string(steps), 256 << 20);
    const CommandResult r = RunCommand(Record(at / "runs.db", steps), dir_);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    int64_t bytes = 0;
    for (const auto& entry : fs::directory_iterator(at)) bytes += fs::file_size(entry.path());
    return bytes;
  }

  TempDir temp_;
  const fs::path dir_ = temp_.path();
  std::vector<fs::path> mounts_;
};

TEST_F(StorageLimitsTest, DiskFullMidRunKeepsTheStepsStoredAndSaysSoInOneLine) {
  // What a step costs on disk, measured: the database after 10 and after 30 steps.
  const int64_t after_10 = RecordedSize(10);
  const int64_t after_30 = RecordedSize(30);
  const int64_t per_step = (after_30 - after_10) / 20;
  ASSERT_GT(per_step, 0);
  // Room for the empty database and 40 steps as stored at the end. While the run writes,
  // its steps sit in the write-ahead log, which logs again every page a commit touches
  // (several times a step's final cost): the disk fills after a few steps, and a whole run
  // of `planned` steps could never fit.
  const int64_t base = after_10 - 10 * per_step;
  const int planned = 400;
  const fs::path tiny = MountTmpfs("tiny", base + 40 * per_step);
  const fs::path db = tiny / "runs.db";

  const CommandResult r = RunCommand(Record(db, planned), dir_);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(LineCount(r.err), 1) << r.err;
  EXPECT_EQ(r.err.rfind("autotune: error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(db.string()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("disk full (SQLITE_FULL)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("marked incomplete"), std::string::npos) << r.err;

  // The file is intact and holds the steps stored before the disk filled, each whole.
  EXPECT_EQ(QueryText(db, "PRAGMA integrity_check"), "ok");
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM runs"), 1);
  EXPECT_EQ(QueryInt(db, "SELECT complete FROM runs"), 0);
  const int64_t kept = QueryInt(db, "SELECT count(*) FROM steps");
  EXPECT_GE(kept, 1);
  EXPECT_LT(kept, planned);
  std::printf("disk full after %lld steps (%lld bytes a step at the end)\n",
              static_cast<long long>(kept), static_cast<long long>(per_step));
  EXPECT_EQ(QueryInt(db, "SELECT steps_recorded FROM runs"), kept);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM tensor_events"), kept * kTensorEventsPerStep);
  EXPECT_NE(r.err.find("kept " + std::to_string(kept) + " of " + std::to_string(planned)),
            std::string::npos)
      << r.err;
  // The summary on stdout tells the same steps.
  EXPECT_NE(r.out.find("(incomplete)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("over " + std::to_string(kept) + " steps"), std::string::npos) << r.out;
}

TEST_F(StorageLimitsTest, ReadOnlyMediaRefuseWritersBeforeLaunchAndServeReaders) {
  const fs::path media = dir_ / "media";
  fs::create_directory(media);
  const fs::path db = media / "runs.db";
  CommandResult r = RunCommand(Record(db, 3), dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = RunCommand({AutotuneBinary(), "calibrate", "--np", "2", "--max-bytes", "1048576",
                  "--repetitions", "3", "--db", db.string()},
                 dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string before = ReadFile(db);
  MakeReadOnly(media);

  // Were mpirun started, it would say that this argument is not one of its own.
  setenv("AUTOTUNE_MPIRUN_ARGS", "--no-such-mpirun-flag", 1);
  const std::vector<std::vector<std::string>> writers = {
      Record(db, 3),
      {AutotuneBinary(), "calibrate", "--np", "2", "--db", db.string()},
      {AutotuneBinary(), "import", "--horovod-timeline", AUTOTUNE_FIXTURE_TIMELINE, "--nodes", "2",
       "--ranks-per-node", "2", "--db", db.string()},
      Record(media / "new.db", 3),  // a new file on read-only media
  };
  for (const auto& argv : writers) {
    r = RunCommand(argv, dir_);
    const std::string file = argv.back();
    EXPECT_NE(r.exit_code, 0) << argv[1];
    EXPECT_EQ(LineCount(r.err), 1) << argv[1] << ":\n" << r.err;
    EXPECT_EQ(r.err, "autotune: error: cannot write database " + file + ": read-only file system\n")
        << argv[1];
  }
  unsetenv("AUTOTUNE_MPIRUN_ARGS");
  EXPECT_FALSE(fs::exists(media / "new.db"));
  EXPECT_EQ(ReadFile(db), before);

  // Readers work as on any database; simulate prints its predictions without storing them.
  r = RunCommand({AutotuneBinary(), "runs", "--db", db.string(), "--json"}, dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).size(), 1u);
  r = RunCommand({AutotuneBinary(), "compare", "--db", db.string(), "1", "1", "--json"}, dir_);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = RunCommand({AutotuneBinary(), "simulate", "--db", db.string(), "--run", "1", "--json"}, dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["settings"][0]["step_ms"].size(), 3u) << r.out;
  EXPECT_EQ(LineCount(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("read-only"), std::string::npos) << r.err;
  EXPECT_EQ(ReadFile(db), before);
}

}  // namespace
