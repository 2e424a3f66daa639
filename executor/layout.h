// NodeLayout: where this rank sits among nodes, and the MPI communicators per level.
//
// Nodes are found with MPI_Comm_split_type(MPI_COMM_TYPE_SHARED): the intra-node
// communicator is that split; the cross-node communicator splits the world by local rank
// (one per local rank, node order). Nodes are numbered by their lowest world rank.
// Only uniform layouts (the same number of ranks on every node) are accepted.
//
// Pseudo-nodes for tests: with the environment variable AUTOTUNE_RANKS_PER_NODE=K set
// (K >= 1 dividing the world size), the ranks are split into pseudo-nodes by world
// rank / K instead of by shared memory, so that 4 ranks on one machine can exercise the
// hierarchical paths as 2 nodes x 2 ranks. "K:cyclic" deals the ranks out round-robin
// instead (pseudo-node = world rank mod (world size / K)), a placement not by node.
// Host names then read "HOST#node".
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "traces/status.h"
#include "traces/topology.h"

namespace autotune::executor {

// The environment variable that turns on pseudo-nodes (see above).
inline constexpr const char* kRanksPerNodeEnv = "AUTOTUNE_RANKS_PER_NODE";

struct NodeLayout {
  int rank = 0;        // world rank
  int size = 1;        // world size
  int local_rank = 0;  // rank within the node
  int local_size = 1;  // ranks per node (uniform)
  int node = 0;        // node index, 0..nodes-1
  int nodes = 1;
  bool pseudo_nodes = false;  // split by AUTOTUNE_RANKS_PER_NODE
  // World rank of (node, local_rank) at index node * local_size + local_rank.
  std::vector<int> world_rank_of;
  std::vector<std::string> hosts;  // host name of each node, node order
  // Nodes on node 0's machine (same kernel boot id; an emulated cluster's network namespaces
  // or pseudo-nodes share one machine's cores), at least 1.
  int nodes_per_host = 1;

  // True when world rank == node * local_size + local_rank for every rank (ranks placed
  // by node, mpirun's default --map-by slot).
  bool block_placement() const;
  Topology ToTopology() const;
};

// Communicators owned by the caller (free with FreeLayoutComms).
struct LayoutComms {
  MPI_Comm intra = MPI_COMM_NULL;
  MPI_Comm cross = MPI_COMM_NULL;
};

// Detects the layout of the ranks of world (collective over world). Fails, on every rank
// alike, naming the counts when the nodes hold different numbers of ranks or when
// AUTOTUNE_RANKS_PER_NODE is malformed or does not divide the world size.
Status DetectLayout(MPI_Comm world, NodeLayout* layout, LayoutComms* comms);
void FreeLayoutComms(LayoutComms* comms);

// Parses an AUTOTUNE_RANKS_PER_NODE value ("K" or "K:cyclic") for a world of world_size
// ranks; *ranks_per_node = 0 when value is null or empty.
Status ParseRanksPerNode(const char* value, int world_size, int* ranks_per_node, bool* cyclic);

}  // namespace autotune::executor
