// One transaction per command's write (Store::WriteBatch, Store::AddCompleteRun), reads that
// survive one bad row, the header's schema version, and a database not yet filled.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "store/store.h"

namespace autotune {
namespace {

class StoreAtomicTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("autotune_store_atomic_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "t.db").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A 1x2 run of two tensors with `steps` steps of 10 ms.
  static Trace MakeTrace(int steps) {
    Trace t;
    t.run.kind = RunKind::kImported;
    t.run.command = "autotune import";
    t.run.workload.name = "job";
    t.run.workload.backward_ms = 1;
    for (int i = 0; i < 2; ++i) {
      TensorSpec s;
      s.name = "w" + std::to_string(i);
      s.shape = {8};
      t.run.workload.tensors.push_back(s);
    }
    t.run.topology.nodes = 1;
    t.run.topology.ranks_per_node = 2;
    t.run.topology.hosts = {"n0"};
    t.run.steps_planned = steps;
    for (int k = 0; k < steps; ++k) {
      StepTrace st;
      st.step = k;
      st.step_ms = 10;
      st.bytes = 64;
      st.score_bytes_per_s = 6400;
      for (int rank = 0; rank < 2; ++rank) {
        for (int i = 0; i < 2; ++i) st.tensors.push_back({rank, i, 1.0, 2.0});
      }
      t.steps.push_back(st);
    }
    return t;
  }

  // Every table's row count and the integrity check, read through SQLite directly.
  std::string Rows() {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open_v2(path_.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    std::string out;
    for (const char* sql : {"PRAGMA integrity_check", "SELECT count(*) FROM runs",
                            "SELECT count(*) FROM tensors", "SELECT count(*) FROM steps",
                            "SELECT count(*) FROM tensor_events", "SELECT count(*) FROM samples"}) {
      sqlite3_stmt* q = nullptr;
      sqlite3_prepare_v2(db, sql, -1, &q, nullptr);
      if (sqlite3_step(q) == SQLITE_ROW) {
        out += reinterpret_cast<const char*>(sqlite3_column_text(q, 0));
        out += " ";
      }
      sqlite3_finalize(q);
    }
    sqlite3_close(db);
    return out;
  }

  void Exec(const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sql;
    sqlite3_close(db);
  }

  std::filesystem::path dir_;
  std::string path_;
};

TEST_F(StoreAtomicTest, CompleteRunIsStoredWhole) {
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(path_, Store::Mode::kReadWrite, &store).ok());
  Trace trace = MakeTrace(3);
  ASSERT_TRUE(store->AddCompleteRun(&trace).ok());
  EXPECT_EQ(trace.run.id, 1);
  EXPECT_TRUE(trace.run.complete);
  store.reset();
  // 1 run, 2 tensors, 3 steps, 3 x 2 ranks x 2 tensors events, 1 measured sample.
  EXPECT_EQ(Rows(), "ok 1 2 3 12 1 ");
}

TEST_F(StoreAtomicTest, ImportFailingAtItsLastStepLeavesTheDatabaseAsItWas) {
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(path_, Store::Mode::kReadWrite, &store).ok());
  Trace first = MakeTrace(2);
  ASSERT_TRUE(store->AddCompleteRun(&first).ok());
  const std::string before = Rows();
  Trace bad = MakeTrace(4);
  bad.steps[3].step = 2;  // a duplicate step: its insert fails after three steps were written
  const Status s = store->AddCompleteRun(&bad);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(bad.run.id, 0);
  store.reset();
  EXPECT_EQ(Rows(), before);
  // and the next write works
  ASSERT_TRUE(Store::Open(path_, Store::Mode::kReadWrite, &store).ok());
  Trace next = MakeTrace(1);
  ASSERT_TRUE(store->AddCompleteRun(&next).ok());
  EXPECT_EQ(next.run.id, 2);  // SQLite reuses the rolled-back id: nothing of it was kept
}

TEST_F(StoreAtomicTest, WorkloadThatWouldNotReadBackIsRefusedBeforeWriting) {
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(path_, Store::Mode::kReadWrite, &store).ok());
  for (const std::string& name :
       {std::string("a\nb"), std::string(5000, 'n'), std::string("bad\xff")}) {
    Trace trace = MakeTrace(1);
    trace.run.workload.name = name;
    const Status s = store->AddCompleteRun(&trace);
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << s.message();
    EXPECT_EQ(s.message().find('\n'), std::string::npos);
  }
  Trace huge = MakeTrace(1);
  huge.run.workload.tensors[0].shape = {int64_t{1} << 40, int64_t{1} << 40};
  EXPECT_EQ(store->AddCompleteRun(&huge).code(), Status::Code::kInvalidArgument);
  store.reset();
  EXPECT_EQ(Rows(), "ok 0 0 0 0 0 ");
}

