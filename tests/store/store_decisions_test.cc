// Stored decisions: read back field by field, refused whole, and a version-5 database gaining
// the tables (read-only it shows none).
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>

#include "store/store.h"

namespace autotune {
namespace {

class StoreDecisionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("autotune_store_decisions_test_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "t.db").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void Exec(const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    char* err = nullptr;
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK)
        << (err ? err : "");
    sqlite3_free(err);
    sqlite3_close(db);
  }

  static StoredDecision MakeDecision() {
    StoredDecision d;
    d.run_id = 4;
    d.command = "search";
    d.evidence_key = "run=4;samples=1,2,3";
    d.candidate.fusion_threshold_mb = 0;
    d.candidate.cycle_time_ms = 25;
    d.chosen = d.candidate;
    d.verdict = "beats_default";
    d.has_speedup = true;
    d.speedup = 1.3;
    d.speedup_low = 1.21;
    d.speedup_high = 1.38;
    d.confidence = 0.95;
    d.noise_cv = 0.031;
    d.summary = "best: fusion 0 beats the default";
    d.runs = {{4, false, 10, 120.5, false},
              {7, true, 10, 92.25, false},
              {8, true, 10, 140.0, true},
              {9, false, 10, 119.0, false}};
    return d;
  }

  std::filesystem::path dir_;
  std::string path_;
};

TEST_F(StoreDecisionsTest, ADecisionReadsBackFieldByField) {
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(path_, Store::Mode::kReadWrite, &store).ok());
  StoredDecision d = MakeDecision();
  ASSERT_TRUE(store->SaveDecision(&d).ok());
  EXPECT_EQ(d.id, 1);
  EXPECT_FALSE(d.created_at.empty());
  StoredDecision other = MakeDecision();
  other.run_id = 5;
  other.verdict = "within_noise";
  other.has_speedup = false;
  other.chosen = Knobs();
  other.runs.clear();
  ASSERT_TRUE(store->SaveDecision(&other).ok());
  store.reset();

  ASSERT_TRUE(Store::Open(path_, Store::Mode::kReadOnly, &store).ok());
  StoredDecision back;
  ASSERT_TRUE(store->LatestDecision(4, &back).ok());
  EXPECT_EQ(back.id, 1);
  EXPECT_EQ(back.created_at, d.created_at);
  EXPECT_EQ(back.run_id, 4);
  EXPECT_EQ(back.command, "search");
  EXPECT_EQ(back.evidence_key, "run=4;samples=1,2,3");
  EXPECT_EQ(back.chosen.fusion_threshold_mb, 0.0);
  EXPECT_EQ(back.chosen.cycle_time_ms, 25.0);
  EXPECT_EQ(back.candidate, back.chosen);
  EXPECT_EQ(back.default_knobs, Knobs());
  EXPECT_EQ(back.verdict, "beats_default");
  EXPECT_TRUE(back.has_speedup);
  EXPECT_DOUBLE_EQ(back.speedup, 1.3);
  EXPECT_DOUBLE_EQ(back.speedup_low, 1.21);
  EXPECT_DOUBLE_EQ(back.speedup_high, 1.38);
  EXPECT_DOUBLE_EQ(back.confidence, 0.95);
  EXPECT_DOUBLE_EQ(back.noise_cv, 0.031);
  EXPECT_EQ(back.summary, "best: fusion 0 beats the default");
  ASSERT_EQ(back.runs.size(), 4u);
  EXPECT_EQ(back.runs[0].run_id, 4);
  EXPECT_FALSE(back.runs[0].candidate);
  EXPECT_EQ(back.runs[1].run_id, 7);
  EXPECT_TRUE(back.runs[1].candidate);
  EXPECT_EQ(back.runs[1].steps, 10);
  EXPECT_DOUBLE_EQ(back.runs[1].median_step_ms, 92.25);
  EXPECT_TRUE(back.runs[2].outlier);
  EXPECT_FALSE(back.runs[3].outlier);
  EXPECT_EQ(back.runs[3].run_id, 9);

  ASSERT_TRUE(store->LatestDecision(5, &back).ok());
  EXPECT_EQ(back.verdict, "within_noise");
  EXPECT_FALSE(back.has_speedup);
  EXPECT_TRUE(back.runs.empty());
  EXPECT_EQ(store->LatestDecision(6, &back).code(), Status::Code::kNotFound);
  std::vector<StoredDecision> all;
  ASSERT_TRUE(store->ListDecisions(&all).ok());
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].runs.size(), 4u);
  EXPECT_EQ(all[1].run_id, 5);
}

// A verdict the schema does not list is refused, and none of the decision is stored.
TEST_F(StoreDecisionsTest, AnUnknownVerdictStoresNothing) {
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(path_, Store::Mode::kReadWrite, &store).ok());
  StoredDecision d = MakeDecision();
  d.verdict = "yes";
  const Status s = store->SaveDecision(&d);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << s.message();
  EXPECT_NE(s.message().find("'yes'"), std::string::npos) << s.message();
  EXPECT_EQ(d.id, 0);
  std::vector<StoredDecision> all;
  ASSERT_TRUE(store->ListDecisions(&all).ok());
  EXPECT_TRUE(all.empty());
}

// What version 5 wrote (no decision tables): read-only it shows no decisions and is left as
// it is; a read-write open adds the tables (and version 7's column) in one step.
TEST_F(StoreDecisionsTest, Version5DatabaseGainsTheDecisionTables) {
  {
    std::unique_ptr<Store> store;
    ASSERT_TRUE(Store::Open(path_, Store::Mode::kReadWrite, &store).ok());
  }
  Exec(
      "DROP TABLE decision_runs; DROP TABLE decisions; PRAGMA user_version = 5; "
      "ALTER TABLE runs DROP COLUMN traced_step_ms; "
      "ALTER TABLE calibrations DROP COLUMN tcp_eager_limit; "
      "UPDATE meta SET value = '5' WHERE key = 'schema_version'");
  {
    std::unique_ptr<Store> reader;
    ASSERT_TRUE(Store::Open(path_, Store::Mode::kReadOnly, &reader).ok());
    std::vector<StoredDecision> all;
    ASSERT_TRUE(reader->ListDecisions(&all).ok());
    EXPECT_TRUE(all.empty());
    StoredDecision d;
    EXPECT_EQ(reader->LatestDecision(1, &d).code(), Status::Code::kNotFound);
  }
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(path_, Store::Mode::kReadWrite, &store).ok());
  StoredDecision d = MakeDecision();
  ASSERT_TRUE(store->SaveDecision(&d).ok());
  store.reset();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* q = nullptr;
  sqlite3_prepare_v2(db,
                     "SELECT (SELECT value FROM meta WHERE key = 'schema_version'), "
                     "(SELECT count(*) FROM decision_runs)",
                     -1, &q, nullptr);
  ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(sqlite3_column_text(q, 0))),
            std::to_string(kSchemaVersion));
  EXPECT_EQ(sqlite3_column_int(q, 1), 4);
  sqlite3_finalize(q);
  sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &q, nullptr);
  ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(q, 0), kSchemaVersion);
  sqlite3_finalize(q);
  sqlite3_close(db);
}

}  // namespace
}  // namespace autotune
