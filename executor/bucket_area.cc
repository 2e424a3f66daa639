#include "executor/bucket_area.h"

#include "executor/hierarchical.h"
#include "traces/ddp_buckets.h"

namespace autotune::executor {

Status BucketArea::Create(Backend* backend, const Workload* workload, TensorMemory* memory,
                          std::unique_ptr<BucketArea>* out) {
  AUTOTUNE_RETURN_IF_ERROR(CheckDdpWorkload(*workload));
  if (backend->kind() != BackendKind::kMpi) {
    return Status::InvalidArgument(
        "--framework ddp runs on the mpi backend (host memory) only; the nccl backend plays "
        "Horovod's engine");
  }
  std::unique_ptr<BucketArea> a(new BucketArea());
  a->backend_ = backend;
  a->memory_ = memory;
  int64_t total = 0;
  for (int t = 0; t < memory->size(); ++t) total += memory->input_bytes(t);
  AUTOTUNE_RETURN_IF_ERROR(backend->Allocate(total, &a->area_).WithPrefix("DDP bucket area"));
  a->offset_.assign(memory->size(), 0);
  *out = std::move(a);
  return Status::Ok();
}

void BucketArea::LayOut(const std::vector<std::vector<int>>& buckets) {
  int64_t offset = 0;
  for (const std::vector<int>& bucket : buckets) {
    for (int t : bucket) {
      offset_[t] = offset;
      offset += memory_->input_bytes(t);
    }
  }
}

Status BucketArea::CopyIn(int t) {
  const CopySpan copy{area_->bytes_ptr() + offset_[t], memory_->input(t), memory_->input_bytes(t)};
  return backend_->BatchCopy(std::span<const CopySpan>(&copy, 1));
}

std::vector<CopySpan> BucketArea::AllCopies(bool to_area) {
  std::vector<CopySpan> copies;
  for (int t = 0; t < memory_->size(); ++t) {
    char* place = area_->bytes_ptr() + offset_[t];
    if (to_area) {
      copies.push_back({place, memory_->input(t), memory_->input_bytes(t)});
    } else {
      copies.push_back({memory_->output(t), place, memory_->input_bytes(t)});
    }
  }
  return copies;
}

Status BucketArea::CopyAllIn() { return backend_->BatchCopy(AllCopies(true)); }

Status BucketArea::CopyAllOut() { return backend_->BatchCopy(AllCopies(false)); }

Status BucketArea::Run(const FusedCollective& c, Algorithm algorithm,
                       SteadyClock::time_point origin, CollectivePhases* phases) {
  phases->start_us = MicrosSince(origin);
  phases->copy_in_end_us = phases->start_us;
  char* buf = area_->bytes_ptr() + offset_[c.tensors.front()];
  const int64_t count = c.bytes / DTypeSize(c.dtype);
  AUTOTUNE_RETURN_IF_ERROR(algorithm == Algorithm::kHierarchical
                               ? HierarchicalAllreduce(backend_, buf, count, c.dtype)
                               : backend_->Allreduce(Level::kWorld, buf, count, c.dtype));
  AUTOTUNE_RETURN_IF_ERROR(backend_->Synchronize());
  phases->comm_end_us = MicrosSince(origin);
  phases->end_us = phases->comm_end_us;
  return Status::Ok();
}

}  // namespace autotune::executor
