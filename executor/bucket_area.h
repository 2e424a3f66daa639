// BucketArea: the gradients of a step schedule whose collectives run in place in a bucket area
// (GradientCopies::bucket_area, traces/step_schedule.h; PyTorch DDP's buckets), on real
// buffers. One buffer holds the buckets back to back in launch order, each its members back to
// back; every gradient has its place there. The engine drives it from the schedule's copy plan:
// a gradient copied in when ready, or all of them staged; each bucket reduced in place; the
// results copied back to the outputs.
#pragma once

#include <memory>
#include <vector>

#include "executor/backend.h"
#include "executor/fused_executor.h"
#include "executor/tensor_memory.h"
#include "traces/step_schedule.h"
#include "traces/workload.h"

namespace autotune::executor {

class BucketArea {
 public:
  // Allocates an area of every tensor's input bytes. InvalidArgument when the workload is not
  // DDP's (CheckDdpWorkload) or the backend is not the mpi backend (host memory). All pointers
  // must outlive the area. REQUIRES: LayOut before the first use of a place.
  static Status Create(Backend* backend, const Workload* workload, TensorMemory* memory,
                       std::unique_ptr<BucketArea>* out);

  // Places the buckets (in launch order, each its members) in the area.
  void LayOut(const std::vector<std::vector<int>>& buckets);
  // Copies gradient t's input into its place.
  Status CopyIn(int t);
  // Copies every gradient's input into its place / every place to its gradient's output.
  Status CopyAllIn();
  Status CopyAllOut();
  // Reduces bucket c (members back to back in its place) in place with algorithm; times from
  // origin (no copy-in, no copy-out). Collective over the world.
  Status Run(const FusedCollective& c, Algorithm algorithm, SteadyClock::time_point origin,
             CollectivePhases* phases);

 private:
  BucketArea() = default;
  // The copies between every gradient (input or output) and its place.
  std::vector<CopySpan> AllCopies(bool to_area);

  Backend* backend_ = nullptr;
  TensorMemory* memory_ = nullptr;
  std::unique_ptr<Buffer> area_;
  std::vector<int64_t> offset_;  // per tensor, its place in the area
};

}  // namespace autotune::executor
