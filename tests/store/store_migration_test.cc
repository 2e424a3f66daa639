// Schema version 1 -> 2: a version-1 database (runs.kind without 'imported') is read as it is
// read-only and migrated by a read-write open, its rows and ids kept; and imported runs are
// stored and become measured samples like recorded ones. Version 2 -> 3 (runs.end_reason):
// the same, the reason read as '' until migrated. Version 6 -> 7 (runs.traced_step_ms): read
// as 0 until migrated, then stored. Version 7 -> 8 (calibrations.tcp_eager_limit): an old
// calibrate reads as made at Open MPI's own limit, before and after the migration.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "store/store.h"

namespace autotune {
namespace {

// Version 1's runs table, verbatim (comments left out) but for the name it is built under.
constexpr const char* kRunsV1 = R"sql(
CREATE TABLE runs_v1 (
  id                     INTEGER PRIMARY KEY,
  created_at             TEXT NOT NULL,
  kind                   TEXT NOT NULL CHECK (kind IN ('measured', 'simulated')),
  command                TEXT NOT NULL,
  workload_name          TEXT NOT NULL,
  workload_json          TEXT NOT NULL,
  scale                  REAL NOT NULL,
  fusion_threshold_mb    REAL NOT NULL,
  cycle_time_ms          REAL NOT NULL,
  cache_capacity         INTEGER NOT NULL,
  hierarchical_allreduce INTEGER NOT NULL,
  hierarchical_allgather INTEGER NOT NULL,
  num_groups             INTEGER NOT NULL,
  knobs_json             TEXT NOT NULL,
  nodes                  INTEGER NOT NULL,
  ranks_per_node         INTEGER NOT NULL,
  hosts_json             TEXT NOT NULL,
  backend                TEXT NOT NULL,
  hardware               TEXT NOT NULL,
  steps_planned          INTEGER NOT NULL,
  warmup_steps           INTEGER NOT NULL,
  complete               INTEGER NOT NULL DEFAULT 0,
  steps_recorded         INTEGER NOT NULL DEFAULT 0,
  score_bytes_per_s      REAL,
  step_ms_median         REAL,
  step_ms_p95            REAL,
  source_run             INTEGER REFERENCES runs (id)
);)sql";

// The columns of runs in versions 1 and 2 (version 3 added end_reason).
constexpr const char* kRunsV2Columns =
    "id, created_at, kind, command, workload_name, workload_json, scale, fusion_threshold_mb, "
    "cycle_time_ms, cache_capacity, hierarchical_allreduce, hierarchical_allgather, num_groups, "
    "knobs_json, nodes, ranks_per_node, hosts_json, backend, hardware, steps_planned, "
    "warmup_steps, complete, steps_recorded, score_bytes_per_s, step_ms_median, step_ms_p95, "
    "source_run";

class StoreMigrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("autotune_migration_test_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "v1.db").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  static RunInfo TinyRun(RunKind kind) {
    RunInfo r;
    r.kind = kind;
    r.command = "autotune record";
    r.workload.name = "tiny";
    r.workload.backward_ms = 1;
    TensorSpec t;
    t.name = "w";
    t.shape = {4};
    r.workload.tensors.push_back(t);
    r.topology.nodes = 2;
    r.topology.ranks_per_node = 2;
    r.steps_planned = 1;
    return r;
  }

  void Exec(sqlite3* db, const std::string& sql) {
    char* err = nullptr;
    ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK)
        << sql << ": " << (err ? err : "");
  }

  // A version-1 database holding runs 3 (measured) and 7 (simulated, of run 3): made by the
  // store, then its runs table rebuilt with version 1's DDL (the way SQLite's documentation
  // says to change a table's schema) and the version set back to 1.
  void MakeVersion1() {
    {
      std::unique_ptr<Store> store;
      ASSERT_TRUE(Store::Open(path_, Store::Mode::kReadWrite, &store).ok());
      RunInfo measured = TinyRun(RunKind::kMeasured);
      RunInfo simulated = TinyRun(RunKind::kSimulated);
      ASSERT_TRUE(store->CreateRun(&measured).ok());
      ASSERT_TRUE(store->CreateRun(&simulated).ok());
    }
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    Exec(db, "BEGIN");
    Exec(db, kRunsV1);
    Exec(db, std::string("INSERT INTO runs_v1 SELECT ") + kRunsV2Columns +
                 " FROM runs; DROP TABLE runs;");
    Exec(db, "ALTER TABLE runs_v1 RENAME TO runs");
    Exec(db,
         "UPDATE runs SET id = 3 WHERE id = 1; UPDATE runs SET id = 7, source_run = 3 "
         "WHERE id = 2; UPDATE tensors SET run_id = CASE run_id WHEN 1 THEN 3 ELSE 7 END;");
    Exec(db, "ALTER TABLE calibrations DROP COLUMN tcp_eager_limit;");
    Exec(db, "UPDATE meta SET value = '1' WHERE key = 'schema_version'; COMMIT;");
    sqlite3_close(db);
  }

  std::string Query(const std::string& sql) {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open_v2(path_.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    sqlite3_stmt* stmt = nullptr;
    std::string out;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW) {
      const unsigned char* text = sqlite3_column_text(stmt, 0);
      out = text ? reinterpret_cast<const char*>(text) : "";
    }
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return out;
  }

  std::filesystem::path dir_;
  std::string path_;
};

