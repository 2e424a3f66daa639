#include "executor/hierarchical.h"

#include <vector>

namespace autotune::executor {

HierarchicalSplit SplitForLocalSize(int64_t count, int local_size) {
  HierarchicalSplit s;
  s.chunk = count / local_size;
  s.remainder = count - s.chunk * local_size;
  return s;
}

Status HierarchicalAllreduce(Backend* backend, void* buf, int64_t count, DType dtype) {
  const int local_size = backend->Size(Level::kIntra);
  const int local_rank = backend->Rank(Level::kIntra);
  const bool multi_node = backend->Size(Level::kCross) > 1;
  const int64_t esize = DTypeSize(dtype);
  const HierarchicalSplit split = SplitForLocalSize(count, local_size);
  char* base = static_cast<char*>(buf);
  if (split.chunk > 0) {
    AUTOTUNE_RETURN_IF_ERROR(backend->ReduceScatter(Level::kIntra, base, split.chunk, dtype));
    if (multi_node) {
      AUTOTUNE_RETURN_IF_ERROR(backend->Allreduce(
          Level::kCross, base + local_rank * split.chunk * esize, split.chunk, dtype));
    }
    AUTOTUNE_RETURN_IF_ERROR(backend->Allgather(Level::kIntra, base, split.chunk * esize));
  }
  if (split.remainder > 0) {
    char* tail = base + split.chunk * local_size * esize;
    AUTOTUNE_RETURN_IF_ERROR(backend->Allreduce(Level::kIntra, tail, split.remainder, dtype));
    if (multi_node) {
      AUTOTUNE_RETURN_IF_ERROR(backend->Allreduce(Level::kCross, tail, split.remainder, dtype));
    }
  }
  return Status::Ok();
}

Status HierarchicalAllgather(Backend* backend, const NodeLayout& layout, void* buf,
                             int64_t block_bytes, void* scratch) {
  const bool in_place = layout.block_placement();
  if (!in_place && scratch == nullptr) {
    return Status::Internal(
        "hierarchical allgather: ranks are not placed by node and no "
        "scratch buffer was given");
  }
  char* out = static_cast<char*>(buf);
  char* work = in_place ? out : static_cast<char*>(scratch);
  const int64_t node_bytes = block_bytes * layout.local_size;
  const int64_t all_bytes = node_bytes * layout.nodes;
  const int my_slot = layout.node * layout.local_size + layout.local_rank;
  if (!in_place) {
    CopySpan own{work + my_slot * block_bytes, out + layout.rank * block_bytes, block_bytes};
    AUTOTUNE_RETURN_IF_ERROR(backend->BatchCopy({&own, 1}));
  }
  char* node_base = work + layout.node * node_bytes;
  AUTOTUNE_RETURN_IF_ERROR(backend->Gather(Level::kIntra, node_base, block_bytes, 0));
  if (layout.local_rank == 0 && layout.nodes > 1) {
    AUTOTUNE_RETURN_IF_ERROR(backend->Allgather(Level::kCross, work, node_bytes));
  }
  AUTOTUNE_RETURN_IF_ERROR(backend->Broadcast(Level::kIntra, work, all_bytes, 0));
  if (!in_place) {
    std::vector<CopySpan> copies;
    copies.reserve(layout.size);
    for (int slot = 0; slot < layout.size; ++slot) {
      const int r = layout.world_rank_of[slot];
      copies.push_back({out + r * block_bytes, work + slot * block_bytes, block_bytes});
    }
    AUTOTUNE_RETURN_IF_ERROR(backend->BatchCopy(copies));
  }
  return Status::Ok();
}

}  // namespace autotune::executor
