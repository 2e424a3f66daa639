// NCCL backend benchmark. Two figures per size, each one result line (bench/common/result.h):
// 1. fused allreduce busbw: the executor's fused collective (copy-in of 16 tensors with the
//    batched copy kernel, ncclAllReduce, copy-out; executor/fused_executor.h) against one
//    ncclAllReduce of the same total bytes in place. Target ratio >= 0.9 at 4 MiB and more
//    (two ranks or more).
//    busbw = bytes * 2(n-1)/n / time (nccl-tests); with one rank the factor is 0, so algbw
//    (bytes / time) is printed instead. With one rank the figure has no target: NCCL's
//    in-place allreduce of one rank moves no bytes (on an H100 it took about 1.7 us at every
//    size, the fused path 37 us at 1 MiB to 0.46 ms at 256 MiB), so the ratio means nothing.
// 2. copy kernel bandwidth: one batched copy of 16 tensors against one device-to-device
//    cudaMemcpyAsync of the same bytes, both timed with CUDA events. Target ratio >= 0.8.
// Run under mpirun, one rank per GPU. Without a GPU: one line "SKIP: no CUDA device".
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench/common/result.h"
#include "executor/fused_executor.h"
#include "executor/layout.h"
#include "executor/mpi_runtime.h"
#include "executor/nccl/cuda_status.h"
#include "executor/nccl/nccl_backend.h"
#include "executor/nccl/nccl_factory.h"
#include "executor/tensor_memory.h"
#include "traces/trace.h"

