// KnobGrid: the settings `autotune simulate --grid` evaluates in one call.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "traces/knobs.h"
#include "traces/topology.h"

namespace autotune::sim {

// The grid values of each tunable knob.
inline constexpr double kGridThresholdsMb[] = {0, 1, 4, 16, 32, 64, 128, 256};
inline constexpr double kGridCyclesMs[] = {0.5, 1, 2.5, 5, 10};
inline constexpr int kGridCacheCapacities[] = {0, 1024};

// Every combination of threshold x cycle x cache x hierarchical allreduce (only when the
// topology has more than one node and more than one rank per node) x hierarchical
// allgather (only when has_allgather), on top of base. Knobs named in constants keep
// base's value. The first setting is base itself when base is on the grid's values.
std::vector<Knobs> KnobGrid(const Knobs& base, const std::set<std::string>& constants,
                            const Topology& topology, bool has_allgather);

}  // namespace autotune::sim
