#include "store/store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

namespace autotune {
namespace {

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("autotune_store_test_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "t.db").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  static RunInfo MakeRun() {
    RunInfo r;
    r.command = "autotune record";
    r.workload.name = "tiny";
    r.workload.backward_ms = 2;
    for (int i = 0; i < 3; ++i) {
      TensorSpec t;
      t.name = "w" + std::to_string(i);
      t.shape = {4, i + 1};
      t.ready_ms = i * 0.5;
      r.workload.tensors.push_back(t);
    }
    r.knobs.fusion_threshold_mb = 64;
    r.topology.nodes = 2;
    r.topology.ranks_per_node = 2;
    r.topology.hosts = {"n0", "n1"};
    r.steps_planned = 2;
    return r;
  }

  static StepTrace MakeStep(int step, double step_ms) {
    StepTrace s;
    s.step = step;
    s.step_ms = step_ms;
    s.bytes = 1000;
    s.score_bytes_per_s = 1000 / (step_ms / 1000);
    for (int rank = 0; rank < 4; ++rank) {
      for (int t = 0; t < 3; ++t) s.tensors.push_back({rank, t, 10.0 * t, 10.0 * t + 5});
    }
    s.cycles.push_back({0, 0, 1.0, 2.0, 3, 1, 3, 2});
    CollectiveRecord c;
    c.seq = 0;
    c.bytes = 48;
    c.tensors = {0, 1};
    c.algorithm = Algorithm::kHierarchical;
    c.start_us = 2;
    c.copy_in_end_us = 3;
    c.comm_end_us = 9;
    c.end_us = 10;
    s.collectives.push_back(c);
    c.seq = 1;
    c.tensors = {2};
    s.collectives.push_back(c);
    return s;
  }

  std::string FileBytes() {
    std::ifstream in(path_, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  std::filesystem::path dir_;
  std::string path_;
};

TEST_F(StoreTest, RoundTripsARunAndItsTrace) {
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(path_, Store::Mode::kReadWrite, &store).ok());
  RunInfo run = MakeRun();
  ASSERT_TRUE(store->CreateRun(&run).ok());
  EXPECT_GT(run.id, 0);
  EXPECT_FALSE(run.created_at.empty());
  ASSERT_TRUE(store->AppendStep(run.id, MakeStep(0, 10)).ok());
  ASSERT_TRUE(store->AppendStep(run.id, MakeStep(1, 20)).ok());
  RunInfo summary;
  ASSERT_TRUE(store->FinishRun(run.id, true, &summary).ok());
  EXPECT_TRUE(summary.complete);
  EXPECT_EQ(summary.steps_recorded, 2);
  EXPECT_DOUBLE_EQ(summary.step_ms_median, 15);
  EXPECT_DOUBLE_EQ(summary.step_ms_p95, 20);
  EXPECT_DOUBLE_EQ(summary.score_bytes_per_s, 2000 / 0.030);

  Trace trace;
  Status s = store->LoadTrace(run.id, &trace);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(trace.run.knobs.fusion_threshold_mb, 64);
  EXPECT_EQ(trace.run.topology.hosts, (std::vector<std::string>{"n0", "n1"}));
  EXPECT_EQ(trace.run.workload.tensors.size(), 3u);
  ASSERT_EQ(trace.steps.size(), 2u);
  EXPECT_EQ(trace.steps[1].tensors.size(), 12u);
  EXPECT_DOUBLE_EQ(trace.steps[1].tensors[5].done_us, 25);
  ASSERT_EQ(trace.steps[0].collectives.size(), 2u);
  EXPECT_EQ(trace.steps[0].collectives[0].tensors, (std::vector<int>{0, 1}));
  EXPECT_EQ(trace.steps[0].collectives[0].algorithm, Algorithm::kHierarchical);
  EXPECT_EQ(trace.steps[0].cycles[0].cache_hits, 1);

  std::vector<Sample> samples;
  ASSERT_TRUE(store->ListSamples("tiny", run.topology, &samples).ok());
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].fidelity, Fidelity::kMeasured);
  EXPECT_EQ(samples[0].run_id, run.id);
}

TEST_F(StoreTest, IncompleteRunKeepsStepsAndIsNoSample) {
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(path_, Store::Mode::kReadWrite, &store).ok());
  RunInfo run = MakeRun();
  ASSERT_TRUE(store->CreateRun(&run).ok());
  ASSERT_TRUE(store->AppendStep(run.id, MakeStep(0, 10)).ok());
  ASSERT_TRUE(store->FinishRun(run.id, false).ok());
  RunInfo back;
  ASSERT_TRUE(store->GetRun(run.id, &back).ok());
  EXPECT_FALSE(back.complete);
  EXPECT_EQ(back.steps_recorded, 1);
  std::vector<Sample> samples;
  ASSERT_TRUE(store->ListSamples("tiny", run.topology, &samples).ok());
  EXPECT_TRUE(samples.empty());
}

