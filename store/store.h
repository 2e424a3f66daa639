// Store: autotune's SQLite database (runs, traces, calibrations, samples).
//
// One file, WAL journal, every write a transaction, SQL only through prepared statements.
// Several processes may use one file at once: a write waits (up to a minute) for another's
// to end, and a read of several tables (LoadTrace) sees one snapshot, never half a step.
// The schema is documented in store/schema.sql and versioned (meta.schema_version);
// opening a database with a newer schema, or a file that is not an autotune database,
// fails with a one-line error and touches nothing. A read-write open of an older schema
// migrates it in one transaction; a read-only open reads it as it is.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "traces/calibration.h"
#include "traces/fidelity.h"
#include "traces/knobs.h"
#include "traces/status.h"
#include "traces/trace.h"

struct sqlite3;

namespace autotune {

class Transaction;

inline constexpr int kSchemaVersion = 8;

// A scored point in knob space, measured (a complete measured or imported run) or simulated
// (a replay).
struct Sample {
  int64_t id = 0;
  Fidelity fidelity = Fidelity::kSimulated;
  int64_t run_id = 0;          // measured: the run; simulated: the simulated run row, or 0
  int64_t trace_run_id = 0;    // the recorded trace it derives from
  int64_t calibration_id = 0;  // network model used (simulated), 0 if none
  std::string workload;
  Topology topology;
  Knobs knobs;
  double score_bytes_per_s = 0.0;  // ScoreBytesPerSecond over the sample's steps
  double step_ms = 0.0;            // median step time, ms
  std::string created_at;
};

// Which samples ListSamples returns. Workload and topology shape always match; an unset
// field matches every sample.
struct SampleQuery {
  std::string workload;
  Topology topology;                 // its shape: nodes and ranks per node
  std::optional<Fidelity> fidelity;  // default: both
  // Of the run in the sample's run_id; a sample without a run matches neither when set.
  std::optional<double> scale;         // the run's --scale, exactly
  std::optional<BackendKind> backend;  // the run's backend
};

// One real run behind a stored decision.
struct DecisionRun {
  int64_t run_id = 0;        // the real run; 0 when it is not a stored run
  bool candidate = false;    // true: a run of the candidate; false: of the default
  int steps = 0;
  double median_step_ms = 0.0;
  // Left out of the speedup: an outlier among its repeats, or of two runs that disagree the
  // one set aside by the decision rule's cautious reading (tuner/run_comparison.h, rule 2).
  bool outlier = false;
};

// A search's decision as stored (schema.sql, table decisions): what it chose and why.
struct StoredDecision {
  int64_t id = 0;
  std::string created_at;
  int64_t run_id = 0;        // the run searched from
  std::string command;       // "search", "search --live", "record --autotune"
  std::string evidence_key;  // what it was decided from (the caller's key; equal: same)
  Knobs chosen;              // the setting written
  Knobs candidate;           // the setting judged against the default
  Knobs default_knobs;
  std::string verdict;       // tuner::VerdictName of the verdict
  bool has_speedup = false;  // the four below are stored (else NULL)
  double speedup = 0.0;      // candidate over default
  double speedup_low = 0.0;
  double speedup_high = 0.0;
  double confidence = 0.0;
  double noise_cv = 0.0;
  std::string summary;            // the verdict line as printed
  std::vector<DecisionRun> runs;  // in the order they ran
};

class Store {
 public:
  enum class Mode { kReadWrite, kReadOnly };

  // Opens (kReadWrite: creating if missing, migrating an older schema) the database at path.
  // Fails with one line naming the path when it is unwritable (kReadWrite: "cannot write
  // database PATH: read-only ...", before anything is created), not an autotune database,
  // or of a newer schema. kReadOnly reads a database on read-only media too.
  static Status Open(const std::string& path, Mode mode, std::unique_ptr<Store>* out);
  // Why a database at path cannot be written ("read-only file system", "read-only file (no
  // write permission)", "read-only folder (...)"), or "" when nothing says it cannot.
  static std::string ReadOnlyReason(const std::string& path);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  const std::string& path() const { return path_; }

  // One command's writes as one transaction. Every write made through this store while the
  // batch lives is stored when Commit() succeeds, and not at all when the batch ends
  // uncommitted (an error on the way: whatever fails, the database is as it was). Waits, as
  // every write does, for another process's write to end. At most one batch at a time.
  class WriteBatch {
   public:
    ~WriteBatch();
    WriteBatch(const WriteBatch&) = delete;
    WriteBatch& operator=(const WriteBatch&) = delete;
    // Not OK when the transaction could not begin (then nothing is stored either way).
    const Status& status() const;
    Status Commit();

