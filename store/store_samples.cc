// Store: calibrations and samples.
#include <sqlite3.h>

#include <nlohmann/json.hpp>

#include "store/sqlite_statement.h"
#include "store/store.h"
#include "store/store_rows.h"
#include "traces/knob_table.h"

namespace autotune {
namespace {

constexpr const char* kCalibrationColumns =
    "SELECT id, created_at, backend, nodes, ranks_per_node, hosts_json, hardware, "
    "tcp_eager_limit FROM calibrations";

Status ReadCalibrationRow(const Statement& q, const std::string& path, Calibration* c) {
  c->id = q.Int(0);
  c->created_at = q.Text(1);
  Status s = ParseBackend(q.Text(2), &c->backend);
  if (!s.ok()) {
    return Status::Corruption(path + ": calibration " + std::to_string(c->id) +
                              " backend: " + s.message());
  }
  c->topology.nodes = static_cast<int>(q.Int(3));
  c->topology.ranks_per_node = static_cast<int>(q.Int(4));
  nlohmann::json hosts = nlohmann::json::parse(q.Text(5), nullptr, false);
  c->topology.hosts.clear();
  if (hosts.is_array()) {
    for (const auto& h : hosts)
      c->topology.hosts.push_back(h.is_string() ? h.get<std::string>() : "");
  }
  c->hardware = q.Text(6);
  c->mpi_tcp_eager_limit = static_cast<int>(q.Int(7));
  if (c->mpi_tcp_eager_limit < 0) {
    return Status::Corruption(path + ": calibration " + std::to_string(c->id) + ": " +
                              KnobOfField(&Knobs::mpi_tcp_eager_limit).name + " below 0");
  }
  return Status::Ok();
}

}  // namespace

Status InsertSample(sqlite3* db, Sample* sample) {
  Statement insert(db, R"sql(INSERT INTO samples (created_at, fidelity, run_id, trace_run_id,
      calibration_id, workload, nodes, ranks_per_node, knobs_json, score_bytes_per_s, step_ms)
      VALUES (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?))sql");
  insert.Bind(1, std::string(FidelityName(sample->fidelity)));
  auto bind_id = [&](int i, int64_t id) {
    if (id > 0) {
      insert.Bind(i, id);
    } else {
      insert.BindNull(i);
    }
  };
  bind_id(2, sample->run_id);
  bind_id(3, sample->trace_run_id);
  bind_id(4, sample->calibration_id);
  insert.Bind(5, sample->workload)
      .Bind(6, sample->topology.nodes)
      .Bind(7, sample->topology.ranks_per_node)
      .Bind(8, KnobsToJson(sample->knobs).dump())
      .Bind(9, sample->score_bytes_per_s)
      .Bind(10, sample->step_ms);
  AUTOTUNE_RETURN_IF_ERROR(insert.Run());
  sample->id = sqlite3_last_insert_rowid(db);
  return Status::Ok();
}

Status Store::AddSamples(std::vector<Sample>* samples) {
  Transaction tx(db_);
  AUTOTUNE_RETURN_IF_ERROR(tx.status().WithPrefix(path_));
  for (Sample& s : *samples) AUTOTUNE_RETURN_IF_ERROR(InsertSample(db_, &s).WithPrefix(path_));
  return tx.Commit().WithPrefix(path_);
}

Status Store::ListSamples(const std::string& workload, const Topology& topology,
                          std::vector<Sample>* out) {
  SampleQuery query;
  query.workload = workload;
  query.topology = topology;
  return ListSamples(query, out);
}

Status Store::ListSamples(const SampleQuery& query, std::vector<Sample>* out) {
  out->clear();
  Statement q(db_, R"sql(SELECT s.id, s.created_at, s.fidelity, s.run_id, s.trace_run_id,
      s.calibration_id, s.knobs_json, s.score_bytes_per_s, s.step_ms
      FROM samples s LEFT JOIN runs r ON r.id = s.run_id
      WHERE s.workload = ?1 AND s.nodes = ?2 AND s.ranks_per_node = ?3
        AND (?4 IS NULL OR s.fidelity = ?4) AND (?5 IS NULL OR r.scale = ?5)
        AND (?6 IS NULL OR r.backend = ?6)
      ORDER BY s.id)sql");
  q.Bind(1, query.workload).Bind(2, query.topology.nodes).Bind(3, query.topology.ranks_per_node);
  if (query.fidelity) {
    q.Bind(4, std::string(FidelityName(*query.fidelity)));
  } else {
    q.BindNull(4);
  }
  if (query.scale) {
    q.Bind(5, *query.scale);
  } else {
    q.BindNull(5);
  }
  if (query.backend) {
    q.Bind(6, std::string(BackendName(*query.backend)));
  } else {
    q.BindNull(6);
  }
  Status st;
  while (q.Step(&st)) {
    Sample s;
    s.id = q.Int(0);
    s.created_at = q.Text(1);
    const std::string row = path_ + ": samples row " + std::to_string(s.id);
    Status fidelity = ParseFidelity(q.Text(2), &s.fidelity);
    if (!fidelity.ok()) return Status::Corruption(row + ": " + fidelity.message());
    s.run_id = q.IsNull(3) ? 0 : q.Int(3);
    s.trace_run_id = q.IsNull(4) ? 0 : q.Int(4);
    s.calibration_id = q.IsNull(5) ? 0 : q.Int(5);
    s.workload = query.workload;
    s.topology = query.topology;
    Status k = KnobsFromJson(nlohmann::json::parse(q.Text(6), nullptr, false), &s.knobs);
    if (!k.ok()) return Status::Corruption(row + ": " + k.message());
    s.score_bytes_per_s = q.Double(7);
    s.step_ms = q.Double(8);
    out->push_back(std::move(s));
  }
  return st.WithPrefix(path_);
}

