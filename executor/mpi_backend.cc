#include "executor/mpi_backend.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "executor/dtype_convert.h"

namespace autotune::executor {

const char* LevelName(Level level) {
  switch (level) {
    case Level::kWorld:
      return "world";
    case Level::kIntra:
      return "intra";
    case Level::kCross:
      return "cross";
  }
  return "?";
}

namespace {

class HostBuffer : public Buffer {
 public:
  HostBuffer(void* p, int64_t bytes) : p_(p), bytes_(bytes) {}
  ~HostBuffer() override { std::free(p_); }
  void* data() override { return p_; }
  int64_t bytes() const override { return bytes_; }

 private:
  void* p_;
  int64_t bytes_;
};

void SumHalf(void* in, void* inout, int* len, MPI_Datatype*) {
  auto* a = static_cast<const uint16_t*>(in);
  auto* b = static_cast<uint16_t*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = FloatToHalf(HalfToFloat(a[i]) + HalfToFloat(b[i]));
}

void SumBFloat16(void* in, void* inout, int* len, MPI_Datatype*) {
  auto* a = static_cast<const uint16_t*>(in);
  auto* b = static_cast<uint16_t*>(inout);
  for (int i = 0; i < *len; ++i) {
    b[i] = FloatToBFloat16(BFloat16ToFloat(a[i]) + BFloat16ToFloat(b[i]));
  }
}

class MpiBackend : public Backend {
 public:
  MpiBackend(MPI_Comm world, MPI_Comm intra, MPI_Comm cross) : comms_{world, intra, cross} {
    MPI_Op_create(&SumHalf, 1, &sum_half_);
    MPI_Op_create(&SumBFloat16, 1, &sum_bf16_);
    for (int l = 0; l < 3; ++l) {
      MPI_Comm_set_errhandler(comms_[l], MPI_ERRORS_RETURN);
      MPI_Comm_rank(comms_[l], &ranks_[l]);
      MPI_Comm_size(comms_[l], &sizes_[l]);
    }
  }
  ~MpiBackend() override {
    MPI_Op_free(&sum_half_);
    MPI_Op_free(&sum_bf16_);
    for (MPI_Comm& c : comms_) MPI_Comm_free(&c);
  }

  BackendKind kind() const override { return BackendKind::kMpi; }
  std::string hardware() const override { return HostHardwareDescription(); }
  int Rank(Level level) const override { return ranks_[static_cast<int>(level)]; }
  int Size(Level level) const override { return sizes_[static_cast<int>(level)]; }

  Status Allocate(int64_t bytes, std::unique_ptr<Buffer>* out) override {
    void* p = nullptr;
    if (posix_memalign(&p, 64, bytes > 0 ? bytes : 64) != 0) {
      return Status::IoError("mpi backend: cannot allocate " + std::to_string(bytes) +
                             " bytes of host memory");
    }
    *out = std::make_unique<HostBuffer>(p, bytes);
    return Status::Ok();
  }
  Status Upload(const void* host_src, void* dst, int64_t bytes) override {
    std::memcpy(dst, host_src, bytes);
    return Status::Ok();
  }
  Status Download(const void* src, void* host_dst, int64_t bytes) override {
    std::memcpy(host_dst, src, bytes);
    return Status::Ok();
  }
  Status Fill(void* dst, int value, int64_t bytes) override {
    std::memset(dst, value, bytes);
    return Status::Ok();
  }
  Status BatchCopy(std::span<const CopySpan> copies) override {
    for (const CopySpan& c : copies) std::memcpy(c.dst, c.src, c.bytes);
    return Status::Ok();
  }

