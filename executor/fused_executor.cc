#include "executor/fused_executor.h"

#include <string>

#include "executor/hierarchical.h"

namespace autotune::executor {

Status FusedExecutor::Create(Backend* backend, const NodeLayout* layout, const Workload* workload,
                             TensorMemory* memory, int64_t fusion_bytes,
                             int64_t max_allgather_bytes, std::unique_ptr<FusedExecutor>* out) {
  std::unique_ptr<FusedExecutor> e(new FusedExecutor());
  e->backend_ = backend;
  e->layout_ = layout;
  e->workload_ = workload;
  e->memory_ = memory;
  if (fusion_bytes > 0) {
    AUTOTUNE_RETURN_IF_ERROR(
        backend->Allocate(fusion_bytes, &e->fusion_)
            .WithPrefix("fusion buffer of " + std::to_string(fusion_bytes) + " bytes"));
  }
  if (!layout->block_placement() && max_allgather_bytes > 0) {
    AUTOTUNE_RETURN_IF_ERROR(backend->Allocate(max_allgather_bytes, &e->scratch_)
                                 .WithPrefix("allgather scratch buffer"));
  }
  *out = std::move(e);
  return Status::Ok();
}

Status FusedExecutor::Reduce(void* buf, int64_t count, DType dtype, bool hierarchical) {
  if (hierarchical) return HierarchicalAllreduce(backend_, buf, count, dtype);
  return backend_->Allreduce(Level::kWorld, buf, count, dtype);
}

Status FusedExecutor::Gather(void* buf, int64_t block_bytes, bool hierarchical) {
  if (hierarchical) {
    return HierarchicalAllgather(backend_, *layout_, buf, block_bytes,
                                 scratch_ ? scratch_->data() : nullptr);
  }
  return backend_->Allgather(Level::kWorld, buf, block_bytes);
}

Status FusedExecutor::Run(const FusedCollective& c, Algorithm algorithm,
                          SteadyClock::time_point origin, CollectivePhases* times) {
  const int world = layout_->size;
  const int rank = layout_->rank;
  const CollectiveCopies copies = FusionBufferCopies(c);
  const bool single = copies.in_output;
  const bool hierarchical = algorithm == Algorithm::kHierarchical;
  copies_.clear();
  times->start_us = MicrosSince(origin);

  // Fused collective target: the fusion buffer, or the single member's own output.
  char* buf;
  int64_t block = 0;  // allgather: bytes per rank
  for (int t : c.tensors) block += memory_->input_bytes(t);
  if (single) {
    buf = memory_->output(c.tensors[0]);
  } else {
    const int64_t need = c.op == Op::kAllgather ? block * world : block;
    if (!fusion_ || fusion_->bytes() < need) {
      return Status::Internal("fused collective of " + std::to_string(need) +
                              " bytes exceeds the fusion buffer of " +
                              std::to_string(fusion_bytes()) + " bytes");
    }
    buf = fusion_->bytes_ptr();
  }

  // Copy-in: every member's input to its place in this rank's block.
  char* mine = c.op == Op::kAllgather ? buf + rank * block : buf;
  int64_t offset = 0;
  for (int t : c.tensors) {
    copies_.push_back({mine + offset, memory_->input(t), memory_->input_bytes(t)});
    offset += memory_->input_bytes(t);
  }
  AUTOTUNE_RETURN_IF_ERROR(backend_->BatchCopy(copies_));
  AUTOTUNE_RETURN_IF_ERROR(backend_->Synchronize());
  times->copy_in_end_us = MicrosSince(origin);

  if (c.op == Op::kAllreduce) {
    AUTOTUNE_RETURN_IF_ERROR(Reduce(buf, block / DTypeSize(c.dtype), c.dtype, hierarchical));
  } else {
    AUTOTUNE_RETURN_IF_ERROR(Gather(buf, block, hierarchical));
  }
  AUTOTUNE_RETURN_IF_ERROR(backend_->Synchronize());
  times->comm_end_us = MicrosSince(origin);

  // Copy-out: from the fusion buffer to every member's output.
  if (copies.copy_out) {
    copies_.clear();
    if (c.op == Op::kAllreduce) {
      offset = 0;
      for (int t : c.tensors) {
        copies_.push_back({memory_->output(t), buf + offset, memory_->input_bytes(t)});
        offset += memory_->input_bytes(t);
      }
    } else {
      for (int r = 0; r < world; ++r) {
        offset = 0;
        for (int t : c.tensors) {
          const int64_t b = memory_->input_bytes(t);
          copies_.push_back({memory_->output(t) + r * b, buf + r * block + offset, b});
          offset += b;
        }
      }
    }
    AUTOTUNE_RETURN_IF_ERROR(backend_->BatchCopy(copies_));
    AUTOTUNE_RETURN_IF_ERROR(backend_->Synchronize());
  }
  times->end_us = MicrosSince(origin);
  return Status::Ok();
}

}  // namespace autotune::executor
