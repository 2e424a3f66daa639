// Internal to the store: a prepared statement and a transaction, RAII over sqlite3.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>

#include "traces/status.h"

namespace autotune {

class Statement {
 public:
  Statement(sqlite3* db, const char* sql);
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Error from prepare, if any (e.g. the table is missing in a foreign database).
  const Status& status() const { return status_; }

  // Bind by 1-based index; chainable.
  Statement& Bind(int i, int64_t v) {
    sqlite3_bind_int64(stmt_, i, v);
    return *this;
  }
  Statement& Bind(int i, int v) {
    sqlite3_bind_int64(stmt_, i, v);
    return *this;
  }
  Statement& Bind(int i, double v) {
    sqlite3_bind_double(stmt_, i, v);
    return *this;
  }
  Statement& Bind(int i, const std::string& v) {
    sqlite3_bind_text(stmt_, i, v.c_str(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Statement& BindNull(int i) {
    sqlite3_bind_null(stmt_, i);
    return *this;
  }

  // Advances: true with a row, false when done; errors go to *status.
  bool Step(Status* status);
  // Runs to completion (for writes). Resets afterwards so the statement can be reused.
  Status Run();
  void Reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }

  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  double Double(int col) const { return sqlite3_column_double(stmt_, col); }
  bool IsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  std::string Text(int col) const {
    const unsigned char* t = sqlite3_column_text(stmt_, col);
    return t ? std::string(reinterpret_cast<const char*>(t)) : std::string();
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  Status status_;
};

// BEGIN IMMEDIATE on construction (waiting up to the connection's busy timeout for another
// writer to finish); ROLLBACK on destruction unless Commit() succeeded. Inside a transaction
// already open it is a savepoint: Commit() releases it into the outer transaction, and
// destruction without Commit() undoes what was written since it began.
class Transaction {
 public:
  explicit Transaction(sqlite3* db);
  ~Transaction();
  const Status& status() const { return status_; }
  Status Commit();

 private:
  sqlite3* db_;
  Status status_;
  bool open_ = false;
  bool nested_ = false;
};

// A read transaction: from the first read after construction until destruction every
// statement sees one snapshot of the database, however many statements a read takes and
// whatever other connections commit meanwhile. Does nothing inside a transaction already open.
class ReadTransaction {
 public:
  explicit ReadTransaction(sqlite3* db);
  ~ReadTransaction();
  ReadTransaction(const ReadTransaction&) = delete;
  ReadTransaction& operator=(const ReadTransaction&) = delete;

 private:
  sqlite3* db_;
  bool open_ = false;
};

// IoError "what: reason" for the connection's last error; the reason of a full disk is
// "disk full (SQLITE_FULL)" and of a read-only file "read-only (SQLITE_READONLY)".
Status SqliteError(sqlite3* db, const std::string& what);

}  // namespace autotune
