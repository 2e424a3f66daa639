// Synthetic inputs for tests and benchmarks (test support, not part of the simulator
// library): a Calibration measured off a parametric network, and a Trace "recorded" by
// replaying a workload on it (no MPI needed).
#pragma once

#include <cstdint>

#include "simulator/negotiation_model.h"
#include "simulator/network_model.h"
#include "traces/calibration.h"
#include "traces/knobs.h"
#include "traces/status.h"
#include "traces/trace.h"
#include "traces/workload.h"

namespace autotune::sim {

// Points for allreduce and allgather on the world, intra, cross and hierarchical scopes
// and the copy scope, at sizes 1 KiB, 4 KiB, ... 64 MiB, with the times `network` (bound to
// the topology to calibrate) predicts.
Calibration SynthesizeCalibration(const NetworkModel& network, int64_t id = 1);

struct SyntheticTraceOptions {
  int steps = 5;
  double rank_jitter_us = 200.0;  // each rank's ready times are late by up to this much
  uint32_t seed = 1;
  int64_t run_id = 1;
};

// A trace of workload played with knobs on network's topology: per-rank ready times from
// the workload (forward, then backward with each tensor's ready_ms, plus jitter), and the
// cycles, collectives, done times and step times a replay under knobs gives (the tail of
// each step is the workload's optimizer time).
Status SynthesizeTrace(const Workload& workload, const Knobs& knobs, const NetworkModel& network,
                       const NegotiationModel& negotiation, const SyntheticTraceOptions& options,
                       Trace* out);

}  // namespace autotune::sim
