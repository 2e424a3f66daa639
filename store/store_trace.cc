// Store: rows of runs, steps and traces.
#include <sqlite3.h>

#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "store/sqlite_statement.h"
#include "store/store.h"
#include "store/store_rows.h"

namespace autotune {
namespace {

std::string JoinInts(const std::vector<int>& values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(values[i]);
  }
  return out;
}

bool SplitInts(const std::string& text, std::vector<int>* out) {
  out->clear();
  if (text.empty()) return true;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    char* end = nullptr;
    long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < 0) return false;
    out->push_back(static_cast<int>(v));
  }
  return true;
}

Status RowError(const std::string& path, const std::string& table, int64_t run_id, int step,
                const std::string& what) {
  return Status::Corruption(path + ": " + table + " row of run " + std::to_string(run_id) +
                            " step " + std::to_string(step) + ": " + what);
}

// What the per-table readers of LoadTrace share: where to read, and the ranges rows must fit.
struct TraceRowContext {
  sqlite3* db;
  const std::string& path;
  int64_t run_id;
  int tensors;  // tensors in the run's workload
  int world;    // ranks in the run's topology
};

using StepIndex = std::map<int, size_t>;  // step -> position in Trace::steps

// Appends the run's step rows, in step order, to trace->steps and records each step's position
// in *index; a row with step_ms <= 0 is Corruption.
Status ReadStepRows(const TraceRowContext& ctx, Trace* trace, StepIndex* index) {
  Statement q(ctx.db, R"sql(SELECT step, step_ms, backward_start_us, bytes, score_bytes_per_s
                            FROM steps WHERE run_id = ? ORDER BY step)sql");
  q.Bind(1, ctx.run_id);
  Status s;
  while (q.Step(&s)) {
    StepTrace st;
    st.step = static_cast<int>(q.Int(0));
    st.step_ms = q.Double(1);
    st.backward_start_us = q.Double(2);
    st.bytes = q.Int(3);
    st.score_bytes_per_s = q.Double(4);
    if (!(st.step_ms > 0)) {
      return RowError(ctx.path, "steps", ctx.run_id, st.step, "step_ms <= 0");
    }
    (*index)[st.step] = trace->steps.size();
    trace->steps.push_back(std::move(st));
  }
  return s.WithPrefix(ctx.path);
}

// Appends the run's tensor_events rows to their steps in *trace; a row without a step row or
// with a rank or tensor out of range is Corruption.
Status ReadTensorEventRows(const TraceRowContext& ctx, const StepIndex& index, Trace* trace) {
  Statement q(ctx.db, R"sql(SELECT step, rank, tensor, ready_us, done_us FROM tensor_events
                            WHERE run_id = ? ORDER BY step, rank, tensor)sql");
  q.Bind(1, ctx.run_id);
  Status s;
  while (q.Step(&s)) {
    int step = static_cast<int>(q.Int(0));
    TensorEvent e{static_cast<int>(q.Int(1)), static_cast<int>(q.Int(2)), q.Double(3), q.Double(4)};
    auto it = index.find(step);
    if (it == index.end()) {
      return RowError(ctx.path, "tensor_events", ctx.run_id, step, "no step row");
    }
    if (e.rank < 0 || e.rank >= ctx.world || e.tensor < 0 || e.tensor >= ctx.tensors) {
      return RowError(ctx.path, "tensor_events", ctx.run_id, step, "rank or tensor out of range");
    }
    trace->steps[it->second].tensors.push_back(e);
  }
  return s.WithPrefix(ctx.path);
}

// Appends the run's cycles rows to their steps in *trace; a row without a step row is
// Corruption.
Status ReadCycleRows(const TraceRowContext& ctx, const StepIndex& index, Trace* trace) {
  Statement q(ctx.db, R"sql(SELECT step, rank, cycle, start_us, negotiate_end_us, submitted,
                            cache_hits, responses, collectives FROM cycles WHERE run_id = ?
                            ORDER BY step, rank, cycle)sql");
  q.Bind(1, ctx.run_id);
  Status s;
  while (q.Step(&s)) {
    int step = static_cast<int>(q.Int(0));
    auto it = index.find(step);
    if (it == index.end()) return RowError(ctx.path, "cycles", ctx.run_id, step, "no step row");
    CycleRecord c;
    c.rank = static_cast<int>(q.Int(1));
    c.cycle = static_cast<int>(q.Int(2));
    c.start_us = q.Double(3);
    c.negotiate_end_us = q.Double(4);
    c.submitted = static_cast<int>(q.Int(5));
    c.cache_hits = static_cast<int>(q.Int(6));
    c.responses = static_cast<int>(q.Int(7));
    c.collectives = static_cast<int>(q.Int(8));
    trace->steps[it->second].cycles.push_back(c);
  }
  return s.WithPrefix(ctx.path);
}

