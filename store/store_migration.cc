// Store: bringing a database of an older schema version up to kSchemaVersion.
//
// Version 1 -> 2: runs.kind's CHECK gained 'imported'. Version 2 -> 3: runs gained
// end_reason (default ''). Version 3 -> 4: runs gained framework (default 'horovod').
// Version 4 -> 5: runs gained host_cores (0), nodes_per_host (1), untraced_step_ms (0) and
// source_hash (''); PRAGMA user_version is set too. Version 5 -> 6: the decisions and
// decision_runs tables (created from the embedded schema, where they come last); runs is not
// rebuilt. Version 6 -> 7: runs gained traced_step_ms (0), its last column, by ADD COLUMN (a
// database older than 5 is rebuilt with it already). Version 7 -> 8: calibrations gained
// tcp_eager_limit (the knob mpi_tcp_eager_limit; 0: Open MPI's own, which every older
// calibrate ran under unless its shell exported another), and calibration_points mean_us (0:
// not measured). Every migration is one transaction:
// all of it or nothing. SQLite cannot alter a CHECK, so the runs table is rebuilt the way SQLite's
// documentation prescribes ("Making Other Kinds Of Table Schema Changes", lang_altertable.html):
// foreign keys off outside the transaction, then in one transaction create the new table, copy
// the rows by column name (ids kept), drop the old table, rename the new one, check the foreign
// keys, commit, and restore the setting.
#include <sqlite3.h>

#include <string>
#include <utility>

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

// Whether `table` has `column` (a file made under the current schema already has every
// column a migration adds).
bool HasColumn(sqlite3* db, const std::string& table, const std::string& column) {
  Statement q(db, "SELECT count(*) FROM pragma_table_info(?) WHERE name = ?");
  q.Bind(1, table).Bind(2, column);
  Status s;
  return q.Step(&s) && q.Int(0) > 0;
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

// Rebuilds runs under the current schema, inside the caller's transaction.
Status RebuildRuns(sqlite3* db, const std::string& path, bool check_foreign_keys) {
  StatusOr<std::string> create = RunsTableSql("runs_migrated");
  if (!create.ok()) return create.status().WithPrefix(path);
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
  return Status::Ok();
}

// The embedded schema's statements of version 6's tables (from `CREATE TABLE decisions` to
// the end), with `table_prefix` / `index_prefix` in place of "CREATE TABLE " / "CREATE INDEX ".
StatusOr<std::string> DecisionTablesSql(const std::string& table_prefix,
                                        const std::string& index_prefix) {
  const std::string schema = kSchemaSql;
  const size_t begin = schema.find("CREATE TABLE decisions (");
  if (begin == std::string::npos) {
    return Status::Internal("the embedded schema has no decisions table");
  }
  std::string sql = schema.substr(begin);
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"CREATE TABLE ", table_prefix},
                                 {"CREATE INDEX ", index_prefix}}) {
    for (size_t at = sql.find(from); at != std::string::npos; at = sql.find(from, at + to.size())) {
      sql.replace(at, from.size(), to);
    }
  }
  return sql;
}

// Brings the schema from `from_version` up in one transaction and sets the versions.
Status Migrate(sqlite3* db, const std::string& path, int from_version, bool check_foreign_keys) {
  Transaction tx(db);
  AUTOTUNE_RETURN_IF_ERROR(tx.status().WithPrefix(path));
  if (from_version < 5) AUTOTUNE_RETURN_IF_ERROR(RebuildRuns(db, path, check_foreign_keys));
  if (from_version < 6) {
    StatusOr<std::string> tables = DecisionTablesSql("CREATE TABLE IF NOT EXISTS ", "CREATE INDEX IF NOT EXISTS ");
    if (!tables.ok()) return tables.status().WithPrefix(path);
    AUTOTUNE_RETURN_IF_ERROR(ExecSql(db, path, *tables));
  }
  if (from_version >= 5 && from_version < 7) {
    AUTOTUNE_RETURN_IF_ERROR(ExecSql(
        db, path, "ALTER TABLE runs ADD COLUMN traced_step_ms REAL NOT NULL DEFAULT 0"));
  }
  if (from_version < 8 && !HasColumn(db, "calibrations", "tcp_eager_limit")) {
    AUTOTUNE_RETURN_IF_ERROR(ExecSql(
        db, path, "ALTER TABLE calibrations ADD COLUMN tcp_eager_limit INTEGER NOT NULL DEFAULT 0"));
  }
  if (from_version < 8 && !HasColumn(db, "calibration_points", "mean_us")) {
    AUTOTUNE_RETURN_IF_ERROR(ExecSql(
        db, path, "ALTER TABLE calibration_points ADD COLUMN mean_us REAL NOT NULL DEFAULT 0"));
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
  const Status migrated = Migrate(db, path, from_version, foreign_keys);
  if (foreign_keys) AUTOTUNE_RETURN_IF_ERROR(ExecSql(db, path, "PRAGMA foreign_keys = ON"));
  return migrated;
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
  if (version < 7) added += ", 0.0 AS traced_step_ms";
  if (!added.empty()) {
    AUTOTUNE_RETURN_IF_ERROR(
        ExecSql(db, path, "CREATE TEMP VIEW runs AS SELECT *" + added + " FROM main.runs"));
  }
  if (!HasColumn(db, "calibrations", "tcp_eager_limit")) {  // every version before 8
    AUTOTUNE_RETURN_IF_ERROR(ExecSql(
        db, path,
        "CREATE TEMP VIEW calibrations AS SELECT *, 0 AS tcp_eager_limit FROM main.calibrations"));
  }
  if (!HasColumn(db, "calibration_points", "mean_us")) {
    AUTOTUNE_RETURN_IF_ERROR(ExecSql(db, path,
                                     "CREATE TEMP VIEW calibration_points AS SELECT *, 0.0 AS "
                                     "mean_us FROM main.calibration_points"));
  }
  if (version < 6) {  // no decisions yet: the tables, empty, in the temporary schema
    StatusOr<std::string> tables = DecisionTablesSql("CREATE TEMP TABLE ", "CREATE INDEX temp.");
    if (!tables.ok()) return tables.status().WithPrefix(path);
    AUTOTUNE_RETURN_IF_ERROR(ExecSql(db, path, *tables));
  }
  return Status::Ok();
}

}  // namespace autotune
