#include "executor/nccl/nccl_backend.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "executor/mpi_backend.h"
#include "executor/mpi_runtime.h"
#include "executor/nccl/cuda_status.h"
#include "executor/knob_environment.h"
#include "executor/nccl/nccl_factory.h"

namespace autotune::executor {

namespace {

class DeviceBuffer : public Buffer {
 public:
  DeviceBuffer(void* p, int64_t bytes, int device) : p_(p), bytes_(bytes), device_(device) {}
  ~DeviceBuffer() override {
    cudaSetDevice(device_);
    cudaFree(p_);
  }
  void* data() override { return p_; }
  int64_t bytes() const override { return bytes_; }

 private:
  void* p_;
  int64_t bytes_;
  int device_;
};

Status DeviceCount(int* count) {
  *count = 0;
  const cudaError_t rc = cudaGetDeviceCount(count);
  if (rc != cudaSuccess) {
    cudaGetLastError();  // not sticky; clear it
    return Status::NotSupported(std::string("no CUDA device: cudaGetDeviceCount failed: ") +
                                cudaGetErrorName(rc) + ": " + cudaGetErrorString(rc));
  }
  if (*count == 0) return Status::NotSupported("no CUDA device: cudaGetDeviceCount gives 0");
  return Status::Ok();
}

std::string VersionText(int code, int major_unit) {
  // CUDA: 1000 * major + 10 * minor. NCCL (>= 2.9): 10000 * major + 100 * minor + patch.
  if (major_unit == 1000) {
    return std::to_string(code / 1000) + "." + std::to_string(code % 1000 / 10);
  }
  return std::to_string(code / 10000) + "." + std::to_string(code % 10000 / 100) + "." +
         std::to_string(code % 100);
}

std::string DeviceDescription(int device, bool shared) {
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, device) != cudaSuccess) return "unknown GPU";
  int runtime = 0, driver = 0, nccl = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  ncclGetVersion(&nccl);
  char gpu[512];
  std::snprintf(gpu, sizeof(gpu), "%s (sm_%d%d, %d SMs, %.1f GiB)", p.name, p.major, p.minor,
                p.multiProcessorCount, static_cast<double>(p.totalGlobalMem) / (1 << 30));
  return std::string(gpu) + (shared ? ", shared by several ranks via NCCL_HOSTID" : "") +
         "; CUDA runtime " + VersionText(runtime, 1000) + ", driver " + VersionText(driver, 1000) +
         "; NCCL " + VersionText(nccl, 10000) + "; " + HostHardwareDescription();
}

std::string ProcessorName() {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  return std::string(name, len);
}

}  // namespace

int CudaDeviceCount() {
  int count = 0;
  return DeviceCount(&count).ok() ? count : 0;
}

Status NcclAvailable() {
  int count = 0;
  return DeviceCount(&count).WithPrefix("--backend nccl");
}

Status MakeNcclBackend(MPI_Comm world, const NodeLayout& layout, const LayoutComms& comms,
                       const Knobs& knobs, std::unique_ptr<Backend>* out) {
  std::unique_ptr<NcclBackend> backend;
  AUTOTUNE_RETURN_IF_ERROR(NcclBackend::Create(world, layout, comms, knobs, &backend));
  *out = std::move(backend);
  return Status::Ok();
}

Status NcclBackend::Create(MPI_Comm world, const NodeLayout& layout, const LayoutComms& comms,
                           const Knobs& knobs, std::unique_ptr<NcclBackend>* out) {
  std::unique_ptr<NcclBackend> b(new NcclBackend());
  AUTOTUNE_RETURN_IF_ERROR(b->Init(world, layout, comms, knobs));
  *out = std::move(b);
  return Status::Ok();
}

