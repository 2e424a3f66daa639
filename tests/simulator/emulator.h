// A small, independent emulation of the executor's step (background cycle from the step
// origin, negotiation, greedy fusion, copy in/out, blocking collectives, wake-up delay,
// noise) that "records" traces the simulator must then predict. Written separately from
// simulator/replay.cc on purpose: agreement between the two is evidence, not tautology.
#pragma once

#include <cstdint>

#include "traces/knobs.h"
#include "traces/trace.h"
#include "traces/workload.h"

namespace autotune::sim::testing {

struct EmulatedCluster {
  Topology topology;
  // Flat allreduce alpha-beta (2 log2 p steps); hierarchical uses intra/cross.
  double world_latency_us = 40.0, world_bytes_per_us = 110.0;
  double intra_latency_us = 3.0, intra_bytes_per_us = 2000.0;
  double cross_latency_us = 40.0, cross_bytes_per_us = 115.0;
  double copy_bytes_per_us = 3000.0;
  double bits_us = 160.0;   // cache bit-vector allreduce (a tiny world allreduce)
  double round_us = 320.0;  // coordinator round (gather + broadcast)
  double round_per_tensor_us = 1.0;
  double wake_delay_us = 60.0;  // mean scheduler delay after a sleep
  double noise = 0.05;          // relative noise on every duration
  double rank_jitter_us = 300.0;
};

// Plays workload for `steps` steps under knobs and returns the recorded trace.
Trace Emulate(const Workload& workload, const Knobs& knobs, const EmulatedCluster& cluster,
              int steps, uint32_t seed);

// Collective time the emulator uses (no noise), for building a matching calibration.
double EmulatedAllreduceUs(const EmulatedCluster& c, int ranks, double latency_us,
                           double bytes_per_us, double bytes);

}  // namespace autotune::sim::testing
