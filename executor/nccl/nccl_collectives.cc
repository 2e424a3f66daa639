// NcclBackend's collectives: NCCL in place on the communication stream, or for the cross
// level with knobs.nccl_cross == "mpi", MPI on pinned host copies (Horovod's MPI variant of
// the hierarchical cross step).
#include <string>

#include "executor/nccl/cuda_status.h"
#include "executor/nccl/nccl_backend.h"

namespace autotune::executor {

namespace {

ncclDataType_t NcclType(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return ncclFloat32;
    case DType::kFloat64:
      return ncclFloat64;
    case DType::kFloat16:
      return ncclFloat16;
    case DType::kBFloat16:
      return ncclBfloat16;
    case DType::kInt32:
      return ncclInt32;
    case DType::kInt64:
      return ncclInt64;
  }
  return ncclInt8;
}

}  // namespace

template <typename Op>
Status NcclBackend::Staged(void* buf, int64_t down_offset, int64_t down_bytes, int64_t up_offset,
                           int64_t up_bytes, int64_t span_bytes, Op op) {
  if (span_bytes > host_staging_bytes_) {
    if (host_staging_ != nullptr) cudaFreeHost(host_staging_);
    host_staging_ = nullptr;
    host_staging_bytes_ = 0;
    AUTOTUNE_RETURN_IF_ERROR(CudaStatus(
        cudaMallocHost(&host_staging_, span_bytes),
        "cudaMallocHost(" + std::to_string(span_bytes) + " bytes for the MPI cross step)"));
    host_staging_bytes_ = span_bytes;
  }
  char* device = static_cast<char*>(buf);
  char* host = static_cast<char*>(host_staging_);
  if (down_bytes > 0) {
    AUTOTUNE_RETURN_IF_ERROR(
        CudaStatus(cudaMemcpyAsync(host + down_offset, device + down_offset, down_bytes,
                                   cudaMemcpyDeviceToHost, comm_stream_),
                   "cudaMemcpyAsync(device to host, MPI cross step)"));
  }
  // Also orders the MPI call after every primitive enqueued before.
  AUTOTUNE_RETURN_IF_ERROR(
      CudaStatus(cudaStreamSynchronize(comm_stream_), "cudaStreamSynchronize"));
  AUTOTUNE_RETURN_IF_ERROR(op(host));
  if (up_bytes > 0) {
    AUTOTUNE_RETURN_IF_ERROR(
        CudaStatus(cudaMemcpyAsync(device + up_offset, host + up_offset, up_bytes,
                                   cudaMemcpyHostToDevice, comm_stream_),
                   "cudaMemcpyAsync(host to device, MPI cross step)"));
    // The pinned buffer is reused by the next staged step.
    AUTOTUNE_RETURN_IF_ERROR(
        CudaStatus(cudaStreamSynchronize(comm_stream_), "cudaStreamSynchronize"));
  }
  return Status::Ok();
}

Status NcclBackend::Allreduce(Level level, void* buf, int64_t count, DType dtype) {
  AUTOTUNE_RETURN_IF_ERROR(MakeDeviceCurrent());
  if (level == Level::kCross && mpi_cross_ != nullptr) {
    const int64_t bytes = count * DTypeSize(dtype);
    return Staged(buf, 0, bytes, 0, bytes, bytes, [&](void* host) {
      return mpi_cross_->Allreduce(Level::kCross, host, count, dtype);
    });
  }
  return Check(ncclAllReduce(buf, buf, count, NcclType(dtype), ncclSum, comm(level), comm_stream_),
               "ncclAllReduce", level);
}

Status NcclBackend::Allgather(Level level, void* buf, int64_t block_bytes) {
  AUTOTUNE_RETURN_IF_ERROR(MakeDeviceCurrent());
  const int64_t own = Rank(level) * block_bytes;
  if (level == Level::kCross && mpi_cross_ != nullptr) {
    const int64_t all = Size(level) * block_bytes;
    return Staged(buf, own, block_bytes, 0, all, all, [&](void* host) {
      return mpi_cross_->Allgather(Level::kCross, host, block_bytes);
    });
  }
  char* base = static_cast<char*>(buf);
  return Check(ncclAllGather(base + own, base, block_bytes, ncclInt8, comm(level), comm_stream_),
               "ncclAllGather", level);
}

Status NcclBackend::ReduceScatter(Level level, void* buf, int64_t count, DType dtype) {
  AUTOTUNE_RETURN_IF_ERROR(MakeDeviceCurrent());
  const int64_t block = count * DTypeSize(dtype);
  const int64_t own = Rank(level) * block;
  if (level == Level::kCross && mpi_cross_ != nullptr) {
    const int64_t all = Size(level) * block;
    return Staged(buf, 0, all, own, block, all, [&](void* host) {
      return mpi_cross_->ReduceScatter(Level::kCross, host, count, dtype);
    });
  }
  char* base = static_cast<char*>(buf);
  return Check(ncclReduceScatter(base, base + own, count, NcclType(dtype), ncclSum, comm(level),
                                 comm_stream_),
               "ncclReduceScatter", level);
}

Status NcclBackend::Broadcast(Level level, void* buf, int64_t bytes, int root) {
  AUTOTUNE_RETURN_IF_ERROR(MakeDeviceCurrent());
  if (level == Level::kCross && mpi_cross_ != nullptr) {
    const bool is_root = Rank(level) == root;
    return Staged(buf, 0, is_root ? bytes : 0, 0, is_root ? 0 : bytes, bytes, [&](void* host) {
      return mpi_cross_->Broadcast(Level::kCross, host, bytes, root);
    });
  }
  return Check(ncclBroadcast(buf, buf, bytes, ncclInt8, root, comm(level), comm_stream_),
               "ncclBroadcast", level);
}

Status NcclBackend::Gather(Level level, void* buf, int64_t block_bytes, int root) {
  AUTOTUNE_RETURN_IF_ERROR(MakeDeviceCurrent());
  const int rank = Rank(level);
  const int64_t own = rank * block_bytes;
  char* base = static_cast<char*>(buf);
  if (level == Level::kCross && mpi_cross_ != nullptr) {
    const int64_t all = Size(level) * block_bytes;
    return Staged(buf, own, block_bytes, 0, rank == root ? all : 0, all, [&](void* host) {
      return mpi_cross_->Gather(Level::kCross, host, block_bytes, root);
    });
  }
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
  return Check(ncclGather(base + own, base, block_bytes, ncclInt8, root, comm(level), comm_stream_),
               "ncclGather", level);
#else
  // Before ncclGather: the root receives every other rank's block point to point.
  AUTOTUNE_RETURN_IF_ERROR(Check(ncclGroupStart(), "ncclGroupStart", level));
  Status st;
  if (rank == root) {
    for (int r = 0; r < Size(level) && st.ok(); ++r) {
      if (r == root) continue;
      st = Check(
          ncclRecv(base + r * block_bytes, block_bytes, ncclInt8, r, comm(level), comm_stream_),
          "ncclRecv", level);
    }
  } else {
    st = Check(ncclSend(base + own, block_bytes, ncclInt8, root, comm(level), comm_stream_),
               "ncclSend", level);
  }
  Status end = Check(ncclGroupEnd(), "ncclGroupEnd", level);
  return st.ok() ? end : st;
#endif
}

}  // namespace autotune::executor
