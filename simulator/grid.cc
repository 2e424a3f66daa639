#include "simulator/grid.h"

#include <algorithm>

namespace autotune::sim {

std::vector<Knobs> KnobGrid(const Knobs& base, const std::set<std::string>& constants,
                            const Topology& topology, bool has_allgather) {
  auto values = [&](const char* name, const auto& grid, auto base_value) {
    using T = decltype(base_value);
    std::vector<T> out;
    if (constants.count(name)) return std::vector<T>{base_value};
    for (auto v : grid) out.push_back(static_cast<T>(v));
    return out;
  };
  const auto thresholds =
      values("fusion_threshold_mb", kGridThresholdsMb, base.fusion_threshold_mb);
  const auto cycles = values("cycle_time_ms", kGridCyclesMs, base.cycle_time_ms);
  const auto caches = values("cache_capacity", kGridCacheCapacities, base.cache_capacity);
  const bool hierarchy = topology.nodes > 1 && topology.ranks_per_node > 1;
  const std::vector<bool> both = {false, true};
  const auto hier_ar = (hierarchy && !constants.count("hierarchical_allreduce"))
                           ? both
                           : std::vector<bool>{base.hierarchical_allreduce};
  const auto hier_ag = (hierarchy && has_allgather && !constants.count("hierarchical_allgather"))
                           ? both
                           : std::vector<bool>{base.hierarchical_allgather};
  std::vector<Knobs> grid;
  for (double threshold : thresholds) {
    for (double cycle : cycles) {
      for (int cache : caches) {
        for (bool ar : hier_ar) {
          for (bool ag : hier_ag) {
            Knobs k = base;
            k.fusion_threshold_mb = threshold;
            k.cycle_time_ms = cycle;
            k.cache_capacity = cache;
            k.hierarchical_allreduce = ar;
            k.hierarchical_allgather = ag;
            grid.push_back(k);
          }
        }
      }
    }
  }
  auto it = std::find(grid.begin(), grid.end(), base);
  if (it != grid.end()) std::rotate(grid.begin(), it, it + 1);
  return grid;
}

}  // namespace autotune::sim
