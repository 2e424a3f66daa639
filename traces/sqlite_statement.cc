#include "traces/sqlite_statement.h"

namespace autotune {

Status SqliteError(sqlite3* db, const std::string& what) {
  return Status::IoError(what + ": " + sqlite3_errmsg(db));
}

Statement::Statement(sqlite3* db, const char* sql) : db_(db) {
  if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK) {
    status_ = SqliteError(db, "database query failed");
  }
}

bool Statement::Step(Status* status) {
  if (!status_.ok()) {
    *status = status_;
    return false;
  }
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc != SQLITE_DONE) *status = SqliteError(db_, "database query failed");
  return false;
}

Status Statement::Run() {
  Status status;
  while (Step(&status)) {
  }
  Reset();
  return status;
}

Transaction::Transaction(sqlite3* db) : db_(db) {
  char* err = nullptr;
  if (sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, &err) != SQLITE_OK) {
    status_ = Status::IoError(std::string("cannot begin transaction: ") + (err ? err : "?"));
    sqlite3_free(err);
  } else {
    open_ = true;
  }
}

Transaction::~Transaction() {
  if (open_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

Status Transaction::Commit() {
  if (!status_.ok()) return status_;
  char* err = nullptr;
  if (sqlite3_exec(db_, "COMMIT", nullptr, nullptr, &err) != SQLITE_OK) {
    Status s = Status::IoError(std::string("commit failed: ") + (err ? err : "?"));
    sqlite3_free(err);
    return s;
  }
  open_ = false;
  return Status::Ok();
}

}  // namespace autotune
