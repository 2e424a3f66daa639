#include "executor/nccl/copy_kernel.h"

namespace autotune::executor {

namespace {

// Copies len bytes in Word units: a head of bytes until src (and so dst) is Word-aligned,
// the body with four independent loads in flight per thread, then a tail of bytes.
template <typename Word>
__device__ void CopyRange(const char* __restrict__ src, char* __restrict__ dst, int64_t len) {
  constexpr int kWord = sizeof(Word);
  int64_t head = (kWord - (reinterpret_cast<uintptr_t>(src) & (kWord - 1))) & (kWord - 1);
  if (head > len) head = len;
  for (int64_t i = threadIdx.x; i < head; i += blockDim.x) dst[i] = src[i];
  const int64_t words = (len - head) / kWord;
  const Word* __restrict__ s = reinterpret_cast<const Word*>(src + head);
  Word* __restrict__ d = reinterpret_cast<Word*>(dst + head);
  const int64_t stride = blockDim.x;
  int64_t i = threadIdx.x;
  for (; i + 3 * stride < words; i += 4 * stride) {
    const Word a = s[i], b = s[i + stride], c = s[i + 2 * stride], e = s[i + 3 * stride];
    d[i] = a;
    d[i + stride] = b;
    d[i + 2 * stride] = c;
    d[i + 3 * stride] = e;
  }
  for (; i < words; i += stride) d[i] = s[i];
  for (int64_t j = head + words * kWord + threadIdx.x; j < len; j += stride) dst[j] = src[j];
}

__device__ void CopyChunks(const CopyDescriptor* descriptors, int count, int64_t total_chunks) {
  for (int64_t chunk = blockIdx.x; chunk < total_chunks; chunk += gridDim.x) {
    const CopyDescriptor& c = descriptors[FindCopyDescriptor(descriptors, count, chunk)];
    const int64_t offset = (chunk - c.first_chunk) * kCopyChunkBytes;
    const int64_t left = c.bytes - offset;
    const int64_t len = left < kCopyChunkBytes ? left : kCopyChunkBytes;
    const char* src = static_cast<const char*>(c.src) + offset;
    char* dst = static_cast<char*>(c.dst) + offset;
    switch (CopyWordBytes(src, dst)) {
      case 16:
        CopyRange<uint4>(src, dst, len);
        break;
      case 8:
        CopyRange<uint2>(src, dst, len);
        break;
      case 4:
        CopyRange<uint32_t>(src, dst, len);
        break;
      case 2:
        CopyRange<uint16_t>(src, dst, len);
        break;
      default:
        CopyRange<uint8_t>(src, dst, len);
        break;
    }
  }
}

template <int N>
struct InlineBatch {
  CopyDescriptor descriptors[N];
  int count;
  int64_t total_chunks;
};

template <int N>
__global__ void __launch_bounds__(kCopyBlockThreads)
    BatchCopyInline(const __grid_constant__ InlineBatch<N> batch) {
  CopyChunks(batch.descriptors, batch.count, batch.total_chunks);
}

__global__ void __launch_bounds__(kCopyBlockThreads)
    BatchCopyIndirect(const CopyDescriptor* descriptors, int count, int64_t total_chunks) {
  CopyChunks(descriptors, count, total_chunks);
}

template <int N>
cudaError_t LaunchInline(const CopyDescriptor* host, int count, int64_t total_chunks, int blocks,
                         cudaStream_t stream) {
  InlineBatch<N> batch;
  for (int i = 0; i < count; ++i) batch.descriptors[i] = host[i];
  batch.count = count;
  batch.total_chunks = total_chunks;
  BatchCopyInline<N><<<blocks, kCopyBlockThreads, 0, stream>>>(batch);
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchBatchCopyKernel(const CopyDescriptor* host_descriptors,
                                  const CopyDescriptor* device_descriptors, int count,
                                  int64_t total_chunks, int blocks, cudaStream_t stream) {
  static_assert(sizeof(InlineBatch<kInlineCopyDescriptors>) <= 4096);
  if (count <= 8) return LaunchInline<8>(host_descriptors, count, total_chunks, blocks, stream);
  if (count <= 32) {
    return LaunchInline<32>(host_descriptors, count, total_chunks, blocks, stream);
  }
  if (count <= kInlineCopyDescriptors) {
    return LaunchInline<kInlineCopyDescriptors>(host_descriptors, count, total_chunks, blocks,
                                                stream);
  }
  BatchCopyIndirect<<<blocks, kCopyBlockThreads, 0, stream>>>(device_descriptors, count,
                                                              total_chunks);
  return cudaGetLastError();
}

}  // namespace autotune::executor
