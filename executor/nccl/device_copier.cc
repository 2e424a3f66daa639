#include "executor/nccl/device_copier.h"

#include <cstring>
#include <string>

#include "executor/nccl/copy_kernel.h"
#include "executor/nccl/cuda_status.h"

namespace autotune::executor {

Status DeviceCopier::Create(int device, std::unique_ptr<DeviceCopier>* out) {
  std::unique_ptr<DeviceCopier> c(new DeviceCopier());
  AUTOTUNE_RETURN_IF_ERROR(
      CudaStatus(cudaDeviceGetAttribute(&c->sm_count_, cudaDevAttrMultiProcessorCount, device),
                 "cudaDeviceGetAttribute(cudaDevAttrMultiProcessorCount)"));
  AUTOTUNE_RETURN_IF_ERROR(CudaStatus(cudaEventCreateWithFlags(&c->staged_, cudaEventDisableTiming),
                                      "cudaEventCreateWithFlags"));
  *out = std::move(c);
  return Status::Ok();
}

DeviceCopier::~DeviceCopier() {
  for (auto* list : {&pending_, &free_}) {
    for (Timed& t : *list) {
      cudaEventDestroy(t.start);
      cudaEventDestroy(t.stop);
    }
  }
  if (staged_ != nullptr) cudaEventDestroy(staged_);
  if (host_staging_ != nullptr) cudaFreeHost(host_staging_);
  if (device_staging_ != nullptr) cudaFree(device_staging_);
}

Status DeviceCopier::TakeEvents(Timed* t) {
  if (!free_.empty()) {
    *t = free_.back();
    free_.pop_back();
    return Status::Ok();
  }
  AUTOTUNE_RETURN_IF_ERROR(CudaStatus(cudaEventCreate(&t->start), "cudaEventCreate"));
  Status st = CudaStatus(cudaEventCreate(&t->stop), "cudaEventCreate");
  if (!st.ok()) cudaEventDestroy(t->start);
  return st;
}

Status DeviceCopier::StageDescriptors(cudaStream_t stream) {
  const int64_t count = static_cast<int64_t>(plan_.descriptors.size());
  const size_t bytes = count * sizeof(CopyDescriptor);
  if (count > staging_capacity_) {
    // The old arrays may still be read by an enqueued kernel or upload.
    AUTOTUNE_RETURN_IF_ERROR(CudaStatus(cudaStreamSynchronize(stream), "cudaStreamSynchronize"));
    if (host_staging_ != nullptr) cudaFreeHost(host_staging_);
    if (device_staging_ != nullptr) cudaFree(device_staging_);
    host_staging_ = nullptr;
    device_staging_ = nullptr;
    staging_capacity_ = 0;
    const int64_t capacity = count * 2;
    const size_t capacity_bytes = capacity * sizeof(CopyDescriptor);
    AUTOTUNE_RETURN_IF_ERROR(CudaStatus(
        cudaMallocHost(reinterpret_cast<void**>(&host_staging_), capacity_bytes),
        "cudaMallocHost(" + std::to_string(capacity_bytes) + " bytes of copy descriptors)"));
    AUTOTUNE_RETURN_IF_ERROR(
        CudaStatus(cudaMalloc(reinterpret_cast<void**>(&device_staging_), capacity_bytes),
                   "cudaMalloc(" + std::to_string(capacity_bytes) + " bytes of copy descriptors)"));
    staging_capacity_ = capacity;
  } else {
    // The previous upload from the pinned buffer must be done before it is overwritten.
    AUTOTUNE_RETURN_IF_ERROR(CudaStatus(cudaEventSynchronize(staged_), "cudaEventSynchronize"));
  }
  std::memcpy(host_staging_, plan_.descriptors.data(), bytes);
  AUTOTUNE_RETURN_IF_ERROR(CudaStatus(
      cudaMemcpyAsync(device_staging_, host_staging_, bytes, cudaMemcpyHostToDevice, stream),
      "cudaMemcpyAsync(copy descriptors)"));
  return CudaStatus(cudaEventRecord(staged_, stream), "cudaEventRecord");
}

Status DeviceCopier::Copy(std::span<const CopySpan> copies, cudaStream_t stream) {
  AUTOTUNE_RETURN_IF_ERROR(BuildCopyPlan(copies, &plan_));
  if (plan_.descriptors.empty()) return Status::Ok();
  const int count = static_cast<int>(plan_.descriptors.size());
  if (count > kInlineCopyDescriptors) AUTOTUNE_RETURN_IF_ERROR(StageDescriptors(stream));
  Timed timed;
  AUTOTUNE_RETURN_IF_ERROR(TakeEvents(&timed));
  timed.bytes = plan_.total_bytes;
  pending_.push_back(timed);
  AUTOTUNE_RETURN_IF_ERROR(CudaStatus(cudaEventRecord(timed.start, stream), "cudaEventRecord"));
  AUTOTUNE_RETURN_IF_ERROR(CudaStatus(
      LaunchBatchCopyKernel(plan_.descriptors.data(), device_staging_, count, plan_.total_chunks,
                            CopyGridBlocks(plan_.total_chunks, sm_count_), stream),
      "batch copy kernel launch (" + std::to_string(count) + " copies, " +
          std::to_string(plan_.total_bytes) + " bytes)"));
  return CudaStatus(cudaEventRecord(timed.stop, stream), "cudaEventRecord");
}

Status DeviceCopier::Collect() {
  Status st;
  for (Timed& t : pending_) {
    float ms = 0.0f;
    if (st.ok())
      st = CudaStatus(cudaEventElapsedTime(&ms, t.start, t.stop), "cudaEventElapsedTime");
    if (st.ok()) {
      ++stats_.copies;
      stats_.bytes += t.bytes;
      stats_.device_us += ms * 1000.0;
      stats_.last_bytes = t.bytes;
      stats_.last_us = ms * 1000.0;
    }
    free_.push_back(t);
  }
  pending_.clear();
  return st;
}

}  // namespace autotune::executor