// Appends the run's collectives rows to their steps in *trace; a row without a step row, with
// an unknown op, or with a malformed or out-of-range tensor list is Corruption.
Status ReadCollectiveRows(const TraceRowContext& ctx, const StepIndex& index, Trace* trace) {
  Statement q(ctx.db, R"sql(SELECT step, rank, seq, cycle, op, algorithm, bytes, tensors,
                            start_us, copy_in_end_us, comm_end_us, end_us FROM collectives
                            WHERE run_id = ? ORDER BY step, rank, seq)sql");
  q.Bind(1, ctx.run_id);
  Status s;
  while (q.Step(&s)) {
    int step = static_cast<int>(q.Int(0));
    auto it = index.find(step);
    if (it == index.end()) {
      return RowError(ctx.path, "collectives", ctx.run_id, step, "no step row");
    }
    CollectiveRecord c;
    c.rank = static_cast<int>(q.Int(1));
    c.seq = static_cast<int>(q.Int(2));
    c.cycle = static_cast<int>(q.Int(3));
    if (!ParseOp(q.Text(4), &c.op).ok()) {
      return RowError(ctx.path, "collectives", ctx.run_id, step,
                      "unknown op \"" + q.Text(4) + "\"");
    }
    c.algorithm = q.Text(5) == "hierarchical" ? Algorithm::kHierarchical : Algorithm::kFlat;
    c.bytes = q.Int(6);
    if (!SplitInts(q.Text(7), &c.tensors)) {
      return RowError(ctx.path, "collectives", ctx.run_id, step, "malformed tensor list");
    }
    for (int member : c.tensors) {
      if (member >= ctx.tensors) {
        return RowError(ctx.path, "collectives", ctx.run_id, step, "tensor index out of range");
      }
    }
    c.start_us = q.Double(8);
    c.copy_in_end_us = q.Double(9);
    c.comm_end_us = q.Double(10);
    c.end_us = q.Double(11);
    trace->steps[it->second].collectives.push_back(std::move(c));
  }
  return s.WithPrefix(ctx.path);
}

}  // namespace

Status ReadRunRow(const Statement& q, const std::string& path, RunInfo* info) {
  RunInfo r;
  r.id = q.Int(0);
  r.created_at = q.Text(1);
  r.command = q.Text(3);
  const std::string where = path + ": run " + std::to_string(r.id);
  Status s = ParseRunKind(q.Text(2), &r.kind);
  if (!s.ok()) return Status::Corruption(where + " kind: " + s.message());
  s = ParseWorkloadJson(q.Text(4), where + " workload_json", &r.workload);
  if (!s.ok()) return Status::Corruption(s.message());
  r.scale = q.Double(5);
  nlohmann::json knobs = nlohmann::json::parse(q.Text(6), nullptr, false);
  s = KnobsFromJson(knobs, &r.knobs);
  if (!s.ok()) return Status::Corruption(where + " knobs_json: " + s.message());
  r.topology.nodes = static_cast<int>(q.Int(7));
  r.topology.ranks_per_node = static_cast<int>(q.Int(8));
  nlohmann::json hosts = nlohmann::json::parse(q.Text(9), nullptr, false);
  if (!hosts.is_array()) return Status::Corruption(where + " hosts_json is not a list");
  for (const auto& h : hosts) r.topology.hosts.push_back(h.is_string() ? h.get<std::string>() : "");
  if (r.topology.nodes < 1 || r.topology.ranks_per_node < 1) {
    return Status::Corruption(where + ": topology must have nodes, ranks_per_node >= 1");
  }
  s = ParseBackend(q.Text(10), &r.backend);
  if (s.ok() && r.backend == BackendKind::kGloo) {  // runs record mpi or nccl (backend_kind.h)
    s = Status::InvalidArgument("backend \"gloo\" is a calibration's library, not a run's");
  }
  if (!s.ok()) return Status::Corruption(where + " backend: " + s.message());
  r.hardware = q.Text(11);
  r.steps_planned = static_cast<int>(q.Int(12));
  r.warmup_steps = static_cast<int>(q.Int(13));
  r.complete = q.Int(14) != 0;
  r.steps_recorded = static_cast<int>(q.Int(15));
  r.score_bytes_per_s = q.Double(16);
  r.step_ms_median = q.Double(17);
  r.step_ms_p95 = q.Double(18);
  r.source_run = q.IsNull(19) ? 0 : q.Int(19);
  r.end_reason = q.Text(20);
  s = ParseFramework(q.Text(21), &r.framework);
  if (!s.ok()) return Status::Corruption(where + " framework: " + s.message());
  r.host.cores = static_cast<int>(q.Int(22));
  r.host.nodes_per_host = std::max(1, static_cast<int>(q.Int(23)));
  r.untraced_step_ms = q.Double(24);
  r.source_hash = q.Text(25);
  r.traced_step_ms = q.Double(26);
  *info = std::move(r);
  return Status::Ok();
}

