// The batched copy's descriptor and the two decisions the copy kernel makes per chunk,
// shared as is by host code (plans, tests) and device code (executor/nccl/copy_kernel.cu).
// Plain C++ with no includes beyond <cstdint>, so nvcc and the host compiler both take it.
//
// Work is cut into chunks of kCopyChunkBytes: copy i covers chunks [first_chunk,
// first_chunk + ceil(bytes / kCopyChunkBytes)), numbered across the whole batch, so the
// kernel's blocks share the bytes evenly however unequal the copies are.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define AUTOTUNE_HOST_DEVICE __host__ __device__
#else
#define AUTOTUNE_HOST_DEVICE
#endif

namespace autotune::executor {

// 16 KiB: a multiple of 16, so every chunk of a copy keeps the copy's 16-byte alignment.
inline constexpr int64_t kCopyChunkBytes = 16 * 1024;
// Threads per block of the copy kernel.
inline constexpr int kCopyBlockThreads = 256;
// Resident blocks per SM the grid aims at (kCopyBlockThreads * 8 = 2048 threads per SM).
inline constexpr int kCopyBlocksPerSm = 8;
// Batches of at most this many copies travel inside the kernel's parameters (under the
// classic 4 KiB limit); larger ones go through a device descriptor array.
inline constexpr int kInlineCopyDescriptors = 120;

// Plain pointers and 64-bit integers, 32 bytes, identical on host and device.
struct CopyDescriptor {
  const void* src;
  void* dst;
  int64_t bytes;
  int64_t first_chunk;
};
static_assert(sizeof(CopyDescriptor) == 32);

// Index of the descriptor that holds chunk: the last one whose first_chunk <= chunk.
// REQUIRES count >= 1, descriptors ordered by first_chunk, descriptors[0].first_chunk == 0.
AUTOTUNE_HOST_DEVICE inline int FindCopyDescriptor(const CopyDescriptor* descriptors, int count,
                                                   int64_t chunk) {
  int lo = 0, hi = count - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (descriptors[mid].first_chunk <= chunk) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

// Word size (16, 8, 4, 2 or 1 bytes) a copy moves with: the largest w for which src and
// dst are equally misaligned modulo w, so that a head of fewer than w bytes aligns both.
AUTOTUNE_HOST_DEVICE inline int CopyWordBytes(const void* src, const void* dst) {
  const uintptr_t diff = reinterpret_cast<uintptr_t>(src) ^ reinterpret_cast<uintptr_t>(dst);
  int w = 16;
  while (w > 1 && (diff & (w - 1)) != 0) w /= 2;
  return w;
}

}  // namespace autotune::executor
