// Running the autotune binary ($AUTOTUNE_BIN) from tests: every command under `timeout`
// (a guard against hangs, not a performance limit), stdout and stderr captured to files,
// and read-only looks into the SQLite database it wrote.
#pragma once

#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace autotune::test_support {

namespace fs = std::filesystem;

inline std::string Bin() {
  const char* bin = std::getenv("AUTOTUNE_BIN");
  return bin ? bin : "autotune";
}

inline std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Starts `timeout 900 argv...` with stdout/stderr into files; returns the pid (of timeout).
// strip_mpi_env: the child does not look launched by MPI (as when typed in a shell).
inline pid_t Start(const std::vector<std::string>& argv, const fs::path& out, const fs::path& err,
                   bool strip_mpi_env = true) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (strip_mpi_env) {
      for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"}) unsetenv(v);
    }
    if (!freopen(out.c_str(), "w", stdout) || !freopen(err.c_str(), "w", stderr)) _exit(126);
    std::vector<std::string> full = {"timeout", "900"};
    full.insert(full.end(), argv.begin(), argv.end());
    std::vector<char*> c;
    for (std::string& a : full) c.push_back(a.data());
    c.push_back(nullptr);
    execvp(c[0], c.data());
    _exit(127);
  }
  return pid;
}

// The exit code of pid (128 + signal when it was killed).
inline int Wait(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

struct Result {
  int code;
  std::string out, err;
};

// Runs argv to completion; out.txt and err.txt in dir hold its output.
inline Result RunCommand(const std::vector<std::string>& argv, const fs::path& dir) {
  const pid_t pid = Start(argv, dir / "out.txt", dir / "err.txt");
  Result r;
  r.code = Wait(pid);
  r.out = ReadFile(dir / "out.txt");
  r.err = ReadFile(dir / "err.txt");
  return r;
}

// The first column of the first row of sql, read-only; -1 when there is none.
inline int64_t QueryInt(const fs::path& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  int64_t v = -1;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(db, 1000);
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW) {
      v = sqlite3_column_int64(stmt, 0);
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return v;
}

// The first column of the first row of sql as text, read-only; "" when there is none.
inline std::string QueryText(const fs::path& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  std::string v;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(db, 1000);
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_text(stmt, 0) != nullptr) {
      v = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return v;
}

inline int Lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

// A fresh directory under /tmp, "" on failure.
inline fs::path MakeTempDir() {
  char tmpl[] = "/tmp/autotune_cli_XXXXXX";
  return mkdtemp(tmpl) == nullptr ? fs::path() : fs::path(tmpl);
}

}  // namespace autotune::test_support
