// Store: bringing a database of an older schema version up to kSchemaVersion.
//
// Version 1 -> 2: runs.kind's CHECK gained 'imported'. SQLite cannot alter a CHECK, so the
// runs table is rebuilt the way SQLite's documentation prescribes ("Making Other Kinds Of
// Table Schema Changes", lang_altertable.html): foreign keys off outside the transaction,
// then in one transaction create the new table, copy the rows (ids kept), drop the old
// table, rename the new one, check the foreign keys, commit, and restore the setting.
#include <sqlite3.h>

#include <string>

#include "traces/schema_sql.h"
#include "traces/sqlite_statement.h"
#include "traces/store_rows.h"

namespace autotune {
namespace {

Status ExecSql(sqlite3* db, const std::string& path, const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    Status s = Status::IoError(path + ": schema migration: " + (err ? err : "query failed"));
    sqlite3_free(err);
    return s;
  }
  return Status::Ok();
}

// The current schema's CREATE TABLE statement of runs, creating table `name` instead.
StatusOr<std::string> RunsTableSql(const std::string& name) {
  const std::string schema = kSchemaSql;
  const std::string head = "CREATE TABLE runs (";
  const size_t begin = schema.find(head);
  const size_t end = begin == std::string::npos ? begin : schema.find("\n);", begin);
  if (end == std::string::npos) {
    return Status::Internal("the embedded schema has no runs table");
  }
  return "CREATE TABLE " + name + " (" +
         schema.substr(begin + head.size(), end + 3 - begin - head.size());
}

bool ForeignKeysOn(sqlite3* db) {
  Statement q(db, "PRAGMA foreign_keys");
  Status s;
  return q.Step(&s) && q.Int(0) != 0;
}

// Rebuilds runs under the current schema and sets schema_version, in one transaction.
Status RebuildRuns(sqlite3* db, const std::string& path, bool check_foreign_keys) {
  StatusOr<std::string> create = RunsTableSql("runs_migrated");
  if (!create.ok()) return create.status().WithPrefix(path);
  Transaction tx(db);
  AUTOTUNE_RETURN_IF_ERROR(tx.status().WithPrefix(path));
  AUTOTUNE_RETURN_IF_ERROR(ExecSql(db, path, *create));
  AUTOTUNE_RETURN_IF_ERROR(ExecSql(db, path, "INSERT INTO runs_migrated SELECT * FROM runs"));
  AUTOTUNE_RETURN_IF_ERROR(ExecSql(db, path, "DROP TABLE runs"));
  AUTOTUNE_RETURN_IF_ERROR(ExecSql(db, path, "ALTER TABLE runs_migrated RENAME TO runs"));
  if (check_foreign_keys) {
    Statement check(db, "PRAGMA foreign_key_check");
    Status s;
    if (check.Step(&s)) {
      return Status::Corruption(path + ": schema migration: table " + check.Text(0) +
                                " holds a row whose foreign key has no match");
    }
    AUTOTUNE_RETURN_IF_ERROR(s.WithPrefix(path));
  }
  Statement version(db, "UPDATE meta SET value = ? WHERE key = 'schema_version'");
  AUTOTUNE_RETURN_IF_ERROR(version.Bind(1, std::to_string(kSchemaVersion)).Run().WithPrefix(path));
  return tx.Commit().WithPrefix(path);
}

}  // namespace

Status MigrateSchema(sqlite3* db, const std::string& path, int from_version) {
  if (from_version >= kSchemaVersion) return Status::Ok();
  const bool foreign_keys = ForeignKeysOn(db);
  if (foreign_keys) AUTOTUNE_RETURN_IF_ERROR(ExecSql(db, path, "PRAGMA foreign_keys = OFF"));
  const Status rebuilt = RebuildRuns(db, path, foreign_keys);
  if (foreign_keys) AUTOTUNE_RETURN_IF_ERROR(ExecSql(db, path, "PRAGMA foreign_keys = ON"));
  return rebuilt;
}

}  // namespace autotune