  Status Allreduce(Level level, void* buf, int64_t count, DType dtype) override {
    MPI_Datatype type = MPI_BYTE;
    MPI_Op op;
    TypeAndSum(dtype, &type, &op);
    // MPI counts are int: large buffers go in chunks.
    const int64_t step = INT_MAX / 2;
    char* p = static_cast<char*>(buf);
    for (int64_t done = 0; done < count; done += step) {
      const int n = static_cast<int>(std::min(step, count - done));
      AUTOTUNE_RETURN_IF_ERROR(
          Check(MPI_Allreduce(MPI_IN_PLACE, p + done * DTypeSize(dtype), n, type, op, comm(level)),
                "MPI_Allreduce", level));
    }
    return Status::Ok();
  }
  Status Allgather(Level level, void* buf, int64_t block_bytes) override {
    AUTOTUNE_RETURN_IF_ERROR(CheckCount(block_bytes, "MPI_Allgather", level));
    return Check(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf,
                               static_cast<int>(block_bytes), MPI_BYTE, comm(level)),
                 "MPI_Allgather", level);
  }
  Status ReduceScatter(Level level, void* buf, int64_t count, DType dtype) override {
    AUTOTUNE_RETURN_IF_ERROR(CheckCount(count, "MPI_Reduce_scatter_block", level));
    MPI_Datatype type = MPI_BYTE;
    MPI_Op op;
    TypeAndSum(dtype, &type, &op);
    AUTOTUNE_RETURN_IF_ERROR(Check(
        MPI_Reduce_scatter_block(MPI_IN_PLACE, buf, static_cast<int>(count), type, op, comm(level)),
        "MPI_Reduce_scatter_block", level));
    // MPI leaves the result at the front; the contract wants it in this rank's block.
    const int rank = Rank(level);
    if (rank != 0) {
      const int64_t block = count * DTypeSize(dtype);
      std::memcpy(static_cast<char*>(buf) + rank * block, buf, block);
    }
    return Status::Ok();
  }
  Status Broadcast(Level level, void* buf, int64_t bytes, int root) override {
    AUTOTUNE_RETURN_IF_ERROR(CheckCount(bytes, "MPI_Bcast", level));
    return Check(MPI_Bcast(buf, static_cast<int>(bytes), MPI_BYTE, root, comm(level)), "MPI_Bcast",
                 level);
  }
  Status Gather(Level level, void* buf, int64_t block_bytes, int root) override {
    AUTOTUNE_RETURN_IF_ERROR(CheckCount(block_bytes, "MPI_Gather", level));
    const int rank = Rank(level);
    const int n = static_cast<int>(block_bytes);
    int rc;
    if (rank == root) {
      rc = MPI_Gather(MPI_IN_PLACE, n, MPI_BYTE, buf, n, MPI_BYTE, root, comm(level));
    } else {
      rc = MPI_Gather(static_cast<char*>(buf) + rank * block_bytes, n, MPI_BYTE, nullptr, n,
                      MPI_BYTE, root, comm(level));
    }
    return Check(rc, "MPI_Gather", level);
  }

  Status Synchronize() override { return Status::Ok(); }  // MPI calls are blocking
  Status Barrier(Level level) override {
    return Check(MPI_Barrier(comm(level)), "MPI_Barrier", level);
  }

 private:
  MPI_Comm comm(Level level) const { return comms_[static_cast<int>(level)]; }

  void TypeAndSum(DType dtype, MPI_Datatype* type, MPI_Op* op) const {
    *op = MPI_SUM;
    switch (dtype) {
      case DType::kFloat32:
        *type = MPI_FLOAT;
        return;
      case DType::kFloat64:
        *type = MPI_DOUBLE;
        return;
      case DType::kInt32:
        *type = MPI_INT32_T;
        return;
      case DType::kInt64:
        *type = MPI_INT64_T;
        return;
      case DType::kFloat16:
        *type = MPI_UINT16_T;
        *op = sum_half_;
        return;
      case DType::kBFloat16:
        *type = MPI_UINT16_T;
        *op = sum_bf16_;
        return;
    }
  }

  static Status Check(int rc, const char* what, Level level) {
    if (rc == MPI_SUCCESS) return Status::Ok();
    char text[MPI_MAX_ERROR_STRING] = {};
    int len = 0;
    MPI_Error_string(rc, text, &len);
    return Status::Internal(std::string(what) + " on the " + LevelName(level) +
                            " communicator failed: " + std::string(text, len));
  }
  static Status CheckCount(int64_t n, const char* what, Level level) {
    if (n <= INT_MAX) return Status::Ok();
    return Status::NotSupported(std::string(what) + " on the " + LevelName(level) +
                                " communicator: " + std::to_string(n) + " exceeds MPI's int count");
  }

  MPI_Comm comms_[3];
  int ranks_[3] = {0, 0, 0};
  int sizes_[3] = {1, 1, 1};
  MPI_Op sum_half_ = MPI_OP_NULL;
  MPI_Op sum_bf16_ = MPI_OP_NULL;
};

}  // namespace

std::string HostHardwareDescription() {
  std::string cpu = "unknown CPU";
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) cpu = line.substr(colon + 2);
      break;
    }
  }
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(version, &len);
  std::string mpi(version, len);
  mpi = mpi.substr(0, mpi.find_first_of(",\n"));
  return cpu + "; " + mpi;
}

Status CreateMpiBackend(MPI_Comm world, const LayoutComms& comms, std::unique_ptr<Backend>* out) {
  MPI_Comm w, i, c;
  MPI_Comm_dup(world, &w);
  MPI_Comm_dup(comms.intra, &i);
  MPI_Comm_dup(comms.cross, &c);
  *out = std::make_unique<MpiBackend>(w, i, c);
  return Status::Ok();
}

}  // namespace autotune::executor
