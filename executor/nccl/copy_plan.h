// CopyPlan: the descriptors of one batched device copy (fusion copy-in or copy-out), built
// on the host and read as is by the copy kernel (executor/nccl/copy_kernel.h).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "executor/backend.h"
#include "executor/nccl/copy_descriptor.h"
#include "traces/status.h"

namespace autotune::executor {

struct CopyPlan {
  std::vector<CopyDescriptor> descriptors;  // copies of > 0 bytes, in batch order
  int64_t total_chunks = 0;
  int64_t total_bytes = 0;
};

// Builds the plan of copies (zero-byte copies dropped). Fails naming the copy's index for a
// negative size or a null pointer with a positive size.
Status BuildCopyPlan(std::span<const CopySpan> copies, CopyPlan* plan);

// Blocks of the copy grid: one per chunk, at most kCopyBlocksPerSm per SM, at least 1.
int CopyGridBlocks(int64_t total_chunks, int sm_count);

}  // namespace autotune::executor
