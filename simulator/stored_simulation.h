// The simulation of a stored run: store -> trace -> calibration -> Simulation, in one place for
// `simulate`, `search` and `record --autotune`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "simulator/self_calibration.h"
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

// What a simulation of a run fits its network model to, and one line naming it.
struct NetworkChoice {
  Calibration calibration;
  // "calibration 3", "the own collectives of run 5 (self-calibrated; no calibrate of 2x2)" or
  // both with how they disagree.
  std::string source;
  std::vector<int64_t> self_calibration_runs;  // imported runs whose collectives were used
  bool measured_calibration = false;           // an `autotune calibrate` was used
  // That calibrate as stored (before any scaling or merging), where it was merged with the
  // job's own points: what the job's level on another topology is measured against.
  std::optional<Calibration> calibrate;
  CalibrationAgreement agreement;              // self vs calibrate, when both were used
  Status missing;  // NotFound "no calibration for topology T (B) in DB; make one with: CMD"
  // The line listings print: `source`, or "none: " and the missing calibration's message.
  std::string Line() const { return missing.ok() ? source : "none: " + missing.message(); }
};

// The choice LoadSimulation makes for `trace`'s run (rules below); `others` gets the traces
// of the job's other imported runs it read. A run with neither a calibrate nor collectives of
// its own gets `missing` set and OK. Errors: the store's.
Status ChooseNetwork(Store& store, const Trace& trace, NetworkChoice* out,
                     std::vector<Trace>* others);

// The same for stored run `run_id` (a recorded or imported run), for listings (`runs`,
// `report`): reads its trace only where the choice needs it (an imported run's collectives).
Status NetworkOfRun(Store& store, const RunInfo& run, NetworkChoice* out);

struct StoredSimulation {
  RunInfo run;             // the recorded or imported run replayed
  NetworkChoice network;   // what its network model was fitted to (missing: none)
  std::optional<Simulation> simulation;  // empty only under kNoSimulation
};

// Loads run `run_id`'s trace and the newest calibration of its topology shape and backend from
// `store`, and builds their simulation predicting `target`. An imported run is also its own
// calibration: its collectives, pooled with those of the other imported runs of the same job
// (workload name, topology shape, backend, framework; the newest kMaxSelfCalibrationRuns),
// give the network model's points (CalibrationFromTraces); with a calibrate of the topology
// too, the job's own points replace the calibrate's where both measured
// (MergeCalibrations), and without one they stand alone. A DDP job on CPUs (gloo) takes its
// own points alone even with a calibrate: that measured Open MPI, another library (the
// calibrate stands in only when the job's own points are too few). Errors, each one line: the
// store's NotFound naming the run when there is none; InvalidArgument when the run is not a measured
// or imported run (IsMeasuredKind) or has no recorded steps; the missing calibration (see
// IfUncalibrated); Simulation::Build's errors. Predicting another topology shape than the
// recorded one, a calibrate of that shape (same library) in the store is used for it, at the
// job's level (TargetAtJobLevel); without one the recorded model is extrapolated. Either way
// `network.source` says which.
inline constexpr int kMaxSelfCalibrationRuns = 8;

// A calibrate of the topology to predict, at the job's level: each collective point (every
// scope but the fusion copy) times the ratio, at its op and bytes, of the recorded job's
// network model (`job`: its own points merged with the recorded topology's calibrate) to that
// calibrate's alone (`calibrate`), within [kMinJobLevel, kMaxJobLevel] (a job's collectives
// run slower than a calibrate's under its compute on the same cores: simulator/README.md).
// Without `calibrate` (a self-calibrated job: nothing to compare with) the points are kept.
// `ratios` (optional) gets the ratio applied to each point.
inline constexpr double kMinJobLevel = 0.25;
inline constexpr double kMaxJobLevel = 4.0;
Calibration TargetAtJobLevel(const Calibration& target, const NetworkModel& job,
                             const NetworkModel* calibrate, std::vector<double>* ratios = nullptr);
Status LoadSimulation(Store& store, int64_t run_id, const TargetShape& target,
                      IfUncalibrated if_uncalibrated, StoredSimulation* out);

}  // namespace autotune::sim
