// Internal to the store: row <-> struct mapping shared by the store's files.
#pragma once

#include <sqlite3.h>

#include <string>

#include "store/sqlite_statement.h"
#include "store/store.h"

namespace autotune {

// SELECT list for runs; ReadRunRow reads a row of it.
inline constexpr const char* kRunColumns = R"sql(SELECT id, created_at, kind, command,
    workload_json, scale, knobs_json, nodes, ranks_per_node, hosts_json, backend, hardware,
    steps_planned, warmup_steps, complete, steps_recorded, score_bytes_per_s, step_ms_median,
    step_ms_p95, source_run, end_reason, framework, host_cores, nodes_per_host,
    untraced_step_ms, source_hash, traced_step_ms FROM runs)sql";

Status ReadRunRow(const Statement& q, const std::string& path, RunInfo* info);

// Inserts one sample (no transaction of its own); sets sample->id and created_at.
Status InsertSample(sqlite3* db, Sample* sample);

// Sets PRAGMA user_version (the file header's version) to kSchemaVersion, inside the
// caller's transaction.
Status SetUserVersion(sqlite3* db, const std::string& path);

// Brings the database at path from schema from_version to kSchemaVersion in one transaction
// (store_migration.cc); OK and untouched when it is current. Errors name the path.
Status MigrateSchema(sqlite3* db, const std::string& path, int from_version);
// For a read-only connection to a database of an older schema: temporary views that show
// it in the current schema's shape (columns added since read as their defaults).
Status ShowOlderSchemaAsCurrent(sqlite3* db, const std::string& path, int version);

}  // namespace autotune
