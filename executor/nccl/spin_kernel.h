// Emulated compute on the GPU: kernels that keep a stream busy for a given time, read from
// the GPU's global timer (nanoseconds), so that gradients become ready on the device's
// clock the way a real backward pass makes them.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace autotune::executor {

// Enqueues a kernel that writes the global timer (ns) to *device_origin_ns.
cudaError_t LaunchStampTimer(uint64_t* device_origin_ns, cudaStream_t stream);
// Enqueues a kernel that spins until the global timer reaches *device_origin_ns +
// offset_ns (returns at once if it already has): absolute deadlines, so launch gaps
// between consecutive spins do not add up. REQUIRES offset_ns >= 0.
cudaError_t LaunchSpinUntil(const uint64_t* device_origin_ns, int64_t offset_ns,
                            cudaStream_t stream);
// Enqueues a kernel that spins for duration_ns from its own start.
cudaError_t LaunchSpinFor(int64_t duration_ns, cudaStream_t stream);

}  // namespace autotune::executor
