// Small hand-made workloads, traces and models for the tests of the simulator and of
// `autotune simulate` (no MPI, no database).
#pragma once

#include <cstdint>
#include <vector>

#include "simulator/negotiation_model.h"
#include "simulator/network_model.h"
#include "simulator/replay.h"
#include "simulator/simulation.h"
#include "traces/trace.h"
#include "traces/workload.h"

namespace autotune::sim::testing {

// A workload of float32 allreduce tensors of the given bytes, ready at ready_ms (from the
// backward start), with forward/backward/optimizer phases.
Workload MakeWorkload(const std::vector<int64_t>& bytes, const std::vector<double>& ready_ms,
                      double forward_ms, double backward_ms, double optimizer_ms);

// A one-step trace of w on topology where every rank marks every tensor ready at exactly
// backward_start + ready_ms, everything was done by done_us and the step took step_ms.
Trace MakeTrace(const Workload& w, const Topology& topology, const Knobs& knobs, double done_us,
                double step_ms, int steps = 1);

Topology Topo(int nodes, int ranks_per_node);

// Knobs with the given threshold (MB) and cycle (ms), cache off, flat, no groups.
Knobs PlainKnobs(double threshold_mb, double cycle_ms);

// Replay options for exact cases: phase 0 at the step origin, no wake-up delay.
ReplayOptions ExactOptions();

// A simulation of trace with the given models. Fails the test on error.
Simulation MakeSimulation(const Trace& trace, const NetworkModel& network,
                          const NegotiationModel& negotiation = NegotiationModel(),
                          const ReplayOptions& options = ExactOptions());

}  // namespace autotune::sim::testing
