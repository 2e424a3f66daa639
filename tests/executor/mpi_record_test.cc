// RunRecord on 4 ranks writes the rows it should; bad input is agreed on every rank and
// leaves no database behind.
#include <gtest/gtest.h>
#include <mpi.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "engine_harness.h"
#include "executor/backend_choice.h"
#include "executor/nccl/nccl_factory.h"
#include "executor/record.h"

namespace autotune::executor {
namespace {

using test_support::AllRanksOk;

// A fresh directory made by rank 0, known to every rank.
std::string SharedTempDir() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char path[256] = {};
  if (rank == 0) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "autotune_exec_XXXXXX").string();
    tmpl.copy(path, sizeof(path) - 1);
    if (mkdtemp(path) == nullptr) path[0] = '\0';
  }
  MPI_Bcast(path, sizeof(path), MPI_CHAR, 0, MPI_COMM_WORLD);
  return path;
}

int64_t QueryInt(sqlite3* db, const std::string& sql) {
  sqlite3_stmt* stmt = nullptr;
  int64_t v = -1;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
      sqlite3_step(stmt) == SQLITE_ROW) {
    v = sqlite3_column_int64(stmt, 0);
  }
  sqlite3_finalize(stmt);
  return v;
}

std::vector<std::string> QueryTexts(sqlite3* db, const std::string& sql) {
  std::vector<std::string> out;
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK) {
    while (sqlite3_step(stmt) == SQLITE_ROW) {
      out.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)));
    }
  }
  sqlite3_finalize(stmt);
  return out;
}

TEST(RecordTest, Resnet50WritesEveryRow) {
  const std::string dir = SharedTempDir();
  ASSERT_FALSE(dir.empty());
  RecordOptions options;
  options.workload = "resnet50";
  options.scale = 0.02;
  options.steps = 3;
  options.warmup_steps = 1;
  options.db_path = dir + "/runs.db";
  options.command = "mpi_record_test";
  options.stop_on_signal = false;
  options.knobs.fusion_threshold_mb = 1;
  options.knobs.cycle_time_ms = 2;
  RecordResult result;
  ASSERT_TRUE(AllRanksOk(RunRecord(options, &result)));
  EXPECT_EQ(result.steps_run, 3);
  EXPECT_EQ(result.steps_verified, 2);  // first and last
  EXPECT_GT(result.run.id, 0);
  EXPECT_EQ(result.run.knobs.fusion_threshold_mb, 1.0);
  EXPECT_EQ(result.run.knobs.cycle_time_ms, 2.0);

  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0) {
    EXPECT_TRUE(result.run.complete);
    EXPECT_EQ(result.run.steps_recorded, 3);
    EXPECT_GT(result.run.score_bytes_per_s, 0.0);
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open_v2(options.db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr),
              SQLITE_OK);
    const std::string run = std::to_string(result.run.id);
    EXPECT_EQ(QueryInt(db, "SELECT complete FROM runs WHERE id=" + run), 1);
    EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM steps WHERE run_id=" + run), 3);
    EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM tensors WHERE run_id=" + run), 161);
    EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM tensor_events WHERE run_id=" + run),
              3 * size * 161);
    EXPECT_EQ(QueryInt(db, "SELECT COUNT(DISTINCT rank) FROM tensor_events WHERE run_id=" + run),
              size);
    EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM tensor_events WHERE run_id=" + run +
                               " AND done_us < ready_us"),
              0);
    EXPECT_EQ(QueryInt(db, "SELECT COUNT(DISTINCT step) FROM cycles WHERE run_id=" + run), 3);
    EXPECT_EQ(QueryInt(db, "SELECT SUM(responses) FROM cycles WHERE run_id=" + run), 3 * 161);
    EXPECT_EQ(QueryInt(db, "SELECT nodes * ranks_per_node FROM runs WHERE id=" + run), size);
    for (int step = 0; step < 3; ++step) {
      const std::vector<std::string> lists =
          QueryTexts(db, "SELECT tensors FROM collectives WHERE run_id=" + run +
                             " AND step=" + std::to_string(step) + " ORDER BY seq");
      EXPECT_FALSE(lists.empty());
      std::multiset<int> members;
      for (const std::string& list : lists) {
        std::stringstream in(list);
        for (std::string item; std::getline(in, item, ',');) members.insert(std::stoi(item));
      }
      EXPECT_EQ(members.size(), 161u) << "step " << step;
      for (int t = 0; t < 161; ++t) EXPECT_EQ(members.count(t), 1u) << "tensor " << t;
    }
    sqlite3_close(db);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) std::filesystem::remove_all(dir);
}

TEST(RecordTest, BadInputFailsOnEveryRankBeforeTheDatabase) {
  const std::string dir = SharedTempDir();
  ASSERT_FALSE(dir.empty());
  struct Case {
    std::string workload;
    double threshold_mb;
    int steps;
    std::string expect;  // a word the message must contain
    std::string backend = "mpi";
  };
  std::vector<Case> cases = {
      {"no-such-model", 128, 5, "no-such-model"},
      {"resnet50", 1000, 5, "fusion_threshold_mb"},
      {"resnet50", 128, 0, "--steps"},
      {dir + "/missing.json", 128, 5, "missing.json"},
      {"resnet50", 128, 5, "--backend bogus: unknown backend", "bogus"},
  };
  // Where NCCL cannot run (no GPU, or no NCCL in the build), every rank refuses it first.
  if (!NcclAvailable().ok()) cases.push_back({"resnet50", 128, 5, "--backend nccl: ", "nccl"});
  for (const Case& c : cases) {
    RecordOptions options;
    options.workload = c.workload;
    options.knobs.fusion_threshold_mb = c.threshold_mb;
    options.steps = c.steps;
    options.db_path = dir + "/never.db";
    options.stop_on_signal = false;
    RecordResult result;
    // A name no backend has is refused where --backend is read.
    Status st = ParseBackendFlag(c.backend, &options.backend);
    if (st.ok()) st = RunRecord(options, &result);
    EXPECT_FALSE(st.ok()) << c.workload;
    EXPECT_NE(st.message().find(c.expect), std::string::npos) << st.message();
    EXPECT_EQ(st.message().find('\n'), std::string::npos) << "one line";
    EXPECT_FALSE(std::filesystem::exists(options.db_path)) << st.message();
  }
  MPI_Barrier(MPI_COMM_WORLD);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace autotune::executor