   private:
    friend class Store;
    WriteBatch(sqlite3* db, const std::string& path);
    std::unique_ptr<Transaction> tx_;
    std::string path_;
  };
  std::unique_ptr<WriteBatch> BeginWrite();

  // A whole run (trace->run, every step of trace->steps) stored in one transaction and
  // finished as complete (FinishRun): all of it or, on any error, nothing. Sets trace->run
  // to the stored run (id, summary; id 0 after an error). Refuses, before writing, a workload that would not read
  // back (ParseWorkloadJson's rules).
  Status AddCompleteRun(Trace* trace);
  // The oldest run whose source_hash is `hash` (not empty); NotFound when there is none.
  Status FindRunBySourceHash(const std::string& hash, RunInfo* info);

  // --- runs -------------------------------------------------------------------------
  // Inserts a run (complete = false). Sets info->id and info->created_at.
  Status CreateRun(RunInfo* info);
  // Appends one measured step with all its rows, in one transaction. A full disk fails with
  // "PATH: ...: disk full (SQLITE_FULL)" and leaves the stored steps as they were.
  Status AppendStep(int64_t run_id, const StepTrace& step);
  // Computes the summary from the stored steps (score: ScoreBytesPerSecond over them, step
  // time median and p95) and marks the run complete or not.
  // A complete measured or imported run (IsMeasuredKind) also becomes a measured sample,
  // unless it already holds its own measured samples (one per setting of a run tuned online).
  // When the update fails, *summary still holds the stored steps' summary, marked incomplete.
  Status FinishRun(int64_t run_id, bool complete, RunInfo* summary = nullptr);
  // Stores why the run ended incomplete (one line; the first reason given wins: later
  // calls leave a stored reason alone). NotFound when there is no such run.
  Status SetEndReason(int64_t run_id, const std::string& reason);
  // NotFound names the id when there is no such run.
  Status GetRun(int64_t run_id, RunInfo* info);
  // Every run, oldest first. With `unreadable` given, a run whose row cannot be read (a
  // Corruption naming the run) is left out and its error added there instead, so that one
  // bad row does not hide the others; without it, the first such error is returned.
  Status ListRuns(std::vector<RunInfo>* runs, std::vector<Status>* unreadable = nullptr);
  // Step times (ms) and scores of a run's stored steps, in step order.
  Status GetStepSeries(int64_t run_id, std::vector<double>* step_ms, std::vector<double>* score);
  // The whole trace. Corruption names the table and row when rows are inconsistent.
  Status LoadTrace(int64_t run_id, Trace* trace);

  // --- calibrations -----------------------------------------------------------------
  Status SaveCalibration(Calibration* calibration);  // sets id and created_at
  // The newest calibration for the topology's shape and backend made at Open MPI's TCP eager
  // limit mpi_tcp_eager_limit (0: Open MPI's own; Calibration::mpi_tcp_eager_limit);
  // NotFound if none.
  Status FindCalibration(const Topology& topology, BackendKind backend, Calibration* out,
                         int mpi_tcp_eager_limit = 0);
  Status GetCalibration(int64_t id, Calibration* out);
  Status ListCalibrations(std::vector<Calibration>* out);  // points left empty

  // --- samples ----------------------------------------------------------------------
  Status AddSamples(std::vector<Sample>* samples);  // one transaction; sets ids
  // Samples for a workload name and topology shape (both fidelities), oldest first.
  Status ListSamples(const std::string& workload, const Topology& topology,
                     std::vector<Sample>* out);
  // The samples `query` selects, oldest first.
  Status ListSamples(const SampleQuery& query, std::vector<Sample>* out);

  // --- decisions --------------------------------------------------------------------
  // Stores a decision with its runs in one transaction; sets id and created_at. Refuses
  // (InvalidArgument, nothing written) a verdict the schema does not list.
  Status SaveDecision(StoredDecision* decision);
  // The newest decision taken from run `run_id`; NotFound when there is none.
  Status LatestDecision(int64_t run_id, StoredDecision* out);
  // Every decision, oldest first, with its runs.
  Status ListDecisions(std::vector<StoredDecision>* out);

 private:
  Store(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  Status Exec(const char* sql);
  sqlite3* db_;
  std::string path_;
  friend class Transaction;
};

}  // namespace autotune
