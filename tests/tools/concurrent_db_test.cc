// One database file used by several autotune commands at once, as on a shared cluster
// folder: two `record --np 2` and a `calibrate --np 2` write while `runs`, `compare`,
// `simulate` and `search` read it in a loop; once on a new file, once on a file that holds
// runs already. Every command must succeed (a write waits for another to end), nothing may
// be lost, and a reader must never see a step without all its rows.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "store/store.h"
#include "tests/support/cli.h"

namespace {

namespace fs = std::filesystem;
using autotune::RunInfo;
using autotune::Store;
using autotune::Trace;
using autotune::testing::AutotuneBinary;
using autotune::testing::QueryInt;
using autotune::testing::QueryText;
using autotune::testing::ReadFile;
using autotune::testing::StartCommand;
using autotune::testing::TempDir;
using autotune::testing::WaitCommand;
using Clock = std::chrono::steady_clock;

// resnet50 has 161 gradient tensors (DESIGN.md); every record here runs 2 ranks, so a stored
// step has 161 x 2 tensor events.
constexpr int kTensors = 161;
constexpr int kRanks = 2;
constexpr int kSteps = 600;  // per record: a few seconds, to overlap the other writers
constexpr auto kDeadline = std::chrono::minutes(10);

struct Started {
  pid_t pid = -1;
  std::string name;  // for messages
  fs::path out, err;
};

class ConcurrentDbTest : public ::testing::Test {
 protected:
  std::vector<std::string> Record(int steps) const {
    return {AutotuneBinary(), "record",  "--np",      "2",       "--workload",
            "resnet50",       "--scale", "0.02",      "--steps", std::to_string(steps),
            "--warmup-steps", "1",       "--compute", "sleep",   "--json",
            "--db",           db_};
  }
  std::vector<std::string> Calibrate() const {
    return {
        AutotuneBinary(), "calibrate", "--np", "2", "--max-bytes", "4194304", "--repetitions", "20",
        "--json",         "--db",      db_};
  }
  Started Start(const std::string& name, const std::vector<std::string>& argv) {
    Started s{-1, name, dir_ / (name + ".out"), dir_ / (name + ".err")};
    s.pid = StartCommand(argv, s.out, s.err);
    return s;
  }
  // Runs the readers at once (as processes) and checks that each succeeded.
  void ReadOnce(int iteration);
  // Loads every measured run's trace through the store, as simulate does, and checks that
  // each step it sees has all its rows: every rank's tensor events (record gathers them to
  // rank 0), rank 0's cycles and collectives.
  void CheckStepsComplete();
  // Starts the writers, loops the readers until they end, and checks what they stored.
  void RunWritersAndReaders(int64_t runs_before, int64_t calibrations_before);