Status NcclBackend::Init(MPI_Comm world, const NodeLayout& layout, const LayoutComms& comms,
                         const Knobs& knobs) {
  ranks_[0] = layout.rank;
  sizes_[0] = layout.size;
  ranks_[1] = layout.local_rank;
  sizes_[1] = layout.local_size;
  ranks_[2] = layout.node;
  sizes_[2] = layout.nodes;
  // Collective MPI set-up first, on every rank whatever its GPU says.
  MPI_Comm machine = MPI_COMM_NULL;
  MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, layout.rank, MPI_INFO_NULL, &machine);
  int machine_rank = 0, machine_size = 1;
  MPI_Comm_rank(machine, &machine_rank);
  MPI_Comm_size(machine, &machine_size);
  MPI_Comm_free(&machine);
  Status st = CreateMpiBackend(world, comms, &mpi_);
  if (knobs.nccl_cross == "mpi") mpi_cross_ = mpi_.get();

  // Local set-up; the environment before anything that could start NCCL.
  if (st.ok()) st = ApplyKnobEnvironment(knobs, KnobLibrary::kNccl);
  int device_count = 0;
  if (st.ok()) st = DeviceCount(&device_count);
  if (st.ok()) {
    placement_ = PlaceOnDevice(machine_rank, machine_size, device_count, ProcessorName(),
                               layout.rank, std::getenv("NCCL_HOSTID"));
    if (!placement_.host_id.empty()) {
      st = ApplyEnvironment({{"NCCL_HOSTID", placement_.host_id}});
    }
  }
  if (st.ok()) st = MakeDeviceCurrent();
  int least = 0, greatest = 0;
  if (st.ok()) {
    st = CudaStatus(cudaDeviceGetStreamPriorityRange(&least, &greatest),
                    "cudaDeviceGetStreamPriorityRange");
  }
  if (st.ok()) {
    st = CudaStatus(cudaStreamCreateWithPriority(&comm_stream_, cudaStreamNonBlocking, greatest),
                    "cudaStreamCreateWithPriority(communication stream)");
  }
  if (st.ok()) {
    st = CudaStatus(cudaStreamCreateWithPriority(&compute_stream_, cudaStreamNonBlocking, least),
                    "cudaStreamCreateWithPriority(compute stream)");
  }
  if (st.ok()) st = DeviceCopier::Create(placement_.device, &copier_);
  if (st.ok()) hardware_ = DeviceDescription(placement_.device, placement_.shared);
  AUTOTUNE_RETURN_IF_ERROR(AgreeOnStatus(world, st));
  return InitComms(world, layout);
}

Status NcclBackend::InitComms(MPI_Comm world, const NodeLayout& layout) {
  ncclUniqueId id{};
  Status st;
  if (layout.rank == 0) st = NcclStatus(ncclGetUniqueId(&id), "ncclGetUniqueId");
  AUTOTUNE_RETURN_IF_ERROR(AgreeOnStatus(world, st));
  MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, world);
  st = NcclStatus(ncclCommInitRank(&comms_[0], layout.size, id, layout.rank),
                  "ncclCommInitRank(world of " + std::to_string(layout.size) + " ranks)");
  AUTOTUNE_RETURN_IF_ERROR(AgreeOnStatus(world, st));
  const NcclSplitKeys keys = SplitKeysFor(layout);
  st = NcclStatus(ncclCommSplit(comms_[0], keys.intra_color, keys.intra_key, &comms_[1], nullptr),
                  "ncclCommSplit(intra-node)", comms_[0]);
  AUTOTUNE_RETURN_IF_ERROR(AgreeOnStatus(world, st));
  if (mpi_cross_ == nullptr) {  // every rank has the same knobs: all split or none does
    st = NcclStatus(ncclCommSplit(comms_[0], keys.cross_color, keys.cross_key, &comms_[2], nullptr),
                    "ncclCommSplit(cross-node)", comms_[0]);
    AUTOTUNE_RETURN_IF_ERROR(AgreeOnStatus(world, st));
  }
  // The split must reproduce the MPI layout the hierarchical compositions index by.
  for (int l = 0; l < 3 && st.ok(); ++l) {
    if (comms_[l] == nullptr) continue;
    int rank = -1, size = -1;
    st = NcclStatus(ncclCommUserRank(comms_[l], &rank), "ncclCommUserRank", comms_[l]);
    if (st.ok()) st = NcclStatus(ncclCommCount(comms_[l], &size), "ncclCommCount", comms_[l]);
    if (st.ok() && (rank != ranks_[l] || size != sizes_[l])) {
      st = Status::Internal(std::string("NCCL ") + LevelName(static_cast<Level>(l)) +
                            " communicator has this rank at " + std::to_string(rank) + " of " +
                            std::to_string(size) + ", the node layout at " +
                            std::to_string(ranks_[l]) + " of " + std::to_string(sizes_[l]));
    }
  }
  return AgreeOnStatus(world, st);
}

