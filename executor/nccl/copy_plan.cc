#include "executor/nccl/copy_plan.h"

#include <algorithm>
#include <cstdint>
#include <string>

namespace autotune::executor {

Status BuildCopyPlan(std::span<const CopySpan> copies, CopyPlan* plan) {
  CopyPlan p;
  p.descriptors.reserve(copies.size());
  for (size_t i = 0; i < copies.size(); ++i) {
    const CopySpan& c = copies[i];
    if (c.bytes < 0) {
      return Status::InvalidArgument("batch copy " + std::to_string(i) + ": negative size " +
                                     std::to_string(c.bytes));
    }
    if (c.bytes == 0) continue;
    if (c.src == nullptr || c.dst == nullptr) {
      return Status::InvalidArgument("batch copy " + std::to_string(i) + ": null " +
                                     (c.src == nullptr ? "source" : "destination") + " for " +
                                     std::to_string(c.bytes) + " bytes");
    }
    p.descriptors.push_back({c.src, c.dst, c.bytes, p.total_chunks});
    p.total_chunks += (c.bytes + kCopyChunkBytes - 1) / kCopyChunkBytes;
    p.total_bytes += c.bytes;
  }
  *plan = std::move(p);
  return Status::Ok();
}

int CopyGridBlocks(int64_t total_chunks, int sm_count) {
  const int64_t cap = static_cast<int64_t>(std::max(sm_count, 1)) * kCopyBlocksPerSm;
  return static_cast<int>(std::max<int64_t>(1, std::min(total_chunks, cap)));
}

}  // namespace autotune::executor