namespace autotune::executor {
namespace {

constexpr int kTensors = 16;
constexpr int kWarmups = 5;
constexpr int kReps = 30;
constexpr int64_t kMiB = 1 << 20;

// Median over kReps of f's time, each run after a world barrier and timed to Synchronize().
template <typename F>
Status TimeMedianUs(Backend* b, F f, double* median_us) {
  std::vector<double> us;
  for (int r = 0; r < kWarmups + kReps; ++r) {
    AUTOTUNE_RETURN_IF_ERROR(b->Barrier(Level::kWorld));
    const SteadyClock::time_point t0 = SteadyClock::now();
    AUTOTUNE_RETURN_IF_ERROR(f());
    AUTOTUNE_RETURN_IF_ERROR(b->Synchronize());
    const double mine = MicrosSince(t0);
    double slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (r >= kWarmups) us.push_back(slowest);
  }
  *median_us = Median(us);
  return Status::Ok();
}

// 16 float32 tensors of unequal sizes (weights 1, 2, 3, 4, 1, ...) adding up to total bytes.
Workload FusedWorkload(int64_t total) {
  Workload w;
  w.name = "bench-fused";
  const int64_t elements = total / 4;
  int64_t left = elements;
  for (int i = 0; i < kTensors; ++i) {
    TensorSpec t;
    t.name = "t" + std::to_string(i);
    const int64_t n = i + 1 == kTensors ? left : elements * (i % 4 + 1) / 40;
    t.shape = {n};
    left -= n;
    w.tensors.push_back(t);
  }
  return w;
}

Status BenchFused(NcclBackend* b, const NodeLayout& layout, int64_t total) {
  const Workload w = FusedWorkload(total);
  std::unique_ptr<TensorMemory> memory;
  AUTOTUNE_RETURN_IF_ERROR(TensorMemory::Create(b, w, layout.size, &memory));
  std::unique_ptr<FusedExecutor> fused;
  AUTOTUNE_RETURN_IF_ERROR(FusedExecutor::Create(b, &layout, &w, memory.get(), total, 0, &fused));
  FusedCollective c;
  c.op = Op::kAllreduce;
  c.dtype = DType::kFloat32;
  c.bytes = total;
  for (int t = 0; t < kTensors; ++t) c.tensors.push_back(t);
  std::unique_ptr<Buffer> flat;
  AUTOTUNE_RETURN_IF_ERROR(b->Allocate(total, &flat));
  AUTOTUNE_RETURN_IF_ERROR(b->Fill(flat->data(), 0, total));
  AUTOTUNE_RETURN_IF_ERROR(b->Fill(memory->outputs_base(), 0, memory->total_output_bytes()));

  double fused_us = 0, single_us = 0;
  AUTOTUNE_RETURN_IF_ERROR(TimeMedianUs(
      b,
      [&] {
        CollectivePhases times;
        return fused->Run(c, Algorithm::kFlat, SteadyClock::now(), &times);
      },
      &fused_us));
  AUTOTUNE_RETURN_IF_ERROR(TimeMedianUs(
      b, [&] { return b->Allreduce(Level::kWorld, flat->data(), total / 4, DType::kFloat32); },
      &single_us));
  const int n = layout.size;
  const double factor = n > 1 ? 2.0 * (n - 1) / n : 1.0;
  const double to_gbps = factor * total / 1e3;  // bytes/us -> GB/s
  if (layout.rank == 0) {
    bench::PrintFigure(
        {.bench = std::string(n > 1 ? "executor_nccl.fused_allreduce_busbw_"
                                    : "executor_nccl.fused_allreduce_algbw_") +
                  bench::SizeLabel(total),
         .value = to_gbps / fused_us,
         .unit = "GB/s",
         .anchor = "single_ncclAllReduce",
         .anchor_value = to_gbps / single_us,
         .target = n > 1 && total >= 4 * kMiB ? bench::RatioAtLeast(0.9) : bench::NoTarget()});
  }
  return Status::Ok();
}

Status BenchCopy(NcclBackend* b, const NodeLayout& layout, int64_t bytes) {
  std::unique_ptr<Buffer> src, dst;
  AUTOTUNE_RETURN_IF_ERROR(b->Allocate(bytes, &src));
  AUTOTUNE_RETURN_IF_ERROR(b->Allocate(bytes, &dst));
  AUTOTUNE_RETURN_IF_ERROR(b->Fill(src->data(), 1, bytes));
  // 16 pieces, 256-byte aligned, packed back to back as a fusion buffer's members.
  std::vector<CopySpan> spans;
  const int64_t piece = bytes / kTensors / 256 * 256;
  for (int i = 0; i < kTensors; ++i) {
    const int64_t off = i * piece, n = i + 1 == kTensors ? bytes - off : piece;
    spans.push_back({dst->bytes_ptr() + off, src->bytes_ptr() + off, n});
  }
  cudaEvent_t start, stop;
  AUTOTUNE_RETURN_IF_ERROR(CudaStatus(cudaEventCreate(&start), "cudaEventCreate"));
  AUTOTUNE_RETURN_IF_ERROR(CudaStatus(cudaEventCreate(&stop), "cudaEventCreate"));
  std::vector<double> kernel_us, memcpy_us;
  Status st;
  for (int r = 0; r < kWarmups + kReps && st.ok(); ++r) {
    st = b->BatchCopy(spans);
    if (st.ok()) st = b->Synchronize();
    if (st.ok() && r >= kWarmups) kernel_us.push_back(b->copy_stats().last_us);
    if (st.ok()) st = CudaStatus(cudaEventRecord(start, b->comm_stream()), "cudaEventRecord");
    if (st.ok()) {
      st = CudaStatus(cudaMemcpyAsync(dst->data(), src->data(), bytes, cudaMemcpyDeviceToDevice,
                                      b->comm_stream()),
                      "cudaMemcpyAsync(device to device)");
    }
    if (st.ok()) st = CudaStatus(cudaEventRecord(stop, b->comm_stream()), "cudaEventRecord");
    if (st.ok()) st = b->Synchronize();
    float ms = 0;
    if (st.ok()) st = CudaStatus(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    if (st.ok() && r >= kWarmups) memcpy_us.push_back(ms * 1000.0);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  AUTOTUNE_RETURN_IF_ERROR(st);
  if (layout.rank == 0) {
    bench::PrintFigure({.bench = "executor_nccl.copy_kernel_bandwidth_" + bench::SizeLabel(bytes),
                        .value = bytes / 1e3 / Median(kernel_us),
                        .unit = "GB/s",
                        .anchor = "cudaMemcpy_device_to_device",
                        .anchor_value = bytes / 1e3 / Median(memcpy_us),
                        .target = bench::RatioAtLeast(0.8)});
  }
  return Status::Ok();
}

int Main(int argc, char** argv) {
  MpiSession session(&argc, &argv);
  if (!session.status().ok()) {
    std::fprintf(stderr, "%s\n", session.status().message().c_str());
    return 1;
  }
  int rank = 0, devices = CudaDeviceCount(), fewest = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Allreduce(&devices, &fewest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (fewest == 0) {
    if (rank == 0) std::printf("SKIP: no CUDA device\n");
    return 0;
  }
  NodeLayout layout;
  LayoutComms comms;
  Status st = AgreeOnStatus(MPI_COMM_WORLD, DetectLayout(MPI_COMM_WORLD, &layout, &comms));
  std::unique_ptr<NcclBackend> backend;
  if (st.ok()) st = NcclBackend::Create(MPI_COMM_WORLD, layout, comms, Knobs(), &backend);
  if (st.ok() && rank == 0) {
    std::printf("# %d ranks (%d nodes x %d); %s\n", layout.size, layout.nodes, layout.local_size,
                backend->hardware().c_str());
  }
  for (int64_t total : {kMiB, 4 * kMiB, 16 * kMiB, 64 * kMiB, 256 * kMiB}) {
    if (st.ok()) st = AgreeOnStatus(MPI_COMM_WORLD, BenchFused(backend.get(), layout, total));
  }
  for (int64_t bytes : {kMiB, 4 * kMiB, 16 * kMiB, 64 * kMiB, 256 * kMiB}) {
    if (st.ok()) st = AgreeOnStatus(MPI_COMM_WORLD, BenchCopy(backend.get(), layout, bytes));
  }
  backend.reset();
  FreeLayoutComms(&comms);
  if (!st.ok()) {
    if (rank == 0) std::fprintf(stderr, "bench_executor_nccl: %s\n", st.message().c_str());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace autotune::executor

int main(int argc, char** argv) { return autotune::executor::Main(argc, argv); }
