// Topology: how the ranks of a run are laid out over nodes.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "traces/status.h"

namespace autotune {

struct Topology {
  int nodes = 1;           // number of nodes (hosts); >= 1
  int ranks_per_node = 1;  // ranks on each node; >= 1 (uniform layouts only)
  std::vector<std::string> hosts;  // host name of each node, node order; may be empty

  int world_size() const { return nodes * ranks_per_node; }
  // "2x2" style key: two runs are comparable when their keys match.
  std::string key() const { return std::to_string(nodes) + "x" + std::to_string(ranks_per_node); }
  bool SameShape(const Topology& o) const {
    return nodes == o.nodes && ranks_per_node == o.ranks_per_node;
  }
};

nlohmann::json TopologyToJson(const Topology& t);
Status TopologyFromJson(const nlohmann::json& j, Topology* t);

}  // namespace autotune
