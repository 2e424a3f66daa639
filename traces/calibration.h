// Calibration: measured collective time against message size, per communicator scope.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "traces/backend_kind.h"
#include "traces/topology.h"
#include "traces/workload.h"

namespace autotune {

// world: all ranks, flat; intra: ranks of one node; cross: one rank per node (the
// communicator of one local rank); hierarchical: the composed three-step collective on
// the world; copy: fusion buffer copy-in (bytes copied, one rank).
enum class Scope { kWorld, kIntra, kCross, kHierarchical, kCopy };
const char* ScopeName(Scope s);
Status ParseScope(const std::string& s, Scope* out);

struct CalibrationPoint {
  Op op = Op::kAllreduce;
  Scope scope = Scope::kWorld;
  int ranks = 0;             // communicator size
  int64_t bytes = 0;         // message bytes per rank (allgather: bytes each rank sends)
  int repetitions = 0;
  double median_us = 0.0;
  double min_us = 0.0;
  double max_us = 0.0;
  // The mean of the repetitions (what a job that runs the collective many times pays: a
  // size whose times have a tail, as Open MPI's TCP rendezvous gives, averages above its
  // median); 0 = not measured (a calibrate of schema 7 and older, gloo's, the fusion copy).
  double mean_us = 0.0;
};

struct Calibration {
  int64_t id = 0;
  std::string created_at;
  Topology topology;
  BackendKind backend = BackendKind::kMpi;
  std::string hardware;
  // Open MPI's TCP eager limit the collectives ran under (the knob mpi_tcp_eager_limit,
  // bytes; 0 = Open MPI's own). A calibrate at another limit than a job's tells the simulator
  // what that knob does to the job's collectives (simulator/eager_limit.h).
  int mpi_tcp_eager_limit = 0;
  std::vector<CalibrationPoint> points;
};

}  // namespace autotune