Status Store::SaveCalibration(Calibration* c) {
  Transaction tx(db_);
  AUTOTUNE_RETURN_IF_ERROR(tx.status().WithPrefix(path_));
  Statement insert(db_, R"sql(INSERT INTO calibrations (created_at, backend, nodes,
      ranks_per_node, hosts_json, hardware, tcp_eager_limit)
      VALUES (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'), ?, ?, ?, ?, ?, ?))sql");
  insert.Bind(1, std::string(BackendName(c->backend)))
      .Bind(2, c->topology.nodes)
      .Bind(3, c->topology.ranks_per_node)
      .Bind(4, nlohmann::json(c->topology.hosts).dump())
      .Bind(5, c->hardware)
      .Bind(6, c->mpi_tcp_eager_limit);
  AUTOTUNE_RETURN_IF_ERROR(insert.Run().WithPrefix(path_));
  c->id = sqlite3_last_insert_rowid(db_);
  Statement point(db_, R"sql(INSERT INTO calibration_points (calibration_id, op, scope, ranks,
      bytes, repetitions, median_us, min_us, max_us, mean_us)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?))sql");
  for (const CalibrationPoint& p : c->points) {
    point.Bind(1, c->id)
        .Bind(2, std::string(OpName(p.op)))
        .Bind(3, std::string(ScopeName(p.scope)))
        .Bind(4, p.ranks)
        .Bind(5, p.bytes)
        .Bind(6, p.repetitions)
        .Bind(7, p.median_us)
        .Bind(8, p.min_us)
        .Bind(9, p.max_us)
        .Bind(10, p.mean_us);
    AUTOTUNE_RETURN_IF_ERROR(point.Run().WithPrefix(path_));
  }
  AUTOTUNE_RETURN_IF_ERROR(tx.Commit().WithPrefix(path_));
  Calibration stored;
  AUTOTUNE_RETURN_IF_ERROR(GetCalibration(c->id, &stored));
  c->created_at = stored.created_at;
  return Status::Ok();
}

Status Store::GetCalibration(int64_t id, Calibration* out) {
  ReadTransaction snapshot(db_);
  Calibration c;
  {
    Statement q(db_, (std::string(kCalibrationColumns) + " WHERE id = ?").c_str());
    q.Bind(1, id);
    Status s;
    if (!q.Step(&s)) {
      AUTOTUNE_RETURN_IF_ERROR(s.WithPrefix(path_));
      return Status::NotFound("calibration " + std::to_string(id) + " not found in " + path_);
    }
    AUTOTUNE_RETURN_IF_ERROR(ReadCalibrationRow(q, path_, &c));
  }
  Statement q(db_, R"sql(SELECT op, scope, ranks, bytes, repetitions, median_us, min_us, max_us,
      mean_us FROM calibration_points WHERE calibration_id = ? ORDER BY op, scope, bytes)sql");
  q.Bind(1, id);
  Status s;
  while (q.Step(&s)) {
    CalibrationPoint p;
    Status op = ParseOp(q.Text(0), &p.op);
    Status scope = ParseScope(q.Text(1), &p.scope);
    if (!op.ok() || !scope.ok()) {
      return Status::Corruption(path_ + ": calibration " + std::to_string(id) +
                                ": unknown op or scope in calibration_points");
    }
    p.ranks = static_cast<int>(q.Int(2));
    p.bytes = q.Int(3);
    p.repetitions = static_cast<int>(q.Int(4));
    p.median_us = q.Double(5);
    p.min_us = q.Double(6);
    p.max_us = q.Double(7);
    p.mean_us = q.Double(8);
    if (p.bytes <= 0 || !(p.median_us > 0) || !(p.mean_us >= 0)) {
      return Status::Corruption(path_ + ": calibration " + std::to_string(id) +
                                ": a point has bytes <= 0, median_us <= 0 or mean_us < 0");
    }
    c.points.push_back(p);
  }
  AUTOTUNE_RETURN_IF_ERROR(s.WithPrefix(path_));
  *out = std::move(c);
  return Status::Ok();
}

Status Store::FindCalibration(const Topology& topology, BackendKind backend, Calibration* out,
                              int mpi_tcp_eager_limit) {
  const std::string backend_name = BackendName(backend);
  Statement q(db_, (std::string(kCalibrationColumns) +
                    " WHERE nodes = ? AND ranks_per_node = ? AND backend = ? AND "
                    "tcp_eager_limit = ? ORDER BY id DESC")
                       .c_str());
  q.Bind(1, topology.nodes)
      .Bind(2, topology.ranks_per_node)
      .Bind(3, backend_name)
      .Bind(4, mpi_tcp_eager_limit);
  Status s;
  if (!q.Step(&s)) {
    AUTOTUNE_RETURN_IF_ERROR(s.WithPrefix(path_));
    std::string at;
    if (mpi_tcp_eager_limit > 0) {
      at = std::string(" at ") + KnobOfField(&Knobs::mpi_tcp_eager_limit).name + " " +
           std::to_string(mpi_tcp_eager_limit);
    }
    return Status::NotFound("no " + backend_name + " calibration for topology " + topology.key() +
                            at + " in " + path_);
  }
  return GetCalibration(q.Int(0), out);
}

Status Store::ListCalibrations(std::vector<Calibration>* out) {
  out->clear();
  Statement q(db_, (std::string(kCalibrationColumns) + " ORDER BY id").c_str());
  Status s;
  while (q.Step(&s)) {
    Calibration c;
    AUTOTUNE_RETURN_IF_ERROR(ReadCalibrationRow(q, path_, &c));
    out->push_back(std::move(c));
  }
  return s.WithPrefix(path_);
}

}  // namespace autotune