TEST_F(StoreMigrationTest, ReadOnlyReadsVersion1AsItIs) {
  MakeVersion1();
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(path_, Store::Mode::kReadOnly, &store).ok());
  RunInfo run;
  ASSERT_TRUE(store->GetRun(7, &run).ok());
  EXPECT_EQ(run.kind, RunKind::kSimulated);
  EXPECT_EQ(run.source_run, 3);
  store.reset();
  EXPECT_EQ(Query("SELECT value FROM meta WHERE key = 'schema_version'"), "1");
}

TEST_F(StoreMigrationTest, ReadWriteMigratesKeepingRowsAndIds) {
  MakeVersion1();
  const std::string created = Query("SELECT created_at FROM runs WHERE id = 3");
  std::unique_ptr<Store> store;
  const Status opened = Store::Open(path_, Store::Mode::kReadWrite, &store);
  ASSERT_TRUE(opened.ok()) << opened.message();
  std::vector<RunInfo> runs;
  ASSERT_TRUE(store->ListRuns(&runs).ok());
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].id, 3);
  EXPECT_EQ(runs[0].kind, RunKind::kMeasured);
  EXPECT_EQ(runs[0].created_at, created);
  EXPECT_EQ(runs[0].topology.key(), "2x2");
  EXPECT_EQ(runs[1].id, 7);
  EXPECT_EQ(runs[1].source_run, 3);
  // Now an imported run can be stored; complete, it is a measured sample.
  RunInfo imported = TinyRun(RunKind::kImported);
  ASSERT_TRUE(store->CreateRun(&imported).ok());
  EXPECT_EQ(imported.id, 8);
  StepTrace step;
  step.step_ms = 2.0;
  step.bytes = 16;
  for (int rank = 0; rank < 4; ++rank) step.tensors.push_back({rank, 0, 0.5, 1.0});
  ASSERT_TRUE(store->AppendStep(imported.id, step).ok());
  ASSERT_TRUE(store->FinishRun(imported.id, true).ok());
  RunInfo back;
  ASSERT_TRUE(store->GetRun(imported.id, &back).ok());
  EXPECT_EQ(back.kind, RunKind::kImported);
  std::vector<Sample> samples;
  ASSERT_TRUE(store->ListSamples("tiny", imported.topology, &samples).ok());
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].fidelity, Fidelity::kMeasured);
  EXPECT_EQ(samples[0].run_id, imported.id);
  EXPECT_DOUBLE_EQ(samples[0].score_bytes_per_s, 16 / 2e-3);
  store.reset();
  EXPECT_EQ(Query("SELECT value FROM meta WHERE key = 'schema_version'"),
            std::to_string(kSchemaVersion));
  EXPECT_NE(Query("SELECT sql FROM sqlite_master WHERE name = 'runs'").find("'imported'"),
            std::string::npos);
  EXPECT_EQ(Query("PRAGMA integrity_check"), "ok");
  EXPECT_EQ(Query("SELECT count(*) FROM sqlite_master WHERE name LIKE 'runs_%'"), "0");
}

