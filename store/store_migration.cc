// Store: bringing a database of an older schema version up to kSchemaVersion.
//
// Version 1 -> 2: runs.kind's CHECK gained 'imported'. Version 2 -> 3: runs gained
// end_reason (default ''). Version 3 -> 4: runs gained framework (default 'horovod').
// Version 4 -> 5: runs gained host_cores (0), nodes_per_host (1), untraced_step_ms (0) and
// source_hash (''); PRAGMA user_version is set too. SQLite cannot
// alter a CHECK, so the runs table is rebuilt the way SQLite's documentation prescribes ("Making
// Other Kinds Of Table Schema Changes", lang_altertable.html): foreign keys off outside the
// transaction, then in one transaction create the new table, copy the rows by column name (ids
// kept), drop the old table, rename the new one, check the foreign keys, commit, and restore the
// setting.
#include <sqlite3.h>

#include <string>

#include "store/schema_sql.h"
#include "store/sqlite_statement.h"
#include "store/store_rows.h"

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

// The columns of the existing runs table, comma-separated, in table order.
StatusOr<std::string> OldRunColumns(sqlite3* db, const std::string& path) {
  Statement q(db, "SELECT name FROM pragma_table_info('runs')");
  std::string columns;
  Status s;
  while (q.Step(&s)) columns += (columns.empty() ? "" : ", ") + q.Text(0);
  AUTOTUNE_RETURN_IF_ERROR(s.WithPrefix(path));
  if (columns.empty()) return Status::Corruption(path + ": schema migration: no runs table");
  return columns;
}

// Rebuilds runs under the current schema and sets schema_version, in one transaction.
Status RebuildRuns(sqlite3* db, const std::string& path, bool check_foreign_keys) {
  StatusOr<std::string> create = RunsTableSql("runs_migrated");
  if (!create.ok()) return create.status().WithPrefix(path);
  Transaction tx(db);
  AUTOTUNE_RETURN_IF_ERROR(tx.status().WithPrefix(path));
  AUTOTUNE_RETURN_IF_ERROR(ExecSql(db, path, *create));
  // The old columns by name; columns the old schema lacks take their defaults.
  StatusOr<std::string> columns = OldRunColumns(db, path);
  if (!columns.ok()) return columns.status();
  AUTOTUNE_RETURN_IF_ERROR(ExecSql(
      db, path, "INSERT INTO runs_migrated (" + *columns + ") SELECT " + *columns + " FROM runs"));
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
  AUTOTUNE_RETURN_IF_ERROR(SetUserVersion(db, path));
  return tx.Commit().WithPrefix(path);
}

}  // namespace

Status SetUserVersion(sqlite3* db, const std::string& path) {
  return ExecSql(db, path, "PRAGMA user_version = " + std::to_string(kSchemaVersion));
}

Status MigrateSchema(sqlite3* db, const std::string& path, int from_version) {
  if (from_version >= kSchemaVersion) return Status::Ok();
  const bool foreign_keys = ForeignKeysOn(db);
  if (foreign_keys) AUTOTUNE_RETURN_IF_ERROR(ExecSql(db, path, "PRAGMA foreign_keys = OFF"));
  const Status rebuilt = RebuildRuns(db, path, foreign_keys);
  if (foreign_keys) AUTOTUNE_RETURN_IF_ERROR(ExecSql(db, path, "PRAGMA foreign_keys = ON"));
  return rebuilt;
}

Status ShowOlderSchemaAsCurrent(sqlite3* db, const std::string& path, int version) {
  if (version >= kSchemaVersion) return Status::Ok();
  // The temp schema is searched before main, so this view stands in for main.runs; the
  // columns added since `version` read as their defaults.
  std::string added;
  if (version < 3) added += ", '' AS end_reason";
  if (version < 4) added += ", 'horovod' AS framework";
  if (version < 5) {
    added += ", 0 AS host_cores, 1 AS nodes_per_host, 0.0 AS untraced_step_ms, '' AS source_hash";
  }
  return ExecSql(db, path, "CREATE TEMP VIEW runs AS SELECT *" + added + " FROM main.runs");
}

}  // namespace autotune
