// FusedExecutor: runs one fused collective through the fusion buffer on real buffers, with the
// copies FusionBufferCopies (traces/fusion_policy.h) says: copy-in of the members' inputs into
// the fusion buffer, the collective (flat or hierarchical), copy-out into the members' outputs;
// a collective of one tensor copies its input into its output and runs in place there.
//
// Fusion buffer layout: allreduce, the members back to back (each padded to its dtype, which
// all members share); allgather, world_size blocks of sum(member bytes), block r holding
// rank r's members back to back.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "executor/backend.h"
#include "executor/layout.h"
#include "executor/tensor_memory.h"
#include "traces/fusion_policy.h"
#include "traces/step_schedule.h"
#include "traces/trace.h"

namespace autotune::executor {

using SteadyClock = std::chrono::steady_clock;

// Microseconds from origin to now.
inline double MicrosSince(SteadyClock::time_point origin) {
  return std::chrono::duration<double, std::micro>(SteadyClock::now() - origin).count();
}

class FusedExecutor {
 public:
  // Allocates a fusion buffer of fusion_bytes (the largest multi-member collective the
  // threshold allows) and, for hierarchical allgather without block placement, a scratch
  // buffer of max_allgather_bytes. All pointers must outlive the executor.
  static Status Create(Backend* backend, const NodeLayout* layout, const Workload* workload,
                       TensorMemory* memory, int64_t fusion_bytes, int64_t max_allgather_bytes,
                       std::unique_ptr<FusedExecutor>* out);

  // Runs c with algorithm; times from origin. Collective over the world: every rank runs the
  // same collectives in the same order.
  Status Run(const FusedCollective& c, Algorithm algorithm, SteadyClock::time_point origin,
             CollectivePhases* times);

  int64_t fusion_bytes() const { return fusion_ ? fusion_->bytes() : 0; }

 private:
  FusedExecutor() = default;
  Status Reduce(void* buf, int64_t count, DType dtype, bool hierarchical);
  Status Gather(void* buf, int64_t block_bytes, bool hierarchical);

  Backend* backend_ = nullptr;
  const NodeLayout* layout_ = nullptr;
  const Workload* workload_ = nullptr;
  TensorMemory* memory_ = nullptr;
  std::unique_ptr<Buffer> fusion_, scratch_;
  std::vector<CopySpan> copies_;
};

}  // namespace autotune::executor
