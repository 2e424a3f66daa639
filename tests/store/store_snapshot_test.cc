// A read transaction of the store sees one snapshot: steps another connection commits
// meanwhile stay unseen until it ends (what keeps LoadTrace from reading a step's rows in one
// table and not in the next while a record writes).
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "store/sqlite_statement.h"
#include "store/store.h"

namespace autotune {
namespace {

int64_t CountSteps(sqlite3* db) {
  Statement q(db, "SELECT count(*) FROM steps");
  Status s;
  return q.Step(&s) ? q.Int(0) : -1;
}

StepTrace OneStep(int step) {
  StepTrace t;
  t.step = step;
  t.step_ms = 1.0;
  t.bytes = 16;
  t.tensors.push_back(TensorEvent{0, 0, 10.0, 20.0});
  return t;
}

TEST(StoreSnapshotTest, AReadTransactionSeesOneSnapshotUntilItEnds) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("snapshot_" + std::to_string(getpid()) + ".db"))
          .string();
  std::filesystem::remove(path);
  std::unique_ptr<Store> writer;
  ASSERT_TRUE(Store::Open(path, Store::Mode::kReadWrite, &writer).ok());
  RunInfo run;
  run.workload.name = "w";
  TensorSpec tensor;
  tensor.name = "t";
  tensor.shape = {4};
  run.workload.tensors.push_back(tensor);
  ASSERT_TRUE(writer->CreateRun(&run).ok());
  ASSERT_TRUE(writer->AppendStep(run.id, OneStep(0)).ok());

  sqlite3* reader = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &reader, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  {
    ReadTransaction snapshot(reader);
    EXPECT_EQ(CountSteps(reader), 1);
    ASSERT_TRUE(writer->AppendStep(run.id, OneStep(1)).ok());
    EXPECT_EQ(CountSteps(reader), 1);  // the step committed meanwhile is not seen
  }
  EXPECT_EQ(CountSteps(reader), 2);
  sqlite3_close(reader);
  Trace trace;
  ASSERT_TRUE(writer->LoadTrace(run.id, &trace).ok());
  EXPECT_EQ(trace.steps.size(), 2u);
  writer.reset();
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
}

}  // namespace
}  // namespace autotune