Status Store::AppendStep(int64_t run_id, const StepTrace& step) {
  Transaction tx(db_);
  AUTOTUNE_RETURN_IF_ERROR(tx.status().WithPrefix(path_));
  Statement insert_step(db_, R"sql(INSERT INTO steps (run_id, step, step_ms, backward_start_us,
      bytes, score_bytes_per_s) VALUES (?, ?, ?, ?, ?, ?))sql");
  insert_step.Bind(1, run_id)
      .Bind(2, step.step)
      .Bind(3, step.step_ms)
      .Bind(4, step.backward_start_us)
      .Bind(5, step.bytes)
      .Bind(6, step.score_bytes_per_s);
  AUTOTUNE_RETURN_IF_ERROR(insert_step.Run().WithPrefix(path_));

  Statement tensor(db_, R"sql(INSERT INTO tensor_events (run_id, step, rank, tensor, ready_us,
      done_us) VALUES (?, ?, ?, ?, ?, ?))sql");
  for (const TensorEvent& e : step.tensors) {
    tensor.Bind(1, run_id)
        .Bind(2, step.step)
        .Bind(3, e.rank)
        .Bind(4, e.tensor)
        .Bind(5, e.ready_us)
        .Bind(6, e.done_us);
    AUTOTUNE_RETURN_IF_ERROR(tensor.Run().WithPrefix(path_));
  }
  Statement cycle(db_, R"sql(INSERT INTO cycles (run_id, step, rank, cycle, start_us,
      negotiate_end_us, submitted, cache_hits, responses, collectives)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?))sql");
  for (const CycleRecord& c : step.cycles) {
    cycle.Bind(1, run_id)
        .Bind(2, step.step)
        .Bind(3, c.rank)
        .Bind(4, c.cycle)
        .Bind(5, c.start_us)
        .Bind(6, c.negotiate_end_us)
        .Bind(7, c.submitted)
        .Bind(8, c.cache_hits)
        .Bind(9, c.responses)
        .Bind(10, c.collectives);
    AUTOTUNE_RETURN_IF_ERROR(cycle.Run().WithPrefix(path_));
  }
  Statement coll(db_, R"sql(INSERT INTO collectives (run_id, step, rank, seq, cycle, op,
      algorithm, bytes, tensor_count, tensors, start_us, copy_in_end_us, comm_end_us, end_us)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?))sql");
  for (const CollectiveRecord& c : step.collectives) {
    coll.Bind(1, run_id)
        .Bind(2, step.step)
        .Bind(3, c.rank)
        .Bind(4, c.seq)
        .Bind(5, c.cycle)
        .Bind(6, std::string(OpName(c.op)))
        .Bind(7, std::string(AlgorithmName(c.algorithm)))
        .Bind(8, c.bytes)
        .Bind(9, static_cast<int64_t>(c.tensors.size()))
        .Bind(10, JoinInts(c.tensors))
        .Bind(11, c.start_us)
        .Bind(12, c.copy_in_end_us)
        .Bind(13, c.comm_end_us)
        .Bind(14, c.end_us);
    AUTOTUNE_RETURN_IF_ERROR(coll.Run().WithPrefix(path_));
  }
  Statement count(db_, "UPDATE runs SET steps_recorded = steps_recorded + 1 WHERE id = ?");
  AUTOTUNE_RETURN_IF_ERROR(count.Bind(1, run_id).Run().WithPrefix(path_));
  return tx.Commit().WithPrefix(path_);
}

Status Store::GetStepSeries(int64_t run_id, std::vector<double>* step_ms,
                            std::vector<double>* score) {
  step_ms->clear();
  score->clear();
  Statement q(db_, "SELECT step_ms, score_bytes_per_s FROM steps WHERE run_id = ? ORDER BY step");
  q.Bind(1, run_id);
  Status s;
  while (q.Step(&s)) {
    step_ms->push_back(q.Double(0));
    score->push_back(q.Double(1));
  }
  return s.WithPrefix(path_);
}

Status Store::LoadTrace(int64_t run_id, Trace* trace) {
  ReadTransaction snapshot(db_);  // a step committed between two tables' reads stays unseen
  Trace t;
  AUTOTUNE_RETURN_IF_ERROR(GetRun(run_id, &t.run));
  const TraceRowContext ctx{db_, path_, run_id, static_cast<int>(t.run.workload.tensors.size()),
                            t.run.topology.world_size()};
  StepIndex index;
  AUTOTUNE_RETURN_IF_ERROR(ReadStepRows(ctx, &t, &index));
  AUTOTUNE_RETURN_IF_ERROR(ReadTensorEventRows(ctx, index, &t));
  AUTOTUNE_RETURN_IF_ERROR(ReadCycleRows(ctx, index, &t));
  AUTOTUNE_RETURN_IF_ERROR(ReadCollectiveRows(ctx, index, &t));
  *trace = std::move(t);
  return Status::Ok();
}

}  // namespace autotune