TEST_F(StoreTest, DuplicateStepIsRejectedWholeAndLeavesNothing) {
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(path_, Store::Mode::kReadWrite, &store).ok());
  RunInfo run = MakeRun();
  ASSERT_TRUE(store->CreateRun(&run).ok());
  ASSERT_TRUE(store->AppendStep(run.id, MakeStep(0, 10)).ok());
  EXPECT_FALSE(store->AppendStep(run.id, MakeStep(0, 30)).ok());
  Trace trace;
  ASSERT_TRUE(store->LoadTrace(run.id, &trace).ok());
  ASSERT_EQ(trace.steps.size(), 1u);
  EXPECT_EQ(trace.steps[0].tensors.size(), 12u);  // the second attempt rolled back whole
  RunInfo back;
  ASSERT_TRUE(store->GetRun(run.id, &back).ok());
  EXPECT_EQ(back.steps_recorded, 1);
}

TEST_F(StoreTest, UnknownRunIsNotFound) {
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(path_, Store::Mode::kReadWrite, &store).ok());
  RunInfo info;
  Status s = store->GetRun(42, &info);
  EXPECT_EQ(s.code(), Status::Code::kNotFound);
  EXPECT_NE(s.message().find("run 42"), std::string::npos);
}

TEST_F(StoreTest, ForeignSqliteDatabaseIsRefusedUntouched) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  sqlite3_exec(db, "CREATE TABLE people (name TEXT); INSERT INTO people VALUES ('ada');", nullptr,
               nullptr, nullptr);
  sqlite3_close(db);
  std::string before = FileBytes();
  std::unique_ptr<Store> store;
  Status s = Store::Open(path_, Store::Mode::kReadWrite, &store);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("not an autotune database"), std::string::npos) << s.message();
  EXPECT_EQ(FileBytes(), before);
  EXPECT_FALSE(std::filesystem::exists(path_ + "-wal"));
}

TEST_F(StoreTest, NonSqliteFileIsRefusedUntouched) {
  { std::ofstream(path_) << "just some text, not a database\n"; }
  std::string before = FileBytes();
  std::unique_ptr<Store> store;
  Status s = Store::Open(path_, Store::Mode::kReadWrite, &store);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("not an autotune database"), std::string::npos) << s.message();
  EXPECT_EQ(FileBytes(), before);
}

TEST_F(StoreTest, NewerSchemaIsRefused) {
  {
    std::unique_ptr<Store> store;
    ASSERT_TRUE(Store::Open(path_, Store::Mode::kReadWrite, &store).ok());
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  sqlite3_exec(db, "UPDATE meta SET value = '99' WHERE key = 'schema_version'", nullptr, nullptr,
               nullptr);
  sqlite3_close(db);
  std::unique_ptr<Store> store;
  Status s = Store::Open(path_, Store::Mode::kReadWrite, &store);
  EXPECT_EQ(s.code(), Status::Code::kNotSupported);
  EXPECT_NE(s.message().find("schema version 99"), std::string::npos) << s.message();
}

TEST_F(StoreTest, UnwritablePathFailsWithOneLine) {
  std::unique_ptr<Store> store;
  Status s = Store::Open((dir_ / "missing" / "x.db").string(), Store::Mode::kReadWrite, &store);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cannot open database"), std::string::npos) << s.message();
  EXPECT_EQ(s.message().find('\n'), std::string::npos);
}

TEST_F(StoreTest, ReadOnlyOfMissingFileIsNotFoundAndCreatesNothing) {
  std::unique_ptr<Store> store;
  Status s = Store::Open(path_, Store::Mode::kReadOnly, &store);
  EXPECT_EQ(s.code(), Status::Code::kNotFound);
  EXPECT_FALSE(std::filesystem::exists(path_));
}

TEST_F(StoreTest, CorruptTraceRowIsReportedByTable) {
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(path_, Store::Mode::kReadWrite, &store).ok());
  RunInfo run = MakeRun();
  ASSERT_TRUE(store->CreateRun(&run).ok());
  ASSERT_TRUE(store->AppendStep(run.id, MakeStep(0, 10)).ok());
  store.reset();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  sqlite3_exec(db, "UPDATE collectives SET tensors = '0,x' WHERE seq = 0", nullptr, nullptr,
               nullptr);
  sqlite3_close(db);
  ASSERT_TRUE(Store::Open(path_, Store::Mode::kReadOnly, &store).ok());
  Trace trace;
  Status s = store->LoadTrace(run.id, &trace);
  EXPECT_EQ(s.code(), Status::Code::kCorruption);
  EXPECT_NE(s.message().find("collectives"), std::string::npos) << s.message();
}