  TempDir temp_;
  const fs::path dir_ = temp_.path();
  const std::string db_ = (dir_ / "shared.db").string();
  int64_t baseline_run_ = 0;  // a complete run to compare with; 0 until one exists
  int reads_ = 0;             // reader rounds run
  int trace_checks_ = 0;      // steps checked by CheckStepsComplete
};

bool NoLockError(const std::string& text) {
  return text.find("locked") == std::string::npos && text.find("busy") == std::string::npos;
}

void ConcurrentDbTest::ReadOnce(int iteration) {
  const std::string it = std::to_string(iteration);
  std::vector<Started> readers;
  readers.push_back(Start("runs" + it, {AutotuneBinary(), "runs", "--db", db_, "--json"}));
  // The newest measured run with at least two stored steps (perhaps still recording).
  const int64_t run = QueryInt(db_,
                               "SELECT max(run_id) FROM (SELECT run_id FROM steps s JOIN runs r "
                               "ON r.id = s.run_id WHERE r.kind = 'measured' GROUP BY run_id "
                               "HAVING count(*) >= 2)");
  const bool calibrated = QueryInt(db_, "SELECT count(*) FROM calibrations") > 0;
  if (run > 0) {
    const std::string r = std::to_string(run);
    const std::string base = std::to_string(baseline_run_ > 0 ? baseline_run_ : run);
    readers.push_back(
        Start("compare" + it, {AutotuneBinary(), "compare", "--db", db_, base, r, "--json"}));
    if (calibrated) {  // both need a network model (search: or measured samples)
      readers.push_back(Start("search" + it, {AutotuneBinary(), "search", "--db", db_, "--run", r,
                                              "--sim-budget", "10", "--max-samples", "1", "--json",
                                              "--out", (dir_ / ("best" + it + ".yaml")).string()}));
      readers.push_back(Start("simulate" + it,
                              {AutotuneBinary(), "simulate", "--db", db_, "--run", r, "--json"}));
    }
  }
  for (Started& reader : readers) {
    const int code = WaitCommand(reader.pid);
    const std::string err = ReadFile(reader.err);
    EXPECT_EQ(code, 0) << reader.name << ":\n" << err;
    EXPECT_TRUE(NoLockError(err)) << reader.name << ":\n" << err;
    if (code != 0) continue;
    const nlohmann::json j = nlohmann::json::parse(ReadFile(reader.out), nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << reader.name << ": " << ReadFile(reader.out);
    if (reader.name.rfind("runs", 0) == 0) {
      for (const auto& row : j) {
        EXPECT_LE(row["steps"].get<int>(), row["steps_planned"].get<int>()) << row.dump();
      }
    }
    if (reader.name.rfind("simulate", 0) == 0) {
      // The replay saw at least the two steps stored before it started, each a whole step.
      EXPECT_GE(j["settings"][0]["step_ms"].size(), 2u) << j.dump();
    }
  }
  ++reads_;
}

void ConcurrentDbTest::CheckStepsComplete() {
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(db_, Store::Mode::kReadOnly, &store).ok());
  std::vector<RunInfo> runs;
  ASSERT_TRUE(store->ListRuns(&runs).ok());
  for (const RunInfo& run : runs) {
    if (run.kind != autotune::RunKind::kMeasured) continue;
    Trace trace;
    const autotune::Status s = store->LoadTrace(run.id, &trace);
    ASSERT_TRUE(s.ok()) << s.message();
    for (const autotune::StepTrace& step : trace.steps) {
      ASSERT_EQ(step.tensors.size(), static_cast<size_t>(kTensors * kRanks))
          << "run " << run.id << " step " << step.step;
      std::vector<int> events(kTensors * kRanks, 0);
      for (const auto& e : step.tensors) ++events.at(e.rank * kTensors + e.tensor);
      EXPECT_EQ(std::count(events.begin(), events.end(), 1), kTensors * kRanks)
          << "run " << run.id << " step " << step.step << ": each rank's tensor once";
      EXPECT_FALSE(step.cycles.empty()) << "run " << run.id << " step " << step.step;
      EXPECT_FALSE(step.collectives.empty()) << "run " << run.id << " step " << step.step;
      ++trace_checks_;
    }
  }
}

void ConcurrentDbTest::RunWritersAndReaders(int64_t runs_before, int64_t calibrations_before) {
  std::vector<Started> writers;
  writers.push_back(Start("record_a", Record(kSteps)));
  writers.push_back(Start("record_b", Record(kSteps)));
  writers.push_back(Start("calibrate", Calibrate()));
  for (const Started& w : writers) ASSERT_GT(w.pid, 0);

  // Readers loop until every writer has ended; each round starts once a run exists.
  const auto give_up = Clock::now() + kDeadline;
  std::vector<int> codes(writers.size(), -1);
  size_t running = writers.size();
  while (running > 0 && Clock::now() < give_up) {
    if (QueryInt(db_, "SELECT count(*) FROM steps") > 0) {
      ReadOnce(reads_);
      CheckStepsComplete();
    }
    for (size_t i = 0; i < writers.size(); ++i) {
      int status = 0;
      if (codes[i] < 0 && waitpid(writers[i].pid, &status, WNOHANG) == writers[i].pid) {
        codes[i] = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        --running;
      }
    }
  }
  ASSERT_EQ(running, 0u) << "writers still running after the deadline";
  EXPECT_GT(reads_, 0) << "no reader ran while the writers wrote";
  std::printf("%d reader rounds, %d steps checked\n", reads_, trace_checks_);

  for (size_t i = 0; i < writers.size(); ++i) {
    const std::string err = ReadFile(writers[i].err);
    EXPECT_EQ(codes[i], 0) << writers[i].name << ":\n" << err;
    EXPECT_TRUE(NoLockError(err)) << writers[i].name << ":\n" << err;
  }
  // Nothing lost: each record's run holds exactly its planned steps, each step all its rows.
  for (const char* name : {"record_a", "record_b"}) {
    const nlohmann::json j =
        nlohmann::json::parse(ReadFile(dir_ / (std::string(name) + ".out")), nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << name;
    const std::string run = std::to_string(j["run"].get<int64_t>());
    EXPECT_EQ(j["complete"], true) << name;
    EXPECT_EQ(QueryInt(db_, "SELECT complete FROM runs WHERE id = " + run), 1) << name;
    EXPECT_EQ(QueryInt(db_, "SELECT count(*) FROM steps WHERE run_id = " + run), kSteps) << name;
    EXPECT_EQ(QueryInt(db_, "SELECT steps_recorded FROM runs WHERE id = " + run), kSteps);
    EXPECT_EQ(QueryInt(db_, "SELECT count(*) FROM tensor_events WHERE run_id = " + run),
              kSteps * kTensors * kRanks)
        << name;
  }
  const nlohmann::json cal =
      nlohmann::json::parse(ReadFile(dir_ / "calibrate.out"), nullptr, false);
  ASSERT_FALSE(cal.is_discarded());
  EXPECT_EQ(QueryInt(db_, "SELECT count(*) FROM calibration_points WHERE calibration_id = " +
                              std::to_string(cal["calibration"].get<int64_t>())) > 0,
            true);
  EXPECT_EQ(QueryInt(db_, "SELECT count(*) FROM calibrations"), calibrations_before + 1);
  EXPECT_EQ(QueryInt(db_, "SELECT count(*) FROM runs WHERE kind = 'measured'"), runs_before + 2);
  EXPECT_EQ(QueryText(db_, "PRAGMA integrity_check"), "ok");
  CheckStepsComplete();
}

TEST_F(ConcurrentDbTest, NewFile) {
  ASSERT_FALSE(fs::exists(db_));
  RunWritersAndReaders(0, 0);
}

TEST_F(ConcurrentDbTest, ExistingFile) {
  Started first = Start("first", Record(3));
  ASSERT_EQ(WaitCommand(first.pid), 0) << ReadFile(first.err);
  Started cal = Start("first_calibrate", Calibrate());
  ASSERT_EQ(WaitCommand(cal.pid), 0) << ReadFile(cal.err);
  baseline_run_ = QueryInt(db_, "SELECT min(id) FROM runs");
  ASSERT_GT(baseline_run_, 0);
  RunWritersAndReaders(1, 1);
}

}  // namespace