TEST_F(StoreMigrationTest, Version2IsReadAsItIsAndMigratedToHoldEndReasons) {
  {
    std::unique_ptr<Store> store;
    ASSERT_TRUE(Store::Open(path_, Store::Mode::kReadWrite, &store).ok());
    RunInfo run = TinyRun(RunKind::kMeasured);
    ASSERT_TRUE(store->CreateRun(&run).ok());
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  // Version 2's runs: version 3's without end_reason.
  Exec(db, std::string("BEGIN; CREATE TABLE runs_v2 AS SELECT ") + kRunsV2Columns +
               " FROM runs; DROP TABLE runs; ALTER TABLE runs_v2 RENAME TO runs;");
  Exec(db, "ALTER TABLE calibrations DROP COLUMN tcp_eager_limit;");
  Exec(db, "UPDATE meta SET value = '2' WHERE key = 'schema_version'; COMMIT;");
  sqlite3_close(db);

  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(path_, Store::Mode::kReadOnly, &store).ok());
  RunInfo run;
  const Status read = store->GetRun(1, &run);
  ASSERT_TRUE(read.ok()) << read.message();
  EXPECT_EQ(run.end_reason, "");
  EXPECT_EQ(run.framework, Framework::kHorovod);
  store.reset();
  EXPECT_EQ(Query("SELECT value FROM meta WHERE key = 'schema_version'"), "2");

  ASSERT_TRUE(Store::Open(path_, Store::Mode::kReadWrite, &store).ok());
  ASSERT_TRUE(store->SetEndReason(1, "rank 3 on node1 died (signal 9, Killed)").ok());
  ASSERT_TRUE(store->SetEndReason(1, "a later reason is not stored").ok());
  EXPECT_EQ(store->SetEndReason(99, "x").code(), Status::Code::kNotFound);
  ASSERT_TRUE(store->GetRun(1, &run).ok());
  EXPECT_EQ(run.end_reason, "rank 3 on node1 died (signal 9, Killed)");
  EXPECT_EQ(run.workload.name, "tiny");
  EXPECT_EQ(run.framework, Framework::kHorovod);  // every run before version 4 was Horovod's
  store.reset();
  EXPECT_EQ(Query("SELECT value FROM meta WHERE key = 'schema_version'"),
            std::to_string(kSchemaVersion));
  EXPECT_EQ(Query("PRAGMA integrity_check"), "ok");
}

TEST_F(StoreMigrationTest, Version1RejectsImportedRunsUntilMigrated) {
  MakeVersion1();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  // The CHECK this migration exists for: version 1 refuses the kind.
  EXPECT_NE(
      sqlite3_exec(db, "UPDATE runs SET kind = 'imported' WHERE id = 3", nullptr, nullptr, nullptr),
      SQLITE_OK);
  sqlite3_close(db);
}

// What version 6 wrote: runs without traced_step_ms. Read-only it reads as 0 and the file is
// left as it is; a read-write open adds the column (rows and ids kept) and stores it.
TEST_F(StoreMigrationTest, Version6GainsTheTracedStepTime) {
  {
    std::unique_ptr<Store> store;
    ASSERT_TRUE(Store::Open(path_, Store::Mode::kReadWrite, &store).ok());
    RunInfo imported = TinyRun(RunKind::kImported);
    imported.untraced_step_ms = 41.5;
    ASSERT_TRUE(store->CreateRun(&imported).ok());
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  Exec(db, "ALTER TABLE runs DROP COLUMN traced_step_ms; PRAGMA user_version = 6; "
           "ALTER TABLE calibrations DROP COLUMN tcp_eager_limit; "
           "UPDATE meta SET value = '6' WHERE key = 'schema_version'");
  sqlite3_close(db);
  // Run 1 as version 6 stored it, its traced step time read as not known.
  auto expect_old_run = [](Store* store) {
    RunInfo run;
    ASSERT_TRUE(store->GetRun(1, &run).ok());
    EXPECT_EQ(run.traced_step_ms, 0.0);
    EXPECT_EQ(run.untraced_step_ms, 41.5);
  };
  {
    std::unique_ptr<Store> reader;
    ASSERT_TRUE(Store::Open(path_, Store::Mode::kReadOnly, &reader).ok());
    expect_old_run(reader.get());
  }
  EXPECT_EQ(Query("SELECT value FROM meta WHERE key = 'schema_version'"), "6");
  EXPECT_EQ(Query("SELECT count(*) FROM pragma_table_info('runs') WHERE name = "
                  "'traced_step_ms'"),
            "0");
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(path_, Store::Mode::kReadWrite, &store).ok());
  expect_old_run(store.get());
  RunInfo imported = TinyRun(RunKind::kImported);
  imported.traced_step_ms = 52.25;
  ASSERT_TRUE(store->CreateRun(&imported).ok());
  EXPECT_EQ(imported.id, 2);
  RunInfo back;
  ASSERT_TRUE(store->GetRun(2, &back).ok());
  EXPECT_EQ(back.traced_step_ms, 52.25);
  store.reset();
  EXPECT_EQ(Query("SELECT value FROM meta WHERE key = 'schema_version'"),
            std::to_string(kSchemaVersion));
  EXPECT_EQ(Query("PRAGMA user_version"), std::to_string(kSchemaVersion));
  EXPECT_EQ(Query("PRAGMA integrity_check"), "ok");
}