TEST_F(StoreAtomicTest, BatchCommitsEverythingOrNothing) {
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(path_, Store::Mode::kReadWrite, &store).ok());
  {
    std::unique_ptr<Store::WriteBatch> batch = store->BeginWrite();
    ASSERT_TRUE(batch->status().ok());
    Trace a = MakeTrace(1), b = MakeTrace(1);
    ASSERT_TRUE(store->AddCompleteRun(&a).ok());
    ASSERT_TRUE(store->AddCompleteRun(&b).ok());
    // not committed
  }
  std::vector<RunInfo> runs;
  ASSERT_TRUE(store->ListRuns(&runs).ok());
  EXPECT_TRUE(runs.empty());
  {
    std::unique_ptr<Store::WriteBatch> batch = store->BeginWrite();
    Trace a = MakeTrace(1);
    ASSERT_TRUE(store->AddCompleteRun(&a).ok());
    Trace bad = MakeTrace(2);
    bad.steps[1].step = 0;
    EXPECT_FALSE(store->AddCompleteRun(&bad).ok());  // its part rolls back alone
    ASSERT_TRUE(batch->Commit().ok());
  }
  store.reset();
  EXPECT_EQ(Rows(), "ok 1 2 1 4 1 ");
}

TEST_F(StoreAtomicTest, OneBadRowDoesNotHideTheOthers) {
  {
    std::unique_ptr<Store> store;
    ASSERT_TRUE(Store::Open(path_, Store::Mode::kReadWrite, &store).ok());
    for (int i = 0; i < 3; ++i) {
      Trace t = MakeTrace(1);
      ASSERT_TRUE(store->AddCompleteRun(&t).ok());
    }
  }
  Exec("UPDATE runs SET workload_json = '{\"name\": 5}' WHERE id = 2");
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(path_, Store::Mode::kReadOnly, &store).ok());
  std::vector<RunInfo> runs;
  std::vector<Status> unreadable;
  ASSERT_TRUE(store->ListRuns(&runs, &unreadable).ok());
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].id, 1);
  EXPECT_EQ(runs[1].id, 3);
  ASSERT_EQ(unreadable.size(), 1u);
  EXPECT_NE(unreadable[0].message().find("run 2 workload_json"), std::string::npos)
      << unreadable[0].message();
  EXPECT_EQ(store->ListRuns(&runs).code(), Status::Code::kCorruption);  // without the list
}

