#include "traces/topology.h"

#include <nlohmann/json.hpp>

namespace autotune {

nlohmann::json TopologyToJson(const Topology& t) {
  return nlohmann::json{{"nodes", t.nodes}, {"ranks_per_node", t.ranks_per_node},
                        {"hosts", t.hosts}};
}

Status TopologyFromJson(const nlohmann::json& j, Topology* out) {
  try {
    Topology t;
    t.nodes = j.at("nodes").get<int>();
    t.ranks_per_node = j.at("ranks_per_node").get<int>();
    if (j.contains("hosts")) t.hosts = j.at("hosts").get<std::vector<std::string>>();
    if (t.nodes < 1 || t.ranks_per_node < 1) {
      return Status::InvalidArgument("topology: nodes and ranks_per_node must be >= 1");
    }
    *out = std::move(t);
    return Status::Ok();
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidArgument(std::string("topology: ") + e.what());
  }
}

}  // namespace autotune
