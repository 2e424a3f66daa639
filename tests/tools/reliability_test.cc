// `autotune record --np 4` when something goes wrong on a rank, as a user on a cluster sees
// it: kill -9 of another rank, of rank 0 (which writes every step), of the launcher; a rank
// stopped (SIGSTOP) inside the job, with the stall check warning only, and with its
// shutdown. After each: one line naming what happened, `PRAGMA integrity_check` = ok, the
// completed steps present with all their rows, the run incomplete with its end reason, and
// the next record into the same file working.
#include <signal.h>
#include <sys/wait.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/support/cli.h"

namespace autotune::testing {
namespace {

namespace fs = std::filesystem;

constexpr int kRanks = 4;
constexpr int kPlanned = 400;
constexpr int kTensors = 161;  // resnet50's parameter tensors

// The NUL-separated file under /proc/PID as strings ({} when unreadable).
std::vector<std::string> ProcStrings(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::vector<std::string> parts;
  std::string part;
  while (std::getline(in, part, '\0')) parts.push_back(part);
  return parts;
}

// The number of threads of pid (0 when it is gone).
int Threads(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  }
  return 0;
}

class ReliabilityTest : public ::testing::Test {
 protected:
  std::string db() const { return dir_.path() + "/runs.db"; }

  // record --np 4 of `steps` steps with the extra flags, in the background.
  pid_t Start(const std::vector<std::string>& extra = {}, int steps = kPlanned) {
    std::vector<std::string> argv = {AutotuneBinary(), "record", "--np", std::to_string(kRanks),
                                     "--scale", "0.05", "--steps", std::to_string(steps),
                                     "--warmup-steps", "1", "--quiet", "--db", db()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    // The launcher's folder goes to TMPDIR: this test's own, so that a launcher killed
    // outright leaves it here, not in /tmp.
    fs::create_directories(tmp());
    const char* previous = std::getenv("TMPDIR");
    const std::string saved = previous != nullptr ? previous : "";
    setenv("TMPDIR", tmp().c_str(), 1);
    pid_ = StartCommand(argv, dir_.File("out.txt"), dir_.File("err.txt"));
    if (previous != nullptr) {
      setenv("TMPDIR", saved.c_str(), 1);
    } else {
      unsetenv("TMPDIR");
    }
    return pid_;
  }

  std::string tmp() const { return dir_.path() + "/tmp"; }

  // The launchers' folders (tools/launch.cc) left in this test's TMPDIR.
  int TmpFiles() const {
    int n = 0;
    for (const auto& e : fs::directory_iterator(tmp())) {
      n += e.path().filename().string().rfind("autotune-launch-", 0) == 0 ? 1 : 0;
    }
    return n;
  }

  // Open MPI's session folders (ompi.HOST.UID) in this test's TMPDIR: {directly there, inside
  // a launcher's own folder}.
  std::pair<int, int> SessionFolders() const {
    std::pair<int, int> n{0, 0};
    for (const auto& e : fs::directory_iterator(tmp())) {
      const std::string name = e.path().filename().string();
      n.first += name.rfind("ompi.", 0) == 0 ? 1 : 0;
      if (name.rfind("autotune-launch-", 0) != 0 || !e.is_directory()) continue;
      for (const auto& inner : fs::directory_iterator(e.path())) {
        n.second += inner.path().filename().string().rfind("ompi.", 0) == 0 ? 1 : 0;
      }
    }
    return n;
  }

  // This test's autotune processes: rank -> pid for the ranks, -1 -> pid for the launcher.
  std::map<int, pid_t> Processes() const {
    std::map<int, pid_t> found;
    for (const auto& entry : fs::directory_iterator("/proc")) {
      const std::string name = entry.path().filename();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      const std::vector<std::string> argv = ProcStrings(entry.path() / "cmdline");
      bool ours = false;
      for (const std::string& a : argv) ours = ours || a == db();
      if (argv.empty() || argv[0] != AutotuneBinary() || !ours) continue;
      int rank = -1;
      for (const std::string& v : ProcStrings(entry.path() / "environ")) {
        if (v.rfind("OMPI_COMM_WORLD_RANK=", 0) == 0) rank = std::stoi(v.substr(21));
      }
      found[rank] = std::stoi(name);
    }
    return found;
  }

  // Waits until `steps` steps are stored and every rank is up; false if the job ended first.
  bool WaitForSteps(int steps) {
    while (QueryInt(db(), "SELECT COUNT(*) FROM steps") < steps ||
           Processes().size() < kRanks + 1) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return true;
  }

  // Waits until err.txt holds `text`; false if the job ended first.
  bool WaitForStderr(const std::string& text) {
    while (ReadFile(dir_.File("err.txt")).find(text) == std::string::npos) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return true;
  }

  // What a failed run must leave: an intact file, complete steps only, the run incomplete
  // with its reason; err (when given) states the steps kept; a next record into the same
  // file works.
  void ExpectIntactIncomplete(const std::string& reason_start, const std::string& err = "") {
    EXPECT_EQ(QueryText(db(), "PRAGMA integrity_check"), "ok");
    const int64_t steps = QueryInt(db(), "SELECT COUNT(*) FROM steps WHERE run_id = 1");
    EXPECT_GE(steps, 3);
    EXPECT_LT(steps, kPlanned);
    EXPECT_EQ(QueryInt(db(), "SELECT complete FROM runs WHERE id = 1"), 0);
    EXPECT_EQ(QueryInt(db(), "SELECT steps_recorded FROM runs WHERE id = 1"), steps);
    EXPECT_EQ(QueryInt(db(), "SELECT COUNT(*) FROM tensor_events WHERE run_id = 1"),
              steps * kRanks * kTensors);
    const std::string reason = QueryText(db(), "SELECT end_reason FROM runs WHERE id = 1");
    EXPECT_EQ(reason.rfind(reason_start, 0), 0u) << reason;
    const std::string kept = "run 1 kept " + std::to_string(steps) + " of " +
                             std::to_string(kPlanned) + " steps, marked incomplete";
    if (!err.empty()) {
      EXPECT_NE(err.find(kept), std::string::npos) << err << "\nwant: " << kept;
    }
    const CommandResult runs = RunAutotune("runs --db " + db());
    EXPECT_NE(runs.out.find("run 1 ended: " + reason_start), std::string::npos) << runs.out;
    const CommandResult next = RunAutotune("record --np 2 --scale 0.02 --steps 2 --db " + db());
    EXPECT_EQ(next.exit_code, 0) << next.err;
    EXPECT_EQ(QueryInt(db(), "SELECT complete FROM runs WHERE id = 2"), 1);
  }

  TempDir dir_;
  pid_t pid_ = -1;
};

TEST_F(ReliabilityTest, KillNineOfAnotherRankNamesItAndKeepsTheSteps) {
  ASSERT_GT(Start(), 0);
  ASSERT_TRUE(WaitForSteps(3)) << ReadFile(dir_.File("err.txt"));
  // mpirun's session folder is the launch's own, not one shared with other launches.
  EXPECT_EQ(SessionFolders(), std::make_pair(0, 1));
  const pid_t victim = Processes().at(2);
  kill(victim, SIGKILL);
  EXPECT_NE(WaitCommand(pid_), 0);
  const std::string err = ReadFile(dir_.File("err.txt"));
  EXPECT_EQ(LineCount(err), 1) << err;
  EXPECT_EQ(TmpFiles(), 0);  // the launcher removed its folder
  EXPECT_TRUE(std::regex_search(err, std::regex(R"(^autotune: error: rank 2 on \S+ died )"
                                                R"(\(signal 9, Killed\); )")))
      << err;
  ExpectIntactIncomplete("rank 2 on ", err);
}

TEST_F(ReliabilityTest, KillNineOfRankZeroWhileItWritesKeepsTheFileIntact) {
  ASSERT_GT(Start(), 0);
  ASSERT_TRUE(WaitForSteps(3)) << ReadFile(dir_.File("err.txt"));
  // Rank 0 appends a step every few tens of ms: the kill lands between or inside writes.
  kill(Processes().at(0), SIGKILL);
  EXPECT_NE(WaitCommand(pid_), 0);
  const std::string err = ReadFile(dir_.File("err.txt"));
  EXPECT_EQ(LineCount(err), 1) << err;
  EXPECT_EQ(err.rfind("autotune: error: rank 0 on ", 0), 0u) << err;
  ExpectIntactIncomplete("rank 0 on ", err);
}

TEST_F(ReliabilityTest, KillNineOfTheLauncherStopsTheJobAfterAStep) {
  ASSERT_GT(Start(), 0);
  ASSERT_TRUE(WaitForSteps(3)) << ReadFile(dir_.File("err.txt"));
  kill(Processes().at(-1), SIGKILL);  // mpirun gets SIGTERM and passes it to the ranks
  WaitCommand(pid_);
  EXPECT_EQ(TmpFiles(), 1);  // nothing could remove the killed launcher's note: TMPDIR's
  // The ranks outlive the launcher a moment: wait until they are gone.
  while (!Processes().empty()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ExpectIntactIncomplete("stopped by SIGTERM");
}

TEST_F(ReliabilityTest, StoppedRankIsNamedByTheStallCheckAndTheJobEnds) {
  ASSERT_GT(Start({"--stall-check-s", "2", "--stall-shutdown-s", "4"}), 0);
  ASSERT_TRUE(WaitForSteps(3)) << ReadFile(dir_.File("err.txt"));
  const pid_t victim = Processes().at(3);
  kill(victim, SIGSTOP);
  const int code = WaitCommand(pid_);
  kill(victim, SIGKILL);  // mpirun has killed it; in case it has not
  EXPECT_EQ(code, 3);
  const std::string err = ReadFile(dir_.File("err.txt"));
  EXPECT_EQ(LineCount(err), 2) << err;
  const std::regex warning(R"(^autotune: warning: stall: no progress for \d+ s in step \d+: )"
                           R"(rank 3 on \S+ not heard from for \d+ s)");
  EXPECT_TRUE(std::regex_search(err, warning)) << err;
  EXPECT_NE(err.find("\nautotune: error: stall: no progress for "), std::string::npos) << err;
  EXPECT_NE(err.find("(--stall-shutdown-s 4)"), std::string::npos) << err;
  // Ranks other than 3 are not accused of being silent.
  for (int r : {0, 1, 2}) {
    EXPECT_EQ(err.find("rank " + std::to_string(r) + " on"), std::string::npos) << err;
  }
  ExpectIntactIncomplete("stall: no progress for ", err);
}

TEST_F(ReliabilityTest, StallCheckWarnsOnceAndTheRunGoesOnWhenTheRankResumes) {
  ASSERT_GT(Start({"--stall-check-s", "2"}, 30), 0);
  ASSERT_TRUE(WaitForSteps(3)) << ReadFile(dir_.File("err.txt"));
  const pid_t victim = Processes().at(1);
  kill(victim, SIGSTOP);
  const bool warned = WaitForStderr("autotune: warning: stall:");
  kill(victim, SIGCONT);
  ASSERT_TRUE(warned) << ReadFile(dir_.File("err.txt"));
  EXPECT_EQ(WaitCommand(pid_), 0) << ReadFile(dir_.File("err.txt"));
  const std::string err = ReadFile(dir_.File("err.txt"));
  EXPECT_EQ(LineCount(err), 1) << err;
  EXPECT_NE(err.find("rank 1 on "), std::string::npos) << err;
  EXPECT_NE(err.find("(--stall-shutdown-s 0: waiting)"), std::string::npos) << err;
  EXPECT_EQ(QueryInt(db(), "SELECT complete FROM runs WHERE id = 1"), 1);
  EXPECT_EQ(QueryInt(db(), "SELECT COUNT(*) FROM steps"), 30);
  EXPECT_EQ(QueryText(db(), "SELECT end_reason FROM runs WHERE id = 1"), "");
}

TEST_F(ReliabilityTest, KillNineOfARankDuringCalibrateSaysNothingWasSaved) {
  pid_ = StartCommand({AutotuneBinary(), "calibrate", "--np", std::to_string(kRanks), "--db", db()},
                      dir_.File("out.txt"), dir_.File("err.txt"));
  ASSERT_GT(pid_, 0);
  // Rank 1 in the sweep (a sweep of 1 KiB..64 MiB takes seconds), then it is killed. In the
  // sweep it runs 4 threads: its own, two of Open MPI's and the stall check's.
  while (Processes().count(1) == 0 || Threads(Processes().at(1)) < 4) {
    int status = 0;
    ASSERT_NE(waitpid(pid_, &status, WNOHANG), pid_) << ReadFile(dir_.File("err.txt"));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(Processes().at(1), SIGKILL);
  EXPECT_NE(WaitCommand(pid_), 0);
  const std::string err = ReadFile(dir_.File("err.txt"));
  EXPECT_EQ(LineCount(err), 1) << err;
  EXPECT_TRUE(std::regex_search(
      err, std::regex(R"(^autotune: error: rank 1 on \S+ died \(signal 9, Killed\); no )"
                      R"(calibration saved)")))
      << err;
  EXPECT_EQ(QueryText(db(), "PRAGMA integrity_check"), "ok");
  EXPECT_EQ(QueryInt(db(), "SELECT COUNT(*) FROM calibrations"), 0);
}

TEST_F(ReliabilityTest, StallSettingsComeFromHorovodsNamesAndAreCheckedBeforeLaunch) {
  // A shutdown earlier than the warning is refused before any rank starts.
  CommandResult r = RunAutotune("record --np 2 --stall-check-s 10 --stall-shutdown-s 5 --db " +
                                db());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(LineCount(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("--stall-shutdown-s 5 is less than --stall-check-s 10"),
            std::string::npos)
      << r.err;
  // Horovod's variable, malformed: one line naming it.
  r = RunCommand({"env", "HOROVOD_STALL_CHECK_TIME_SECONDS=soon", AutotuneBinary(), "record",
                  "--np", "2", "--db", db()},
                 dir_.path());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(LineCount(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("HOROVOD_STALL_CHECK_TIME_SECONDS=soon"), std::string::npos) << r.err;
  // horovodrun's config-file section, same rule.
  const std::string config = dir_.File(
      "hvd.yaml", "stall_check:\n  warning_time_seconds: 30\n  shutdown_time_seconds: 10\n");
  r = RunAutotune("record --np 2 --config-file " + config + " --db " + db());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--stall-shutdown-s 10 is less than --stall-check-s 30"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(db()));
}

}  // namespace
}  // namespace autotune::testing