TEST_F(StoreAtomicTest, NewerUserVersionIsRefusedBeforeAnythingIsWritten) {
  {
    std::unique_ptr<Store> store;
    ASSERT_TRUE(Store::Open(path_, Store::Mode::kReadWrite, &store).ok());
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* q = nullptr;
  sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &q, nullptr);
  ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(q, 0), kSchemaVersion);  // every new file carries it
  sqlite3_finalize(q);
  sqlite3_close(db);
  Exec("PRAGMA user_version = " + std::to_string(kSchemaVersion + 1));
  std::ifstream in(path_, std::ios::binary);
  const std::string before((std::istreambuf_iterator<char>(in)), {});
  for (Store::Mode mode : {Store::Mode::kReadWrite, Store::Mode::kReadOnly}) {
    std::unique_ptr<Store> store;
    const Status s = Store::Open(path_, mode, &store);
    EXPECT_EQ(s.code(), Status::Code::kNotSupported) << s.message();
    EXPECT_NE(s.message().find("PRAGMA user_version"), std::string::npos) << s.message();
  }
  std::ifstream again(path_, std::ios::binary);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(again)), {}), before);
}

TEST_F(StoreAtomicTest, FileNotYetFilledReadsAsEmpty) {
  { std::ofstream touch(path_); }  // what a creator's open leaves before its schema commits
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(path_, Store::Mode::kReadOnly, &store).ok());
  std::vector<RunInfo> runs;
  ASSERT_TRUE(store->ListRuns(&runs).ok());
  EXPECT_TRUE(runs.empty());
  std::vector<Calibration> calibrations;
  EXPECT_TRUE(store->ListCalibrations(&calibrations).ok());
  EXPECT_EQ(store->GetRun(1, &runs.emplace_back()).code(), Status::Code::kNotFound);
  store.reset();
  EXPECT_EQ(std::filesystem::file_size(path_), 0u);  // the reader wrote nothing
}

TEST_F(StoreAtomicTest, Version4DatabaseGainsTheSourceHashColumn) {
  {
    std::unique_ptr<Store> store;
    ASSERT_TRUE(Store::Open(path_, Store::Mode::kReadWrite, &store).ok());
    Trace t = MakeTrace(1);
    t.run.source_hash = "0123456789abcdef";
    ASSERT_TRUE(store->AddCompleteRun(&t).ok());
  }
  // What version 4 wrote: no source_hash column, no user_version.
  Exec(
      "CREATE TABLE runs_v4 AS SELECT id, created_at, kind, command, workload_name, "
      "workload_json, scale, fusion_threshold_mb, cycle_time_ms, cache_capacity, "
      "hierarchical_allreduce, hierarchical_allgather, num_groups, knobs_json, nodes, "
      "ranks_per_node, hosts_json, backend, hardware, steps_planned, warmup_steps, complete, "
      "steps_recorded, score_bytes_per_s, step_ms_median, step_ms_p95, source_run, end_reason, "
      "framework FROM runs; DROP TABLE runs; ALTER TABLE runs_v4 RENAME TO runs; "
      "ALTER TABLE calibrations DROP COLUMN tcp_eager_limit; "
      "PRAGMA user_version = 0; UPDATE meta SET value = '4' WHERE key = 'schema_version'");
  {
    std::unique_ptr<Store> reader;
    ASSERT_TRUE(Store::Open(path_, Store::Mode::kReadOnly, &reader).ok());
    RunInfo run;
    ASSERT_TRUE(reader->GetRun(1, &run).ok());
    EXPECT_EQ(run.source_hash, "");
  }
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(path_, Store::Mode::kReadWrite, &store).ok());
  RunInfo run;
  ASSERT_TRUE(store->GetRun(1, &run).ok());
  EXPECT_EQ(run.source_hash, "");  // the migration keeps the run; its hash is unknown
  EXPECT_EQ(store->FindRunBySourceHash("0123456789abcdef", &run).code(), Status::Code::kNotFound);
  Trace t = MakeTrace(1);
  t.run.source_hash = "feedface00000000";
  ASSERT_TRUE(store->AddCompleteRun(&t).ok());
  ASSERT_TRUE(store->FindRunBySourceHash("feedface00000000", &run).ok());
  EXPECT_EQ(run.id, 2);
  store.reset();
  EXPECT_EQ(Rows(), "ok 2 4 2 8 2 ");
}

}  // namespace
}  // namespace autotune