// The enums are stored as their names, so databases written before them read the same.
TEST_F(StoreTest, RunKindAndBackendAreStoredAsTheirNames) {
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(path_, Store::Mode::kReadWrite, &store).ok());
  RunInfo run = MakeRun();
  run.kind = RunKind::kSimulated;
  run.backend = BackendKind::kNccl;
  ASSERT_TRUE(store->CreateRun(&run).ok());
  Calibration mpi, nccl;
  mpi.topology = nccl.topology = run.topology;
  nccl.backend = BackendKind::kNccl;
  ASSERT_TRUE(store->SaveCalibration(&mpi).ok());
  ASSERT_TRUE(store->SaveCalibration(&nccl).ok());
  Calibration found;
  ASSERT_TRUE(store->FindCalibration(run.topology, BackendKind::kNccl, &found).ok());
  EXPECT_EQ(found.id, nccl.id);
  EXPECT_EQ(found.backend, BackendKind::kNccl);
  ASSERT_TRUE(store->FindCalibration(run.topology, BackendKind::kMpi, &found).ok());
  EXPECT_EQ(found.id, mpi.id);
  store.reset();

  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  auto text = [&](const char* sql) {
    sqlite3_stmt* q = nullptr;
    std::string out;
    if (sqlite3_prepare_v2(db, sql, -1, &q, nullptr) == SQLITE_OK &&
        sqlite3_step(q) == SQLITE_ROW) {
      out = reinterpret_cast<const char*>(sqlite3_column_text(q, 0));
    }
    sqlite3_finalize(q);
    return out;
  };
  EXPECT_EQ(text("SELECT kind || ' ' || backend FROM runs"), "simulated nccl");
  EXPECT_EQ(text("SELECT group_concat(backend, ' ') FROM (SELECT backend FROM calibrations "
                 "ORDER BY id)"),
            "mpi nccl");
  sqlite3_exec(db, "UPDATE runs SET backend = 'gloo'", nullptr, nullptr, nullptr);
  sqlite3_close(db);

  ASSERT_TRUE(Store::Open(path_, Store::Mode::kReadOnly, &store).ok());
  RunInfo back;
  const Status s = store->GetRun(run.id, &back);
  EXPECT_EQ(s.code(), Status::Code::kCorruption);
  EXPECT_NE(s.message().find("backend"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("\"gloo\""), std::string::npos) << s.message();
}

TEST_F(StoreTest, CalibrationsAndSamplesRoundTrip) {
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(path_, Store::Mode::kReadWrite, &store).ok());
  Calibration c;
  c.topology.nodes = 2;
  c.topology.ranks_per_node = 2;
  c.points.push_back({Op::kAllreduce, Scope::kCross, 2, 1024, 5, 50, 40, 70});
  c.points.push_back({Op::kAllgather, Scope::kWorld, 4, 2048, 5, 80, 70, 90});
  ASSERT_TRUE(store->SaveCalibration(&c).ok());
  Calibration found;
  ASSERT_TRUE(store->FindCalibration(c.topology, BackendKind::kMpi, &found).ok());
  EXPECT_EQ(found.id, c.id);
  ASSERT_EQ(found.points.size(), 2u);
  Topology other;
  other.nodes = 4;
  EXPECT_EQ(store->FindCalibration(other, BackendKind::kMpi, &found).code(),
            Status::Code::kNotFound);

  std::vector<Sample> samples(2);
  samples[0].workload = samples[1].workload = "w";
  samples[0].topology = samples[1].topology = c.topology;
  samples[0].knobs.cycle_time_ms = 7;
  samples[0].score_bytes_per_s = 5;
  samples[1].score_bytes_per_s = std::nan("");  // stored as NULL: the NOT NULL check fails
  EXPECT_FALSE(store->AddSamples(&samples).ok());
  std::vector<Sample> listed;
  ASSERT_TRUE(store->ListSamples("w", c.topology, &listed).ok());
  EXPECT_TRUE(listed.empty());  // the failed batch left nothing behind
  samples.pop_back();
  ASSERT_TRUE(store->AddSamples(&samples).ok());
  ASSERT_TRUE(store->ListSamples("w", c.topology, &listed).ok());
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_DOUBLE_EQ(listed[0].knobs.cycle_time_ms, 7);
}

}  // namespace
}  // namespace autotune
