// Where a rank's NCCL work goes: its GPU, the NCCL_HOSTID that lets several ranks share one
// GPU, and the ncclCommSplit colors and keys of the hierarchical communicators. Plain
// arithmetic, no CUDA, so that it is tested without a GPU.
#pragma once

#include <string>

#include "executor/layout.h"

namespace autotune::executor {

struct DevicePlacement {
  int device = 0;       // CUDA device ordinal: machine_local_rank mod device_count
  bool shared = false;  // more ranks on this machine than GPUs: ranks share GPUs
  // NCCL_HOSTID to set before NCCL starts, "" = leave the environment alone. NCCL refuses
  // two ranks of one communicator on one GPU of one host ("Duplicate GPU detected"); a
  // distinct host id per rank makes each rank its own host, so they talk through NCCL's
  // network transport (sockets without InfiniBand) instead.
  std::string host_id;
};

// machine_local_rank/size: this rank among the ranks of its machine (shared memory, not
// pseudo-nodes). user_host_id: the NCCL_HOSTID already in the environment (null if none),
// which is always respected. REQUIRES device_count >= 1.
DevicePlacement PlaceOnDevice(int machine_local_rank, int machine_local_size, int device_count,
                              const std::string& host, int world_rank, const char* user_host_id);

// ncclCommSplit arguments of the two hierarchical communicators, so that they hold the
// same ranks in the same order as the MPI ones of executor/layout.h: intra (color node, key
// local rank: intra rank == local_rank) and cross (color local rank, key node: cross rank
// == node, the order hierarchical allgather's node blocks need).
struct NcclSplitKeys {
  int intra_color = 0;
  int intra_key = 0;
  int cross_color = 0;
  int cross_key = 0;
};
NcclSplitKeys SplitKeysFor(const NodeLayout& layout);

}  // namespace autotune::executor
