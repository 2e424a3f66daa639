// The batched copy kernel: one launch moves every copy of a fusion copy-in or copy-out
// (executor/nccl/copy_descriptor.h), 16-byte words where source and destination allow.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "executor/nccl/copy_descriptor.h"

namespace autotune::executor {

// Enqueues one copy kernel of `blocks` blocks on stream for descriptors [0, count).
// count <= kInlineCopyDescriptors: the descriptors are read from host_descriptors at launch
// and travel in the kernel's parameters (device_descriptors unused). Larger batches:
// device_descriptors is a device array holding the same descriptors, its upload enqueued
// on stream before this call. REQUIRES count >= 1. Returns the launch's CUDA error.
cudaError_t LaunchBatchCopyKernel(const CopyDescriptor* host_descriptors,
                                  const CopyDescriptor* device_descriptors, int count,
                                  int64_t total_chunks, int blocks, cudaStream_t stream);

}  // namespace autotune::executor