NcclBackend::~NcclBackend() {
  if (comm_stream_ != nullptr) {
    cudaSetDevice(placement_.device);
    cudaStreamSynchronize(comm_stream_);
  }
  if (compute_stream_ != nullptr) cudaStreamSynchronize(compute_stream_);
  for (int l = 2; l >= 0; --l) {
    if (comms_[l] != nullptr) ncclCommDestroy(comms_[l]);
  }
  copier_.reset();
  if (host_staging_ != nullptr) cudaFreeHost(host_staging_);
  if (compute_stream_ != nullptr) cudaStreamDestroy(compute_stream_);
  if (comm_stream_ != nullptr) cudaStreamDestroy(comm_stream_);
  mpi_.reset();
}

Status NcclBackend::MakeDeviceCurrent() const {
  return CudaStatus(cudaSetDevice(placement_.device),
                    "cudaSetDevice(" + std::to_string(placement_.device) + ")");
}

Status NcclBackend::Check(ncclResult_t rc, const char* call, Level level) const {
  return NcclStatus(rc, std::string(call) + " on the " + LevelName(level) + " communicator",
                    comm(level));
}

Status NcclBackend::Allocate(int64_t bytes, std::unique_ptr<Buffer>* out) {
  AUTOTUNE_RETURN_IF_ERROR(MakeDeviceCurrent());
  void* p = nullptr;
  AUTOTUNE_RETURN_IF_ERROR(
      CudaStatus(cudaMalloc(&p, bytes > 0 ? bytes : 256),
                 "cudaMalloc(" + std::to_string(bytes) + " bytes of device memory)"));
  *out = std::make_unique<DeviceBuffer>(p, bytes, placement_.device);
  return Status::Ok();
}

Status NcclBackend::Upload(const void* host_src, void* dst, int64_t bytes) {
  AUTOTUNE_RETURN_IF_ERROR(MakeDeviceCurrent());
  AUTOTUNE_RETURN_IF_ERROR(
      CudaStatus(cudaMemcpyAsync(dst, host_src, bytes, cudaMemcpyHostToDevice, comm_stream_),
                 "cudaMemcpyAsync(host to device, " + std::to_string(bytes) + " bytes)"));
  return CudaStatus(cudaStreamSynchronize(comm_stream_), "cudaStreamSynchronize");
}

Status NcclBackend::Download(const void* src, void* host_dst, int64_t bytes) {
  AUTOTUNE_RETURN_IF_ERROR(MakeDeviceCurrent());
  AUTOTUNE_RETURN_IF_ERROR(
      CudaStatus(cudaMemcpyAsync(host_dst, src, bytes, cudaMemcpyDeviceToHost, comm_stream_),
                 "cudaMemcpyAsync(device to host, " + std::to_string(bytes) + " bytes)"));
  return CudaStatus(cudaStreamSynchronize(comm_stream_), "cudaStreamSynchronize");
}

Status NcclBackend::Fill(void* dst, int value, int64_t bytes) {
  AUTOTUNE_RETURN_IF_ERROR(MakeDeviceCurrent());
  return CudaStatus(cudaMemsetAsync(dst, value, bytes, comm_stream_), "cudaMemsetAsync");
}

Status NcclBackend::BatchCopy(std::span<const CopySpan> copies) {
  AUTOTUNE_RETURN_IF_ERROR(MakeDeviceCurrent());
  return copier_->Copy(copies, comm_stream_);
}

Status NcclBackend::Synchronize() {
  AUTOTUNE_RETURN_IF_ERROR(MakeDeviceCurrent());
  AUTOTUNE_RETURN_IF_ERROR(
      CudaStatus(cudaStreamSynchronize(comm_stream_), "cudaStreamSynchronize"));
  return copier_->Collect();
}

Status NcclBackend::Barrier(Level level) { return mpi_->Barrier(level); }

}  // namespace autotune::executor
