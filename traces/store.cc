// Store: opening, schema checks, runs. Steps/traces in store_trace.cc; calibrations and
// samples in store_samples.cc.
#include "traces/store.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "traces/schema_sql.h"
#include "traces/score.h"
#include "traces/sqlite_statement.h"
#include "traces/store_rows.h"

namespace autotune {
namespace {

bool FileExists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// Reads the schema state without writing: 0 tables = empty (new) database.
Status InspectSchema(sqlite3* db, const std::string& path, int* table_count, int* version) {
  *table_count = 0;
  *version = 0;
  {
    Statement count(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table'");
    Status s;
    if (!count.Step(&s)) {
      std::string why = s.ok() ? "unreadable" : sqlite3_errmsg(db);
      return Status::Corruption(path + " is not an autotune database (" + why + ")");
    }
    *table_count = static_cast<int>(count.Int(0));
  }
  if (*table_count == 0) return Status::Ok();
  Statement meta(db, "SELECT key, value FROM meta WHERE key IN ('application', 'schema_version')");
  if (!meta.status().ok()) {
    return Status::Corruption(path + " is not an autotune database (no meta table)");
  }
  std::string application;
  Status s;
  while (meta.Step(&s)) {
    if (meta.Text(0) == "application") application = meta.Text(1);
    if (meta.Text(0) == "schema_version") *version = std::atoi(meta.Text(1).c_str());
  }
  AUTOTUNE_RETURN_IF_ERROR(s);
  if (application != "autotune" || *version <= 0) {
    return Status::Corruption(path + " is not an autotune database (meta table is foreign)");
  }
  if (*version > kSchemaVersion) {
    return Status::NotSupported(path + " has schema version " + std::to_string(*version) +
                                ", newer than this autotune's " +
                                std::to_string(kSchemaVersion) + "; upgrade autotune");
  }
  return Status::Ok();
}

// Switches the file to WAL. The switch needs the file to itself for a moment, and SQLite
// answers SQLITE_BUSY at once, without the busy handler, while another process opens or
// creates the same file; so it is retried with a growing pause, for up to about 10 s (the
// busy timeout).
Status UseWal(sqlite3* db, const std::string& path) {
  int pause_ms = 1;
  for (int waited_ms = 0;; waited_ms += pause_ms, pause_ms = std::min(2 * pause_ms, 100)) {
    char* err = nullptr;
    const int rc = sqlite3_exec(db, "PRAGMA journal_mode = WAL", nullptr, nullptr, &err);
    const std::string message = err ? err : "cannot switch to WAL";
    sqlite3_free(err);
    if (rc == SQLITE_OK) return Status::Ok();
    if ((rc & 0xff) != SQLITE_BUSY || waited_ms >= 10000) {
      return Status::IoError(path + ": " + message);
    }
    sqlite3_sleep(pause_ms);
  }
}

// Creates the schema in one write transaction unless another process created it since the
// caller looked (two commands opening one new file at once): the check is repeated under the
// write lock, and *tables / *version say what the file holds afterwards (0 tables: we made it).
Status CreateSchemaOnce(sqlite3* db, const std::string& path, int* tables, int* version) {
  Transaction tx(db);
  AUTOTUNE_RETURN_IF_ERROR(tx.status().WithPrefix(path));
  AUTOTUNE_RETURN_IF_ERROR(InspectSchema(db, path, tables, version));
  if (*tables > 0) return Status::Ok();  // created meanwhile; the transaction rolls back
  char* err = nullptr;
  if (sqlite3_exec(db, kSchemaSql, nullptr, nullptr, &err) != SQLITE_OK) {
    Status s = Status::IoError(path + ": " + (err ? err : "cannot create the schema"));
    sqlite3_free(err);
    return s;
  }
  Statement meta(db, "INSERT INTO meta (key, value) VALUES (?, ?)");
  AUTOTUNE_RETURN_IF_ERROR(meta.Bind(1, std::string("application"))
                               .Bind(2, std::string("autotune"))
                               .Run());
  AUTOTUNE_RETURN_IF_ERROR(meta.Bind(1, std::string("schema_version"))
                               .Bind(2, std::to_string(kSchemaVersion))
                               .Run());
  return tx.Commit().WithPrefix(path);
}

}  // namespace

Status Store::Open(const std::string& path, Mode mode, std::unique_ptr<Store>* out) {
  const bool existed = FileExists(path);
  if (mode == Mode::kReadOnly && !existed) {
    return Status::NotFound(path + ": no such database (record a run first)");
  }
  sqlite3* db = nullptr;
  int flags = mode == Mode::kReadOnly ? SQLITE_OPEN_READONLY
                                      : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  if (sqlite3_open_v2(path.c_str(), &db, flags | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
    Status s = Status::IoError("cannot open database " + path + ": " +
                               (db ? sqlite3_errmsg(db) : "out of memory"));
    sqlite3_close(db);
    return s;
  }
  std::unique_ptr<Store> store(new Store(db, path));
  sqlite3_busy_timeout(db, 10000);
  int tables = 0, version = 0;
  AUTOTUNE_RETURN_IF_ERROR(InspectSchema(db, path, &tables, &version));
  if (tables == 0) {
    if (mode == Mode::kReadOnly) {
      return Status::Corruption(path + " is not an autotune database (it is empty)");
    }
    // Check that we can write at all before anything else (read-only file or folder).
    if (existed && access(path.c_str(), W_OK) != 0) {
      return Status::IoError("cannot write database " + path + ": permission denied");
    }
    AUTOTUNE_RETURN_IF_ERROR(UseWal(db, path));
    AUTOTUNE_RETURN_IF_ERROR(CreateSchemaOnce(db, path, &tables, &version));
  }
  if (tables > 0 && mode == Mode::kReadWrite) {
    if (access(path.c_str(), W_OK) != 0) {
      return Status::IoError("cannot write database " + path + ": permission denied");
    }
    AUTOTUNE_RETURN_IF_ERROR(UseWal(db, path));
    AUTOTUNE_RETURN_IF_ERROR(MigrateSchema(db, path, version));
  }
  if (tables > 0 && mode == Mode::kReadOnly) {
    AUTOTUNE_RETURN_IF_ERROR(ShowOlderSchemaAsCurrent(db, path, version));
  }
  AUTOTUNE_RETURN_IF_ERROR(store->Exec("PRAGMA synchronous = NORMAL"));
  *out = std::move(store);
  return Status::Ok();
}

Store::~Store() { sqlite3_close(db_); }

Status Store::Exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    Status s = Status::IoError(path_ + ": " + (err ? err : "query failed"));
    sqlite3_free(err);
    return s;
  }
  return Status::Ok();
}

Status Store::CreateRun(RunInfo* info) {
  Transaction tx(db_);
  AUTOTUNE_RETURN_IF_ERROR(tx.status().WithPrefix(path_));
  Statement insert(db_, R"sql(
    INSERT INTO runs (created_at, kind, command, workload_name, workload_json, scale,
      fusion_threshold_mb, cycle_time_ms, cache_capacity, hierarchical_allreduce,
      hierarchical_allgather, num_groups, knobs_json, nodes, ranks_per_node, hosts_json,
      backend, hardware, steps_planned, warmup_steps, source_run)
    VALUES (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
            ?, ?, ?, ?, ?, ?))sql");
  const Knobs& k = info->knobs;
  insert.Bind(1, std::string(RunKindName(info->kind))).Bind(2, info->command)
      .Bind(3, info->workload.name)
      .Bind(4, WorkloadToJson(info->workload).dump()).Bind(5, info->scale)
      .Bind(6, k.fusion_threshold_mb).Bind(7, k.cycle_time_ms).Bind(8, k.cache_capacity)
      .Bind(9, k.hierarchical_allreduce ? 1 : 0).Bind(10, k.hierarchical_allgather ? 1 : 0)
      .Bind(11, k.num_groups).Bind(12, KnobsToJson(k).dump())
      .Bind(13, info->topology.nodes).Bind(14, info->topology.ranks_per_node)
      .Bind(15, nlohmann::json(info->topology.hosts).dump())
      .Bind(16, std::string(BackendName(info->backend)))
      .Bind(17, info->hardware).Bind(18, info->steps_planned).Bind(19, info->warmup_steps);
  if (info->source_run > 0) {
    insert.Bind(20, info->source_run);
  } else {
    insert.BindNull(20);
  }
  AUTOTUNE_RETURN_IF_ERROR(insert.Run().WithPrefix(path_));
  info->id = sqlite3_last_insert_rowid(db_);
  Statement tensor(db_, R"sql(INSERT INTO tensors (run_id, tensor, name, op, dtype, elements,
                                bytes, ready_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?))sql");
  for (size_t i = 0; i < info->workload.tensors.size(); ++i) {
    const TensorSpec& t = info->workload.tensors[i];
    tensor.Bind(1, info->id).Bind(2, static_cast<int64_t>(i)).Bind(3, t.name)
        .Bind(4, std::string(OpName(t.op))).Bind(5, std::string(DTypeName(t.dtype)))
        .Bind(6, t.elements()).Bind(7, t.bytes()).Bind(8, t.ready_ms);
    AUTOTUNE_RETURN_IF_ERROR(tensor.Run().WithPrefix(path_));
  }
  AUTOTUNE_RETURN_IF_ERROR(tx.Commit().WithPrefix(path_));
  return GetRun(info->id, info);
}

