// Store: opening, schema checks, runs. Steps/traces in store_trace.cc; calibrations and
// samples in store_samples.cc.
#include "store/store.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "store/schema_sql.h"
#include "store/sqlite_statement.h"
#include "store/store_rows.h"
#include "traces/score.h"

namespace autotune {
namespace {

// How long a command waits for another's write transaction (or WAL switch) to end before it
// gives up: longer than any one transaction of the store takes.
constexpr int kBusyTimeoutMs = 60000;

bool FileExists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// Reads the schema state without writing: 0 tables = empty (new) database.
Status InspectSchema(sqlite3* db, const std::string& path, int* table_count, int* version) {
  *table_count = 0;
  *version = 0;
  {  // the header's version, which every writer of this format sets: a newer program's file
     // is refused here, whatever its tables look like
    Statement user_version(db, "PRAGMA user_version");
    Status s;
    if (user_version.Step(&s) && user_version.Int(0) > kSchemaVersion) {
      return Status::NotSupported(path + " has schema version " +
                                  std::to_string(user_version.Int(0)) +
                                  " (PRAGMA user_version), newer than this autotune's " +
                                  std::to_string(kSchemaVersion) + "; upgrade autotune");
    }
  }
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
                                ", newer than this autotune's " + std::to_string(kSchemaVersion) +
                                "; upgrade autotune");
  }
  return Status::Ok();
}

// Switches the file to WAL. The switch needs the file to itself for a moment, and SQLite
// answers SQLITE_BUSY at once, without the busy handler, while another process opens or
// creates the same file; so it is retried with a growing pause, for up to the busy timeout.
Status UseWal(sqlite3* db, const std::string& path) {
  int pause_ms = 1;
  for (int waited_ms = 0;; waited_ms += pause_ms, pause_ms = std::min(2 * pause_ms, 100)) {
    char* err = nullptr;
    const int rc = sqlite3_exec(db, "PRAGMA journal_mode = WAL", nullptr, nullptr, &err);
    const std::string message = err ? err : "cannot switch to WAL";
    sqlite3_free(err);
    if (rc == SQLITE_OK) return Status::Ok();
    if ((rc & 0xff) != SQLITE_BUSY || waited_ms >= kBusyTimeoutMs) {
      return Status::IoError(path + ": " + message);
    }
    sqlite3_sleep(pause_ms);
  }
}

// A database with no tables yet (its creator has not filled it: a reader racing `record` on
// a new file) reads as an empty database: the schema's tables, empty, in the connection's
// temporary schema, where every query finds them.
Status ShowEmptySchema(sqlite3* db, const std::string& path) {
  std::string sql = kSchemaSql;
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"CREATE TABLE ", "CREATE TEMP TABLE "},
                                 {"CREATE INDEX ", "CREATE INDEX temp."}}) {
    for (size_t at = sql.find(from); at != std::string::npos; at = sql.find(from, at + to.size())) {
      sql.replace(at, from.size(), to);
    }
  }
  char* err = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    Status s = Status::IoError(path + ": " + (err ? err : "cannot read an empty database"));
    sqlite3_free(err);
    return s;
  }
  return Status::Ok();
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
  AUTOTUNE_RETURN_IF_ERROR(
      meta.Bind(1, std::string("application")).Bind(2, std::string("autotune")).Run());
  AUTOTUNE_RETURN_IF_ERROR(
      meta.Bind(1, std::string("schema_version")).Bind(2, std::to_string(kSchemaVersion)).Run());
  AUTOTUNE_RETURN_IF_ERROR(SetUserVersion(db, path));
  return tx.Commit().WithPrefix(path);
}

// Why the folder of path cannot take new files, "" when nothing says it cannot.
std::string FolderReadOnlyReason(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  const std::string folder = parent.empty() ? "." : parent.string();
  struct statvfs fs;
  if (statvfs(folder.c_str(), &fs) == 0 && (fs.f_flag & ST_RDONLY)) return "read-only file system";
  if (access(folder.c_str(), W_OK) != 0 && errno != ENOENT) {
    return errno == EROFS ? "read-only file system" : "read-only folder (no write permission)";
  }
  return "";
}

// What sqlite3_open_v2 opens for reading path. A WAL database needs its -shm file; on media
// where none exists and none can be made, SQLite cannot read it unless told the file is
// immutable. Cleanly closed, the file alone is the whole database then; an unfinished log
// beside it would be ignored, so that is refused.
Status ReadOnlyTarget(const std::string& path, std::string* target, int* flags) {
  *target = path;
  if (FileExists(path + "-shm") || FolderReadOnlyReason(path).empty()) return Status::Ok();
  if (FileExists(path + "-wal")) {
    return Status::IoError("cannot read database " + path + ": its write-ahead log " + path +
                           "-wal is unfinished and the media are read-only; copy both to "
                           "writable storage");
  }
  *target = "file:";
  for (const unsigned char c : path) {
    if (std::isalnum(c) || std::strchr("/-_.~", c)) {
      *target += static_cast<char>(c);
    } else {
      static const char kHex[] = "0123456789ABCDEF";
      *target += {'%', kHex[c >> 4], kHex[c & 15]};
    }
  }
  *target += "?immutable=1";
  *flags |= SQLITE_OPEN_URI;
  return Status::Ok();
}

}  // namespace

