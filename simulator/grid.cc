#include "simulator/grid.h"

#include <algorithm>

#include "traces/knob_table.h"

namespace autotune::sim {

std::vector<Knobs> KnobGrid(const Knobs& base, const std::set<std::string>& constants,
                            const Topology& topology, bool has_allgather, Framework framework) {
  const bool hierarchy = topology.nodes > 1 && topology.ranks_per_node > 1;
  std::vector<Knobs> grid = {base};
  // Expanding the last knob first keeps the first knob of the table the slowest to vary.
  const std::span<const KnobSpec> table = KnobTable();
  for (auto spec = table.rbegin(); spec != table.rend(); ++spec) {
    if (spec->grid_values.empty() || constants.count(spec->name)) continue;
    if (!KnobInFramework(*spec, framework)) continue;
    if (spec->needs_hierarchy && !hierarchy) continue;
    if (spec->needs_allgather && !has_allgather) continue;
    std::vector<Knobs> expanded;
    for (const std::string& value : spec->grid_values) {
      for (Knobs knobs : grid) {
        SetKnobText(*spec, value, &knobs);  // grid values are valid texts by construction
        expanded.push_back(std::move(knobs));
      }
    }
    grid = std::move(expanded);
  }
  auto it = std::find(grid.begin(), grid.end(), base);
  if (it != grid.end()) std::rotate(grid.begin(), it, it + 1);
  return grid;
}

}  // namespace autotune::sim
