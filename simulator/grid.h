// KnobGrid: the settings `autotune simulate --grid` evaluates in one call.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "traces/framework.h"
#include "traces/knobs.h"
#include "traces/topology.h"

namespace autotune::sim {

// Every combination of the grid values of the knob table's knobs of `framework`
// (KnobSpec::grid_values; the first knob of the table varies slowest), on top of base. A knob named in constants keeps base's
// value, and so does a hierarchical knob unless the topology has more than one node and more
// than one rank per node (hierarchical allgather: and has_allgather). The first setting is
// base itself when base is on the grid's values.
std::vector<Knobs> KnobGrid(const Knobs& base, const std::set<std::string>& constants,
                            const Topology& topology, bool has_allgather, Framework framework);

}  // namespace autotune::sim
