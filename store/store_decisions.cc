// Store: the decisions searches took (tables decisions and decision_runs, schema version 6).
#include <sqlite3.h>

#include <nlohmann/json.hpp>

#include "store/sqlite_statement.h"
#include "store/store.h"
#include "store/store_rows.h"

namespace autotune {
namespace {

constexpr const char* kDecisionColumns = R"sql(SELECT id, created_at, run_id, command,
    evidence_key, chosen_knobs_json, candidate_knobs_json, default_knobs_json, verdict,
    speedup, speedup_low, speedup_high, confidence, noise_cv, summary FROM decisions)sql";

Status ReadKnobs(const std::string& text, const std::string& row, const char* column,
                 Knobs* knobs) {
  Status s = KnobsFromJson(nlohmann::json::parse(text, nullptr, false), knobs);
  if (!s.ok()) return Status::Corruption(row + " " + column + ": " + s.message());
  return Status::Ok();
}

Status ReadDecisionRow(const Statement& q, const std::string& path, StoredDecision* d) {
  d->id = q.Int(0);
  d->created_at = q.Text(1);
  d->run_id = q.Int(2);
  d->command = q.Text(3);
  d->evidence_key = q.Text(4);
  const std::string row = path + ": decisions row " + std::to_string(d->id);
  AUTOTUNE_RETURN_IF_ERROR(ReadKnobs(q.Text(5), row, "chosen_knobs_json", &d->chosen));
  AUTOTUNE_RETURN_IF_ERROR(ReadKnobs(q.Text(6), row, "candidate_knobs_json", &d->candidate));
  AUTOTUNE_RETURN_IF_ERROR(ReadKnobs(q.Text(7), row, "default_knobs_json", &d->default_knobs));
  d->verdict = q.Text(8);
  d->has_speedup = !q.IsNull(9);
  if (d->has_speedup) {
    d->speedup = q.Double(9);
    d->speedup_low = q.Double(10);
    d->speedup_high = q.Double(11);
    d->confidence = q.Double(12);
  }
  d->noise_cv = q.Double(13);
  d->summary = q.Text(14);
  return Status::Ok();
}

Status ReadDecisionRuns(sqlite3* db, const std::string& path, StoredDecision* d) {
  Statement q(db, R"sql(SELECT run_id, role, steps, median_step_ms, outlier FROM decision_runs
      WHERE decision_id = ? ORDER BY seq)sql");
  q.Bind(1, d->id);
  Status st;
  d->runs.clear();
  while (q.Step(&st)) {
    DecisionRun r;
    r.run_id = q.Int(0);
    r.candidate = q.Text(1) == "candidate";
    r.steps = static_cast<int>(q.Int(2));
    r.median_step_ms = q.Double(3);
    r.outlier = q.Int(4) != 0;
    d->runs.push_back(r);
  }
  return st.WithPrefix(path);
}

// The decisions a query of kDecisionColumns + `where` selects (binding run_id to ?1 when
// run_id > 0), with their runs.
Status ReadDecisions(sqlite3* db, const std::string& path, const std::string& where,
                     int64_t run_id, std::vector<StoredDecision>* out) {
  ReadTransaction snapshot(db);
  const std::string sql = std::string(kDecisionColumns) + where;
  Statement q(db, sql.c_str());
  if (run_id > 0) q.Bind(1, run_id);
  Status st;
  out->clear();
  while (q.Step(&st)) {
    StoredDecision d;
    AUTOTUNE_RETURN_IF_ERROR(ReadDecisionRow(q, path, &d));
    out->push_back(std::move(d));
  }
  AUTOTUNE_RETURN_IF_ERROR(st.WithPrefix(path));
  for (StoredDecision& d : *out) AUTOTUNE_RETURN_IF_ERROR(ReadDecisionRuns(db, path, &d));
  return Status::Ok();
}

}  // namespace

Status Store::SaveDecision(StoredDecision* d) {
  Transaction tx(db_);
  AUTOTUNE_RETURN_IF_ERROR(tx.status().WithPrefix(path_));
  Statement insert(db_, R"sql(INSERT INTO decisions (created_at, run_id, command, evidence_key,
      chosen_knobs_json, candidate_knobs_json, default_knobs_json, verdict, speedup,
      speedup_low, speedup_high, confidence, noise_cv, summary)
      VALUES (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?))sql");
  insert.Bind(1, d->run_id)
      .Bind(2, d->command)
      .Bind(3, d->evidence_key)
      .Bind(4, KnobsToJson(d->chosen).dump())
      .Bind(5, KnobsToJson(d->candidate).dump())
      .Bind(6, KnobsToJson(d->default_knobs).dump())
      .Bind(7, d->verdict);
  if (d->has_speedup) {
    insert.Bind(8, d->speedup).Bind(9, d->speedup_low).Bind(10, d->speedup_high);
    insert.Bind(11, d->confidence);
  } else {
    for (int i = 8; i <= 11; ++i) insert.BindNull(i);
  }
  insert.Bind(12, d->noise_cv).Bind(13, d->summary);
  if (Status s = insert.Run(); !s.ok()) {
    if (sqlite3_extended_errcode(db_) == SQLITE_CONSTRAINT_CHECK) {
      return Status::InvalidArgument(path_ + ": decision verdict '" + d->verdict +
                                     "' is not one the schema lists");
    }
    return s.WithPrefix(path_);
  }
  const int64_t id = sqlite3_last_insert_rowid(db_);
  Statement run(db_, R"sql(INSERT INTO decision_runs (decision_id, seq, run_id, role, steps,
      median_step_ms, outlier) VALUES (?, ?, ?, ?, ?, ?, ?))sql");
  for (size_t i = 0; i < d->runs.size(); ++i) {
    const DecisionRun& r = d->runs[i];
    run.Bind(1, id)
        .Bind(2, static_cast<int64_t>(i))
        .Bind(3, r.run_id)
        .Bind(4, std::string(r.candidate ? "candidate" : "default"))
        .Bind(5, r.steps)
        .Bind(6, r.median_step_ms)
        .Bind(7, r.outlier ? 1 : 0);
    AUTOTUNE_RETURN_IF_ERROR(run.Run().WithPrefix(path_));
  }
  Statement created(db_, "SELECT created_at FROM decisions WHERE id = ?");
  created.Bind(1, id);
  Status st;
  if (created.Step(&st)) d->created_at = created.Text(0);
  AUTOTUNE_RETURN_IF_ERROR(st.WithPrefix(path_));
  AUTOTUNE_RETURN_IF_ERROR(tx.Commit().WithPrefix(path_));
  d->id = id;
  return Status::Ok();
}

Status Store::LatestDecision(int64_t run_id, StoredDecision* out) {
  std::vector<StoredDecision> found;
  AUTOTUNE_RETURN_IF_ERROR(ReadDecisions(
      db_, path_, " WHERE run_id = ?1 ORDER BY id DESC LIMIT 1", run_id, &found));
  if (found.empty()) {
    return Status::NotFound(path_ + ": no decision stored for run " + std::to_string(run_id));
  }
  *out = std::move(found.front());
  return Status::Ok();
}

Status Store::ListDecisions(std::vector<StoredDecision>* out) {
  return ReadDecisions(db_, path_, " ORDER BY id", 0, out);
}

}  // namespace autotune
