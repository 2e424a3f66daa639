// The NCCL backend: device memory (cudaMalloc), NCCL collectives on one communication
// stream, the batched copy kernel for fusion copy-in/out, and hierarchical communicators
// split from the world one (executor/nccl/placement.h).
//
// Every primitive is enqueued on comm_stream() and returns at once (Upload and Download
// wait); Synchronize() waits for the stream and folds the copy kernel's CUDA-event times
// into copy_stats(). Cross-level primitives go through NCCL, or with cross_via_mpi()
// through MPI on pinned host copies (synchronous). Barrier is an MPI barrier.
//
// Threading: a CUDA device is per thread, so each primitive first makes the backend's
// device current; the backend may move between threads as the Backend contract allows.
#pragma once

#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <memory>
#include <string>

#include "executor/backend.h"
#include "executor/layout.h"
#include "executor/nccl/device_copier.h"
#include "executor/nccl/placement.h"
#include "traces/knobs.h"

namespace autotune::executor {

class NcclBackend : public Backend {
 public:
  // See MakeNcclBackend (executor/nccl/nccl_factory.h). Collective over world.
  static Status Create(MPI_Comm world, const NodeLayout& layout, const LayoutComms& comms,
                       const Knobs& knobs, std::unique_ptr<NcclBackend>* out);
  ~NcclBackend() override;

  BackendKind kind() const override { return BackendKind::kNccl; }
  std::string hardware() const override { return hardware_; }
  int Rank(Level level) const override { return ranks_[static_cast<int>(level)]; }
  int Size(Level level) const override { return sizes_[static_cast<int>(level)]; }

  Status Allocate(int64_t bytes, std::unique_ptr<Buffer>* out) override;
  Status Upload(const void* host_src, void* dst, int64_t bytes) override;
  Status Download(const void* src, void* host_dst, int64_t bytes) override;
  Status Fill(void* dst, int value, int64_t bytes) override;
  Status BatchCopy(std::span<const CopySpan> copies) override;

  Status Allreduce(Level level, void* buf, int64_t count, DType dtype) override;
  Status Allgather(Level level, void* buf, int64_t block_bytes) override;
  Status ReduceScatter(Level level, void* buf, int64_t count, DType dtype) override;
  Status Broadcast(Level level, void* buf, int64_t bytes, int root) override;
  Status Gather(Level level, void* buf, int64_t block_bytes, int root) override;

  Status Synchronize() override;
  Status Barrier(Level level) override;

  // Makes this backend's device current on the calling thread.
  Status MakeDeviceCurrent() const;
  int device() const { return placement_.device; }
  const DevicePlacement& placement() const { return placement_; }
  cudaStream_t comm_stream() const { return comm_stream_; }
  // Stream for emulated compute (lower priority than comm_stream()).
  cudaStream_t compute_stream() const { return compute_stream_; }
  bool cross_via_mpi() const { return mpi_cross_ != nullptr; }
  // Copy kernel timings as of the last Synchronize().
  const CopyStats& copy_stats() const { return copier_->stats(); }
  DeviceCopier* copier() { return copier_.get(); }

 private:
  NcclBackend() = default;
  Status Init(MPI_Comm world, const NodeLayout& layout, const LayoutComms& comms,
              const Knobs& knobs);
  Status InitComms(MPI_Comm world, const NodeLayout& layout);
  ncclComm_t comm(Level level) const { return comms_[static_cast<int>(level)]; }
  Status Check(ncclResult_t rc, const char* call, Level level) const;
  // Host-staged cross primitive: copies [down_offset, +down_bytes) of buf to pinned host
  // memory, runs op on the host copy, copies [up_offset, +up_bytes) back. Synchronous.
  template <typename Op>
  Status Staged(void* buf, int64_t down_offset, int64_t down_bytes, int64_t up_offset,
                int64_t up_bytes, int64_t span_bytes, Op op);

  DevicePlacement placement_;
  std::string hardware_;
  int ranks_[3] = {0, 0, 0};
  int sizes_[3] = {1, 1, 1};
  ncclComm_t comms_[3] = {nullptr, nullptr, nullptr};
  cudaStream_t comm_stream_ = nullptr;
  cudaStream_t compute_stream_ = nullptr;
  std::unique_ptr<DeviceCopier> copier_;
  // MPI on host memory: barriers always; the cross level when knobs.nccl_cross == "mpi".
  std::unique_ptr<Backend> mpi_;
  Backend* mpi_cross_ = nullptr;
  void* host_staging_ = nullptr;  // pinned, for the MPI cross step
  int64_t host_staging_bytes_ = 0;
};

}  // namespace autotune::executor