std::string Store::ReadOnlyReason(const std::string& path) {
  if (FileExists(path)) {
    struct statvfs fs;
    if (statvfs(path.c_str(), &fs) == 0 && (fs.f_flag & ST_RDONLY)) return "read-only file system";
    if (access(path.c_str(), W_OK) != 0 && errno != ENOENT) {
      return errno == EROFS ? "read-only file system" : "read-only file (no write permission)";
    }
  }
  // The folder takes a new database, and beside an existing one its -wal and -shm files.
  return FolderReadOnlyReason(path);
}

Status Store::Open(const std::string& path, Mode mode, std::unique_ptr<Store>* out) {
  if (mode == Mode::kReadOnly && !FileExists(path)) {
    return Status::NotFound(path + ": no such database (record a run first)");
  }
  if (mode == Mode::kReadWrite) {
    const std::string read_only = ReadOnlyReason(path);
    if (!read_only.empty()) {
      return Status::IoError("cannot write database " + path + ": " + read_only);
    }
  }
  int flags =
      mode == Mode::kReadOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  std::string target = path;
  if (mode == Mode::kReadOnly) AUTOTUNE_RETURN_IF_ERROR(ReadOnlyTarget(path, &target, &flags));
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(target.c_str(), &db, flags | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
    Status s = Status::IoError("cannot open database " + path + ": " +
                               (db ? sqlite3_errmsg(db) : "out of memory"));
    sqlite3_close(db);
    return s;
  }
  std::unique_ptr<Store> store(new Store(db, path));
  // SQLite opens a file it cannot write read-only without saying so.
  if (mode == Mode::kReadWrite && sqlite3_db_readonly(db, "main") == 1) {
    return Status::IoError("cannot write database " + path + ": read-only (opened read-only)");
  }
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  int tables = 0, version = 0;
  AUTOTUNE_RETURN_IF_ERROR(InspectSchema(db, path, &tables, &version));
  if (mode == Mode::kReadOnly) {
    if (tables == 0) AUTOTUNE_RETURN_IF_ERROR(ShowEmptySchema(db, path));
  } else {
    AUTOTUNE_RETURN_IF_ERROR(UseWal(db, path));
    if (tables == 0) AUTOTUNE_RETURN_IF_ERROR(CreateSchemaOnce(db, path, &tables, &version));
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

Store::WriteBatch::WriteBatch(sqlite3* db, const std::string& path)
    : tx_(std::make_unique<Transaction>(db)), path_(path) {}
Store::WriteBatch::~WriteBatch() = default;
const Status& Store::WriteBatch::status() const { return tx_->status(); }
Status Store::WriteBatch::Commit() { return tx_->Commit().WithPrefix(path_); }

std::unique_ptr<Store::WriteBatch> Store::BeginWrite() {
  return std::unique_ptr<WriteBatch>(new WriteBatch(db_, path_));
}

Status Store::AddCompleteRun(Trace* trace) {
  std::unique_ptr<WriteBatch> batch = BeginWrite();
  AUTOTUNE_RETURN_IF_ERROR(batch->status().WithPrefix(path_));
  RunInfo& run = trace->run;
  Status s = CreateRun(&run);
  for (size_t k = 0; s.ok() && k < trace->steps.size(); ++k) s = AppendStep(run.id, trace->steps[k]);
  if (s.ok()) s = FinishRun(run.id, true, &run);
  if (s.ok()) s = batch->Commit();
  if (!s.ok()) run.id = 0;  // nothing of it was stored
  return s;
}

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
  {  // what is stored must read back: ReadRunRow parses it with the same rules
    Workload check;
    Status readable;
    try {
      readable = ParseWorkloadJson(WorkloadToJson(info->workload).dump(), "workload", &check);
    } catch (const nlohmann::json::exception&) {  // a name that is not UTF-8
      readable = Status::InvalidArgument("workload: a name is not UTF-8");
    }
    if (!readable.ok()) return Status::InvalidArgument(readable.message());
  }
  Transaction tx(db_);
  AUTOTUNE_RETURN_IF_ERROR(tx.status().WithPrefix(path_));
  Statement insert(db_, R"sql(
    INSERT INTO runs (created_at, kind, command, workload_name, workload_json, scale,
      fusion_threshold_mb, cycle_time_ms, cache_capacity, hierarchical_allreduce,
      hierarchical_allgather, num_groups, knobs_json, nodes, ranks_per_node, hosts_json,
      backend, hardware, steps_planned, warmup_steps, source_run, framework, host_cores,
      nodes_per_host, untraced_step_ms, source_hash, traced_step_ms)
    VALUES (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
            ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?))sql");
  const Knobs& k = info->knobs;
  insert.Bind(1, std::string(RunKindName(info->kind)))
      .Bind(2, info->command)
      .Bind(3, info->workload.name)
      .Bind(4, WorkloadToJson(info->workload).dump())
      .Bind(5, info->scale)
      .Bind(6, k.fusion_threshold_mb)
      .Bind(7, k.cycle_time_ms)
      .Bind(8, k.cache_capacity)
      .Bind(9, k.hierarchical_allreduce ? 1 : 0)
      .Bind(10, k.hierarchical_allgather ? 1 : 0)
      .Bind(11, k.num_groups)
      .Bind(12, KnobsToJson(k).dump())
      .Bind(13, info->topology.nodes)
      .Bind(14, info->topology.ranks_per_node)
      .Bind(15, nlohmann::json(info->topology.hosts).dump())
      .Bind(16, std::string(BackendName(info->backend)))
      .Bind(17, info->hardware)
      .Bind(18, info->steps_planned)
      .Bind(19, info->warmup_steps);
  if (info->source_run > 0) {
    insert.Bind(20, info->source_run);
  } else {
    insert.BindNull(20);
  }
  insert.Bind(21, std::string(FrameworkName(info->framework)))
      .Bind(22, info->host.cores)
      .Bind(23, info->host.nodes_per_host)
      .Bind(24, info->untraced_step_ms)
      .Bind(25, info->source_hash)
      .Bind(26, info->traced_step_ms);
  AUTOTUNE_RETURN_IF_ERROR(insert.Run().WithPrefix(path_));
  info->id = sqlite3_last_insert_rowid(db_);
  Statement tensor(db_, R"sql(INSERT INTO tensors (run_id, tensor, name, op, dtype, elements,
                                bytes, ready_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?))sql");
  for (size_t i = 0; i < info->workload.tensors.size(); ++i) {
    const TensorSpec& t = info->workload.tensors[i];
    tensor.Bind(1, info->id)
        .Bind(2, static_cast<int64_t>(i))
        .Bind(3, t.name)
        .Bind(4, std::string(OpName(t.op)))
        .Bind(5, std::string(DTypeName(t.dtype)))
        .Bind(6, t.elements())
        .Bind(7, t.bytes())
        .Bind(8, t.ready_ms);
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

Status Store::FindRunBySourceHash(const std::string& hash, RunInfo* info) {
  Statement q(db_, (std::string(kRunColumns) + " WHERE source_hash = ? AND source_hash != '' "
                                                 "ORDER BY id LIMIT 1")
                       .c_str());
  q.Bind(1, hash);
  Status s;
  if (!q.Step(&s)) {
    AUTOTUNE_RETURN_IF_ERROR(s.WithPrefix(path_));
    return Status::NotFound("no run imported from this source in " + path_);
  }
  return ReadRunRow(q, path_, info);
}

Status Store::ListRuns(std::vector<RunInfo>* runs, std::vector<Status>* unreadable) {
  runs->clear();
  if (unreadable) unreadable->clear();
  Statement q(db_, (std::string(kRunColumns) + " ORDER BY id").c_str());
  Status s;
  while (q.Step(&s)) {
    RunInfo info;
    Status row = ReadRunRow(q, path_, &info);
    if (!row.ok() && unreadable) {
      unreadable->push_back(std::move(row));
      continue;
    }
    AUTOTUNE_RETURN_IF_ERROR(row);
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
  if (summary) {  // what is stored, should the update fail (the run was created incomplete)
    *summary = info;
    summary->complete = false;
  }

  Transaction tx(db_);
  AUTOTUNE_RETURN_IF_ERROR(tx.status().WithPrefix(path_));
  Statement update(db_, R"sql(UPDATE runs SET complete = ?, steps_recorded = ?,
      score_bytes_per_s = ?, step_ms_median = ?, step_ms_p95 = ? WHERE id = ?)sql");
  update.Bind(1, complete ? 1 : 0)
      .Bind(2, info.steps_recorded)
      .Bind(3, info.score_bytes_per_s)
      .Bind(4, info.step_ms_median)
      .Bind(5, info.step_ms_p95)
      .Bind(6, run_id);
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
  if (summary) summary->complete = complete;
  return Status::Ok();
}

}  // namespace autotune
