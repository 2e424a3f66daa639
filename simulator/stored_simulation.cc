#include "simulator/stored_simulation.h"

#include <string>
#include <utility>

namespace autotune::sim {
namespace {

// The command that records the missing calibration on the run's topology.
std::string CalibrateHint(const RunInfo& run, const std::string& db) {
  const Topology& t = run.topology;
  if (t.nodes > 1) {
    return "mpirun -np " + std::to_string(t.world_size()) +
           " --hostfile HOSTS autotune calibrate --db " + db + " (" + std::to_string(t.nodes) +
           " nodes x " + std::to_string(t.ranks_per_node) + " ranks)";
  }
  return "autotune calibrate --np " + std::to_string(t.world_size()) + " --db " + db;
}

}  // namespace

Status LoadSimulation(Store& store, int64_t run_id, const TargetShape& target,
                      IfUncalibrated if_uncalibrated, StoredSimulation* out) {
  Trace trace;
  AUTOTUNE_RETURN_IF_ERROR(store.LoadTrace(run_id, &trace));
  const RunInfo& run = trace.run;
  if (!IsMeasuredKind(run.kind)) {
    return Status::InvalidArgument("run " + std::to_string(run_id) + " is a " +
                                   RunKindName(run.kind) +
                                   " run (of run " + std::to_string(run.source_run) +
                                   "); simulate a measured run (recorded or imported)");
  }
  if (trace.steps.empty()) {
    return Status::InvalidArgument("run " + std::to_string(run_id) +
                                   " has no recorded steps (no trace rows to replay)");
  }
  StoredSimulation loaded;
  loaded.run = run;
  Status found = store.FindCalibration(run.topology, run.backend, &loaded.calibration);
  if (found.code() == Status::Code::kNotFound) {
    loaded.missing = Status::NotFound("no calibration for topology " + run.topology.key() + " (" +
                                      BackendName(run.backend) + ") in " + store.path() +
                                      "; make one with: " + CalibrateHint(run, store.path()));
    if (if_uncalibrated == IfUncalibrated::kFail) return loaded.missing;
    *out = std::move(loaded);
    return Status::Ok();
  }
  AUTOTUNE_RETURN_IF_ERROR(found);
  Topology to = run.topology;
  if (target.nodes > 0) to.nodes = target.nodes;
  if (target.ranks_per_node > 0) to.ranks_per_node = target.ranks_per_node;
  if (!to.SameShape(run.topology)) to.hosts.clear();
  loaded.simulation.emplace();
  AUTOTUNE_RETURN_IF_ERROR(Simulation::Build(trace, loaded.calibration, to, &*loaded.simulation));
  *out = std::move(loaded);
  return Status::Ok();
}

}  // namespace autotune::sim
