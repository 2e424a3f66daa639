// Several processes opening one NEW database file at the same moment (two `record`s and a
// `calibrate` started together): every open succeeds and the file holds one schema, one
// meta row per key. Processes are released together through a pipe, not by sleeping.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "store/store.h"

namespace autotune {
namespace {

// Child: waits until the parent closes the pipe's write end, opens the store read-write,
// creates a run and exits 0 on success, 1 otherwise (printing the error).
[[noreturn]] void OpenWhenReleased(int release_fd, const std::string& path) {
  char byte;
  while (read(release_fd, &byte, 1) > 0) {
  }
  std::unique_ptr<Store> store;
  Status s = Store::Open(path, Store::Mode::kReadWrite, &store);
  if (s.ok()) {
    RunInfo run;
    run.command = "concurrent open";
    run.workload.name = "w";
    TensorSpec tensor;
    tensor.name = "t";
    tensor.shape = {4};
    run.workload.tensors.push_back(tensor);
    s = store->CreateRun(&run);
  }
  if (!s.ok()) std::fprintf(stderr, "child: %s\n", s.message().c_str());
  std::_Exit(s.ok() ? 0 : 1);
}

int64_t QueryInt(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sql;
  int64_t value = -1;
  if (sqlite3_step(st) == SQLITE_ROW) value = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return value;
}

TEST(StoreConcurrentTest, ManyProcessesCreateOneNewDatabaseAtOnce) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("autotune-concurrent-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  constexpr int kProcesses = 8;
  for (int round = 0; round < 5; ++round) {  // each round a new file
    const std::string path = (dir / ("round" + std::to_string(round) + ".db")).string();
    int release[2];
    ASSERT_EQ(pipe(release), 0);
    std::vector<pid_t> children;
    for (int i = 0; i < kProcesses; ++i) {
      const pid_t pid = fork();
      ASSERT_GE(pid, 0);
      if (pid == 0) {
        close(release[1]);
        OpenWhenReleased(release[0], path);
      }
      children.push_back(pid);
    }
    close(release[0]);
    close(release[1]);  // every child starts now
    int failed = 0;
    for (pid_t pid : children) {
      int status = 0;
      ASSERT_EQ(waitpid(pid, &status, 0), pid);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
    }
    EXPECT_EQ(failed, 0) << "round " << round;
    EXPECT_EQ(QueryInt(path, "SELECT count(*) FROM meta WHERE key = 'schema_version'"), 1);
    EXPECT_EQ(QueryInt(path, "SELECT value FROM meta WHERE key = 'schema_version'"),
              kSchemaVersion);
    EXPECT_EQ(QueryInt(path, "SELECT count(*) FROM runs"), kProcesses);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace autotune
