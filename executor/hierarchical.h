// Hierarchical collectives composed from backend primitives; shared by every backend.
//
// Allreduce (Horovod's hierarchical allreduce): the first local_size * chunk elements go
// intra-node reduce-scatter -> cross-node allreduce of this rank's chunk (the cross
// communicator of this local rank, so every local rank's cross allreduce runs at once)
// -> intra-node allgather. The remainder (count mod local_size elements, fewer than
// local_size) goes intra-node allreduce -> cross-node allreduce.
//
// Allgather: intra-node gather to local rank 0 -> cross-node allgather of whole node
// blocks among local ranks 0 -> intra-node broadcast of the full result. When ranks are not
// placed by node (world rank != node * local_size + local_rank), the blocks are staged in
// node order in a scratch buffer and copied into world-rank order at the end.
#pragma once

#include <cstdint>

#include "executor/backend.h"
#include "executor/layout.h"

namespace autotune::executor {

// How an allreduce of count elements splits over local_size ranks: chunk elements per
// local rank through the reduce-scatter path, remainder elements through the other.
struct HierarchicalSplit {
  int64_t chunk = 0;
  int64_t remainder = 0;
};
HierarchicalSplit SplitForLocalSize(int64_t count, int local_size);

// In-place hierarchical sum of buf[0, count) over the world.
Status HierarchicalAllreduce(Backend* backend, void* buf, int64_t count, DType dtype);

// In-place hierarchical allgather: buf holds world_size blocks of block_bytes in world-rank
// order, this rank's block filled. scratch: backend memory of world_size * block_bytes,
// needed only when !layout.block_placement() (else may be null).
Status HierarchicalAllgather(Backend* backend, const NodeLayout& layout, void* buf,
                             int64_t block_bytes, void* scratch);

}  // namespace autotune::executor