// What version 7 wrote: calibrations without tcp_eager_limit, points without mean_us. Read-only an old calibrate
// is one at Open MPI's own limit (0) and the file is left as it is; a read-write open adds the
// column, and a calibrate at another limit is found by its limit only.
TEST_F(StoreMigrationTest, Version7CalibrationsGainTheEagerLimit) {
  Calibration old;
  old.topology.nodes = 2;
  old.topology.ranks_per_node = 2;
  old.hardware = "cpu";
  old.points.push_back({.op = Op::kAllreduce, .scope = Scope::kWorld, .ranks = 4,
                        .bytes = 262144, .repetitions = 3, .median_us = 3370.0,
                        .min_us = 3000.0, .max_us = 9000.0});
  {
    std::unique_ptr<Store> store;
    ASSERT_TRUE(Store::Open(path_, Store::Mode::kReadWrite, &store).ok());
    ASSERT_TRUE(store->SaveCalibration(&old).ok());
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  Exec(db, "ALTER TABLE calibrations DROP COLUMN tcp_eager_limit; PRAGMA user_version = 7; "
           "ALTER TABLE calibration_points DROP COLUMN mean_us; "
           "UPDATE meta SET value = '7' WHERE key = 'schema_version'");
  sqlite3_close(db);
  auto expect_old = [&](Store* store) {
    Calibration found;
    ASSERT_TRUE(store->FindCalibration(old.topology, BackendKind::kMpi, &found).ok());
    EXPECT_EQ(found.id, old.id);
    EXPECT_EQ(found.mpi_tcp_eager_limit, 0);
    ASSERT_EQ(found.points.size(), 1u);
    EXPECT_EQ(found.points[0].median_us, 3370.0);
    EXPECT_EQ(found.points[0].mean_us, 0.0);  // not measured then
    EXPECT_EQ(store->FindCalibration(old.topology, BackendKind::kMpi, &found, 131072).code(),
              Status::Code::kNotFound);
  };
  {
    std::unique_ptr<Store> reader;
    ASSERT_TRUE(Store::Open(path_, Store::Mode::kReadOnly, &reader).ok());
    expect_old(reader.get());
    std::vector<Calibration> listed;
    ASSERT_TRUE(reader->ListCalibrations(&listed).ok());
    ASSERT_EQ(listed.size(), 1u);
    EXPECT_EQ(listed[0].mpi_tcp_eager_limit, 0);
  }
  EXPECT_EQ(Query("SELECT value FROM meta WHERE key = 'schema_version'"), "7");
  EXPECT_EQ(Query("SELECT count(*) FROM pragma_table_info('calibrations') WHERE name = "
                  "'tcp_eager_limit'"),
            "0");
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(path_, Store::Mode::kReadWrite, &store).ok());
  expect_old(store.get());
  Calibration eager = old;
  eager.mpi_tcp_eager_limit = 131072;
  eager.points[0].median_us = 2200.0;
  eager.points[0].mean_us = 2250.5;
  ASSERT_TRUE(store->SaveCalibration(&eager).ok());
  EXPECT_GT(eager.id, old.id);
  Calibration found;
  ASSERT_TRUE(store->FindCalibration(old.topology, BackendKind::kMpi, &found, 131072).ok());
  EXPECT_EQ(found.id, eager.id);
  EXPECT_EQ(found.mpi_tcp_eager_limit, 131072);
  EXPECT_EQ(found.points[0].median_us, 2200.0);
  EXPECT_EQ(found.points[0].mean_us, 2250.5);
  // The newer calibrate at another limit does not stand in for the job's default one.
  ASSERT_TRUE(store->FindCalibration(old.topology, BackendKind::kMpi, &found).ok());
  EXPECT_EQ(found.id, old.id);
  store.reset();
  EXPECT_EQ(Query("PRAGMA user_version"), std::to_string(kSchemaVersion));
  EXPECT_EQ(Query("PRAGMA integrity_check"), "ok");
}

}  // namespace
}  // namespace autotune
