// GPU correctness checks of the NCCL backend, shared by the ctest program gpu_test_main.cc.
// Each check is collective over the world and returns this rank's verdict.
#pragma once

#include <string>

#include "executor/backend.h"
#include "executor/layout.h"
#include "traces/knobs.h"
#include "traces/status.h"

namespace autotune::executor::gpu_test {

// Reports a check: agrees on the verdict over the world; rank 0 prints "PASS name" or
// "FAIL name: message". Returns the agreed verdict.
bool Report(const std::string& name, const Status& local);

// Every primitive on every level, reduced values compared with the exact sums.
Status CheckAllreduce(Backend* b, Level level, DType dtype, int64_t count);
Status CheckReduceScatter(Backend* b, Level level, int64_t count);
Status CheckAllgather(Backend* b, Level level, int64_t block_bytes);
Status CheckBroadcast(Backend* b, Level level, int64_t bytes);
Status CheckGather(Backend* b, Level level, int64_t block_bytes);
// Misaligned copies of odd sizes, `copies` of them (inline and staged descriptor paths).
Status CheckBatchCopy(Backend* b, int copies);
// The compositions of executor/hierarchical.h on the device.
Status CheckHierarchicalAllreduce(Backend* b, DType dtype, int64_t count);
Status CheckHierarchicalAllgather(Backend* b, const NodeLayout& layout, int64_t block_bytes);
// Fusion engine + device step player: two steps of a mixed workload, outputs verified.
Status CheckEngine(Backend* b, const NodeLayout& layout, const Knobs& knobs);

}  // namespace autotune::executor::gpu_test
