#include "executor/layout.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>

namespace autotune::executor {

bool NodeLayout::block_placement() const {
  for (int i = 0; i < static_cast<int>(world_rank_of.size()); ++i) {
    if (world_rank_of[i] != i) return false;
  }
  return true;
}

Topology NodeLayout::ToTopology() const {
  Topology t;
  t.nodes = nodes;
  t.ranks_per_node = local_size;
  t.hosts = hosts;
  return t;
}

Status ParseRanksPerNode(const char* value, int world_size, int* ranks_per_node, bool* cyclic) {
  *ranks_per_node = 0;
  *cyclic = false;
  if (value == nullptr || *value == '\0') return Status::Ok();
  char* end = nullptr;
  long k = std::strtol(value, &end, 10);
  if (std::string(end) == ":cyclic") {
    *cyclic = true;
  } else if (*end != '\0') {
    k = 0;
  }
  if (end == value || k < 1) {
    return Status::InvalidArgument(std::string(kRanksPerNodeEnv) + "=" + value +
                                   ": expected a positive integer, optionally \":cyclic\"");
  }
  if (world_size % k != 0) {
    return Status::InvalidArgument(std::string(kRanksPerNodeEnv) + "=" + value +
                                   " does not divide the world size " + std::to_string(world_size));
  }
  *ranks_per_node = static_cast<int>(k);
  return Status::Ok();
}

namespace {

std::string ProcessorName() {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  return std::string(name, len);
}

}  // namespace

Status DetectLayout(MPI_Comm world, NodeLayout* layout, LayoutComms* comms) {
  NodeLayout l;
  MPI_Comm_rank(world, &l.rank);
  MPI_Comm_size(world, &l.size);
  int ranks_per_node = 0;
  bool cyclic = false;
  // Every rank reads the same launch environment; the check below still agrees on errors.
  Status env = ParseRanksPerNode(std::getenv(kRanksPerNodeEnv), l.size, &ranks_per_node, &cyclic);
  int env_bad = env.ok() ? 0 : 1, any_bad = 0;
  MPI_Allreduce(&env_bad, &any_bad, 1, MPI_INT, MPI_MAX, world);
  if (any_bad) {
    return env.ok() ? Status::InvalidArgument(std::string(kRanksPerNodeEnv) +
                                              " is malformed on another rank")
                    : env;
  }
  MPI_Comm intra = MPI_COMM_NULL;
  if (ranks_per_node > 0) {
    l.pseudo_nodes = true;
    const int pseudo_nodes = l.size / ranks_per_node;
    const int color = cyclic ? l.rank % pseudo_nodes : l.rank / ranks_per_node;
    MPI_Comm_split(world, color, l.rank, &intra);
  } else {
    MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, l.rank, MPI_INFO_NULL, &intra);
  }
  MPI_Comm_rank(intra, &l.local_rank);
  MPI_Comm_size(intra, &l.local_size);
  int min_local = 0, max_local = 0;
  MPI_Allreduce(&l.local_size, &min_local, 1, MPI_INT, MPI_MIN, world);
  MPI_Allreduce(&l.local_size, &max_local, 1, MPI_INT, MPI_MAX, world);
  if (min_local != max_local) {
    MPI_Comm_free(&intra);
    return Status::NotSupported("non-uniform layout: nodes hold between " +
                                std::to_string(min_local) + " and " + std::to_string(max_local) +
                                " ranks; autotune needs the same ranks on every node");
  }
  // Node index: rank among the local ranks 0 ordered by world rank (local rank 0 holds its
  // node's lowest world rank because intra is keyed by world rank).
  MPI_Comm roots = MPI_COMM_NULL;
  MPI_Comm_split(world, l.local_rank == 0 ? 0 : MPI_UNDEFINED, l.rank, &roots);
  if (roots != MPI_COMM_NULL) {
    MPI_Comm_rank(roots, &l.node);
    MPI_Comm_free(&roots);
  }
  MPI_Bcast(&l.node, 1, MPI_INT, 0, intra);
  // Cross communicators keyed by node, so that cross rank == node for every local rank.
  MPI_Comm cross = MPI_COMM_NULL;
  MPI_Comm_split(world, l.local_rank, l.node, &cross);
  MPI_Comm_size(cross, &l.nodes);

  // world_rank_of: gather (node, local_rank) -> world rank over the world.
  std::vector<int> mine = {l.node * l.local_size + l.local_rank, l.rank};
  std::vector<int> all(2 * l.size);
  MPI_Allgather(mine.data(), 2, MPI_INT, all.data(), 2, MPI_INT, world);
  l.world_rank_of.assign(l.size, -1);
  for (int r = 0; r < l.size; ++r) l.world_rank_of[all[2 * r]] = all[2 * r + 1];

  // Host names of the nodes (from each node's local rank 0).
  std::string host = ProcessorName();
  if (l.pseudo_nodes) host += "#" + std::to_string(l.node);
  char name[MPI_MAX_PROCESSOR_NAME + 16] = {};
  host.copy(name, sizeof(name) - 1);
  std::vector<char> names(sizeof(name) * l.size);
  MPI_Allgather(name, sizeof(name), MPI_CHAR, names.data(), sizeof(name), MPI_CHAR, world);
  l.hosts.clear();
  for (int n = 0; n < l.nodes; ++n) {
    int root = l.world_rank_of[n * l.local_size];
    l.hosts.emplace_back(names.data() + sizeof(name) * root);
  }
  // Which nodes share node 0's machine: the kernel's boot id is the same in every network
  // and UTS namespace of one machine.
  char boot[64] = {};
  std::ifstream("/proc/sys/kernel/random/boot_id").read(boot, sizeof(boot) - 1);
  std::vector<char> boots(sizeof(boot) * l.size);
  MPI_Allgather(boot, sizeof(boot), MPI_CHAR, boots.data(), sizeof(boot), MPI_CHAR, world);
  l.nodes_per_host = 0;
  for (int n = 0; n < l.nodes; ++n) {
    const int root = l.world_rank_of[n * l.local_size];
    if (std::string(boots.data() + sizeof(boot) * root) == std::string(boots.data())) {
      ++l.nodes_per_host;
    }
  }
  l.nodes_per_host = std::max(1, l.nodes_per_host);
  comms->intra = intra;
  comms->cross = cross;
  *layout = std::move(l);
  return Status::Ok();
}

void FreeLayoutComms(LayoutComms* comms) {
  if (comms->intra != MPI_COMM_NULL) MPI_Comm_free(&comms->intra);
  if (comms->cross != MPI_COMM_NULL) MPI_Comm_free(&comms->cross);
}

}  // namespace autotune::executor
