// DeviceCopier: the NCCL backend's BatchCopy. One batched copy kernel per call (not one
// cudaMemcpyAsync per tensor), bracketed by CUDA events so that every copy's device time
// and bytes are known once the stream has finished it.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "executor/backend.h"
#include "executor/nccl/copy_plan.h"
#include "traces/status.h"

namespace autotune::executor {

// Copy timings measured with CUDA events (device time, launch overhead excluded).
struct CopyStats {
  int64_t copies = 0;      // batched copies folded in so far
  int64_t bytes = 0;       // their bytes
  double device_us = 0.0;  // their summed device time, microseconds
  int64_t last_bytes = 0;  // the most recent one
  double last_us = 0.0;
  // Bandwidth of the most recent copy in bytes per second (bytes copied, not read+written).
  double last_bytes_per_s() const { return last_us > 0 ? last_bytes / (last_us * 1e-6) : 0.0; }
};

class DeviceCopier {
 public:
  // For CUDA device `device` (its SM count sizes the grid). Call on a thread whose current
  // device is `device`, as every method.
  static Status Create(int device, std::unique_ptr<DeviceCopier>* out);
  ~DeviceCopier();
  DeviceCopier(const DeviceCopier&) = delete;
  DeviceCopier& operator=(const DeviceCopier&) = delete;

  // Enqueues one kernel on stream that performs every copy (device memory; regions of one
  // batch must not overlap). Nothing is enqueued for a batch of zero bytes. Every call of
  // one copier must use the same stream (staged descriptors are reused in stream order).
  Status Copy(std::span<const CopySpan> copies, cudaStream_t stream);
  // Folds the device times of the copies enqueued so far into stats().
  // REQUIRES: every stream they were enqueued on has been synchronized.
  Status Collect();
  const CopyStats& stats() const { return stats_; }
  int sm_count() const { return sm_count_; }

 private:
  struct Timed {
    cudaEvent_t start = nullptr;
    cudaEvent_t stop = nullptr;
    int64_t bytes = 0;
  };
  DeviceCopier() = default;
  Status StageDescriptors(cudaStream_t stream);
  Status TakeEvents(Timed* t);

  int sm_count_ = 1;
  CopyPlan plan_;
  // Batches over kInlineCopyDescriptors: descriptors staged in pinned host memory and
  // uploaded to a device array on the copy's stream; staged_ marks when the upload is done
  // so the pinned buffer may be reused.
  CopyDescriptor* host_staging_ = nullptr;
  CopyDescriptor* device_staging_ = nullptr;
  int64_t staging_capacity_ = 0;
  cudaEvent_t staged_ = nullptr;
  std::vector<Timed> pending_;  // enqueued, not yet collected
  std::vector<Timed> free_;     // event pairs to reuse
  CopyStats stats_;
};

}  // namespace autotune::executor