Status Store::GetRun(int64_t run_id, RunInfo* info) {
  Statement q(db_, (std::string(kRunColumns) + " WHERE id = ?").c_str());
  q.Bind(1, run_id);
  Status s;
  if (!q.Step(&s)) {
    AUTOTUNE_RETURN_IF_ERROR(s.WithPrefix(path_));
    return Status::NotFound("run " + std::to_string(run_id) + " not found in " + path_);
  }
  return ReadRunRow(q, path_, info);
}

Status Store::ListRuns(std::vector<RunInfo>* runs) {
  runs->clear();
  Statement q(db_, (std::string(kRunColumns) + " ORDER BY id").c_str());
  Status s;
  while (q.Step(&s)) {
    RunInfo info;
    AUTOTUNE_RETURN_IF_ERROR(ReadRunRow(q, path_, &info));
    runs->push_back(std::move(info));
  }
  return s.WithPrefix(path_);
}

Status Store::FinishRun(int64_t run_id, bool complete, RunInfo* summary) {
  RunInfo info;
  AUTOTUNE_RETURN_IF_ERROR(GetRun(run_id, &info));
  std::vector<double> step_ms;
  std::vector<int64_t> step_bytes;
  {
    Statement q(db_, "SELECT step_ms, bytes FROM steps WHERE run_id = ? ORDER BY step");
    q.Bind(1, run_id);
    Status s;
    while (q.Step(&s)) {
      step_ms.push_back(q.Double(0));
      step_bytes.push_back(q.Int(1));
    }
    AUTOTUNE_RETURN_IF_ERROR(s.WithPrefix(path_));
  }
  info.complete = complete;
  info.steps_recorded = static_cast<int>(step_ms.size());
  info.step_ms_median = Median(step_ms);
  info.step_ms_p95 = Percentile(step_ms, 95);
  info.score_bytes_per_s = ScoreBytesPerSecond(step_bytes, step_ms);

  Transaction tx(db_);
  AUTOTUNE_RETURN_IF_ERROR(tx.status().WithPrefix(path_));
  Statement update(db_, R"sql(UPDATE runs SET complete = ?, steps_recorded = ?,
      score_bytes_per_s = ?, step_ms_median = ?, step_ms_p95 = ? WHERE id = ?)sql");
  update.Bind(1, complete ? 1 : 0).Bind(2, info.steps_recorded).Bind(3, info.score_bytes_per_s)
      .Bind(4, info.step_ms_median).Bind(5, info.step_ms_p95).Bind(6, run_id);
  AUTOTUNE_RETURN_IF_ERROR(update.Run().WithPrefix(path_));
  // A run tuned online (record --autotune) already holds one measured sample per setting it
  // played; a whole-run sample would mix them under the first setting's knobs.
  int64_t own_samples = 0;
  {
    Statement q(db_, "SELECT count(*) FROM samples WHERE run_id = ? AND fidelity = 'measured'");
    q.Bind(1, run_id);
    Status s;
    if (q.Step(&s)) own_samples = q.Int(0);
    AUTOTUNE_RETURN_IF_ERROR(s.WithPrefix(path_));
  }
  if (complete && IsMeasuredKind(info.kind) && info.steps_recorded > 0 && own_samples == 0) {
    Sample sample;
    sample.fidelity = Fidelity::kMeasured;
    sample.run_id = run_id;
    sample.trace_run_id = run_id;
    sample.workload = info.workload.name;
    sample.topology = info.topology;
    sample.knobs = info.knobs;
    sample.score_bytes_per_s = info.score_bytes_per_s;
    sample.step_ms = info.step_ms_median;
    AUTOTUNE_RETURN_IF_ERROR(InsertSample(db_, &sample).WithPrefix(path_));
  }
  AUTOTUNE_RETURN_IF_ERROR(tx.Commit().WithPrefix(path_));
  if (summary) *summary = info;
  return Status::Ok();
}

}  // namespace autotune
