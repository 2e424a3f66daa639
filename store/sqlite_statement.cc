#include "store/sqlite_statement.h"

namespace autotune {

Status SqliteError(sqlite3* db, const std::string& what) {
  switch (sqlite3_errcode(db)) {
    case SQLITE_FULL:
      return Status::IoError(what + ": disk full (SQLITE_FULL)");
    case SQLITE_READONLY:
      return Status::IoError(what + ": read-only (SQLITE_READONLY)");
    default:
      return Status::IoError(what + ": " + sqlite3_errmsg(db));
  }
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
  if (rc != SQLITE_DONE) {
    *status = SqliteError(
        db_, sqlite3_stmt_readonly(stmt_) ? "database query failed" : "database write failed");
  }
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
  // Inside a transaction already (one command's write made of several): a savepoint, so that
  // this part rolls back alone and the outer transaction decides what is committed.
  nested_ = sqlite3_get_autocommit(db) == 0;
  const char* begin = nested_ ? "SAVEPOINT autotune_part" : "BEGIN IMMEDIATE";
  if (sqlite3_exec(db, begin, nullptr, nullptr, nullptr) != SQLITE_OK) {
    status_ = SqliteError(db, "cannot begin transaction");
  } else {
    open_ = true;
  }
}

Transaction::~Transaction() {
  if (!open_) return;
  if (nested_) {
    sqlite3_exec(db_, "ROLLBACK TO autotune_part; RELEASE autotune_part", nullptr, nullptr,
                 nullptr);
  } else {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
}

Status Transaction::Commit() {
  if (!status_.ok()) return status_;
  const char* end = nested_ ? "RELEASE autotune_part" : "COMMIT";
  if (sqlite3_exec(db_, end, nullptr, nullptr, nullptr) != SQLITE_OK) {
    return SqliteError(db_, "commit failed");
  }
  open_ = false;
  return Status::Ok();
}

ReadTransaction::ReadTransaction(sqlite3* db) : db_(db) {
  if (sqlite3_get_autocommit(db) == 0) return;  // inside a transaction already
  open_ = sqlite3_exec(db, "BEGIN DEFERRED", nullptr, nullptr, nullptr) == SQLITE_OK;
}

ReadTransaction::~ReadTransaction() {
  if (open_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

}  // namespace autotune
