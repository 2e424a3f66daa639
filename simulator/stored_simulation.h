// The simulation of a stored run: store -> trace -> calibration -> Simulation, in one place for
// `simulate`, `search` and `record --autotune`.
#pragma once

#include <cstdint>
#include <optional>

#include "simulator/simulation.h"
#include "store/store.h"
#include "traces/calibration.h"
#include "traces/status.h"
#include "traces/trace.h"

namespace autotune::sim {

// The topology to predict; 0 keeps the recorded run's value.
struct TargetShape {
  int nodes = 0;
  int ranks_per_node = 0;
};

// What to do when the store holds no calibration of the run's topology and backend.
enum class IfUncalibrated {
  kFail,          // return the NotFound (simulate: nothing to predict with)
  kNoSimulation,  // return OK without a simulation, the NotFound in `missing` (search and
                  // record --autotune go on with measured samples)
};

struct StoredSimulation {
  RunInfo run;                           // the recorded or imported run replayed
  Calibration calibration;               // its network model's source (with a simulation)
  std::optional<Simulation> simulation;  // empty only under kNoSimulation
  Status missing;  // NotFound "no calibration for topology T (B) in DB; make one with: CMD"
};

// Loads run `run_id`'s trace and the newest calibration of its topology shape and backend from
// `store`, and builds their simulation predicting `target`. Errors, each one line: the
// store's NotFound naming the run when there is none; InvalidArgument when the run is not a
// measured or imported run (IsMeasuredKind) or has no recorded steps; the missing
// calibration (see IfUncalibrated); Simulation::Build's errors.
Status LoadSimulation(Store& store, int64_t run_id, const TargetShape& target,
                      IfUncalibrated if_uncalibrated, StoredSimulation* out);

}  // namespace autotune::sim
