#include "executor/nccl/spin_kernel.h"

namespace autotune::executor {

namespace {

__device__ uint64_t GlobalTimerNs() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ void SpinTo(uint64_t deadline_ns) {
  while (GlobalTimerNs() < deadline_ns) __nanosleep(256);
}

__global__ void StampTimer(uint64_t* origin_ns) { *origin_ns = GlobalTimerNs(); }

__global__ void SpinUntil(const uint64_t* origin_ns, uint64_t offset_ns) {
  SpinTo(*origin_ns + offset_ns);
}

__global__ void SpinFor(uint64_t duration_ns) { SpinTo(GlobalTimerNs() + duration_ns); }

}  // namespace

cudaError_t LaunchStampTimer(uint64_t* device_origin_ns, cudaStream_t stream) {
  StampTimer<<<1, 1, 0, stream>>>(device_origin_ns);
  return cudaGetLastError();
}

cudaError_t LaunchSpinUntil(const uint64_t* device_origin_ns, int64_t offset_ns,
                            cudaStream_t stream) {
  SpinUntil<<<1, 1, 0, stream>>>(device_origin_ns, static_cast<uint64_t>(offset_ns));
  return cudaGetLastError();
}

cudaError_t LaunchSpinFor(int64_t duration_ns, cudaStream_t stream) {
  SpinFor<<<1, 1, 0, stream>>>(static_cast<uint64_t>(duration_ns));
  return cudaGetLastError();
}

}  // namespace autotune::executor
