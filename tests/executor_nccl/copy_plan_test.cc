// The batched copy's host-side arithmetic: descriptors, chunk numbering, the kernel's
// descriptor search and word choice (the same inline functions the kernel runs), and a host
// replay of the kernel's chunk walk that must copy every byte exactly once.
#include "executor/nccl/copy_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

namespace autotune::executor {
namespace {

const void* At(uintptr_t address) { return reinterpret_cast<const void*>(address); }

TEST(CopyPlan, NumbersChunksAcrossTheBatchAndDropsEmptyCopies) {
  std::vector<char> a(100000), b(100000);
  const std::vector<CopySpan> copies = {{b.data(), a.data(), 1},
                                        {b.data() + 10, a.data() + 10, kCopyChunkBytes},
                                        {b.data() + 20000, a.data() + 20000, kCopyChunkBytes + 1},
                                        {nullptr, nullptr, 0},
                                        {b.data() + 60000, a.data() + 60000, 40000}};
  CopyPlan plan;
  ASSERT_TRUE(BuildCopyPlan(copies, &plan).ok());
  ASSERT_EQ(plan.descriptors.size(), 4u);
  EXPECT_EQ(plan.descriptors[0].first_chunk, 0);
  EXPECT_EQ(plan.descriptors[1].first_chunk, 1);
  EXPECT_EQ(plan.descriptors[2].first_chunk, 2);
  EXPECT_EQ(plan.descriptors[3].first_chunk, 4);
  EXPECT_EQ(plan.descriptors[3].src, a.data() + 60000);
  EXPECT_EQ(plan.descriptors[3].bytes, 40000);
  EXPECT_EQ(plan.total_chunks, 7);  // 1 + 1 + 2 + 3
  EXPECT_EQ(plan.total_bytes, 1 + 2 * kCopyChunkBytes + 1 + 40000);
}

TEST(CopyPlan, BadCopiesAreNamedByIndex) {
  char x[8];
  CopyPlan plan;
  std::vector<CopySpan> copies = {{x, x + 4, 4}, {x, x, -1}};
  Status st = BuildCopyPlan(copies, &plan);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("batch copy 1: negative size -1"), std::string::npos);
  copies[1] = {x, nullptr, 3};
  st = BuildCopyPlan(copies, &plan);
  EXPECT_NE(st.message().find("batch copy 1: null source"), std::string::npos) << st.message();
}

TEST(CopyPlan, DescriptorSearchFindsTheOwnerOfEveryChunk) {
  std::vector<char> a(1 << 20), b(1 << 20);
  std::vector<CopySpan> copies;
  int64_t offset = 0;
  for (int64_t bytes : {5, 16384, 3, 70000, 16385, 1, 200000, 32768}) {
    copies.push_back({b.data() + offset, a.data() + offset, bytes});
    offset += bytes;
  }
  CopyPlan plan;
  ASSERT_TRUE(BuildCopyPlan(copies, &plan).ok());
  const int n = static_cast<int>(plan.descriptors.size());
  for (int64_t chunk = 0; chunk < plan.total_chunks; ++chunk) {
    int owner = 0;
    for (int i = 0; i < n; ++i) {
      if (plan.descriptors[i].first_chunk <= chunk) owner = i;
    }
    EXPECT_EQ(FindCopyDescriptor(plan.descriptors.data(), n, chunk), owner) << chunk;
  }
}

TEST(CopyPlan, WordSizeFollowsTheCommonAlignment) {
  EXPECT_EQ(CopyWordBytes(At(0x1000), At(0x2000)), 16);
  EXPECT_EQ(CopyWordBytes(At(0x1008), At(0x2008)), 16);  // equally misaligned: a head fixes it
  EXPECT_EQ(CopyWordBytes(At(0x1000), At(0x2008)), 8);
  EXPECT_EQ(CopyWordBytes(At(0x1004), At(0x2000)), 4);
  EXPECT_EQ(CopyWordBytes(At(0x1002), At(0x2000)), 2);
  EXPECT_EQ(CopyWordBytes(At(0x1001), At(0x2000)), 1);
  EXPECT_EQ(CopyWordBytes(At(0x1003), At(0x2001)), 2);
}

TEST(CopyPlan, GridHasOneBlockPerChunkUpToEightPerSm) {
  EXPECT_EQ(CopyGridBlocks(0, 132), 1);
  EXPECT_EQ(CopyGridBlocks(10, 132), 10);
  EXPECT_EQ(CopyGridBlocks(100000, 132), 132 * kCopyBlocksPerSm);
  EXPECT_EQ(CopyGridBlocks(100000, 0), kCopyBlocksPerSm);
}

// The kernel's walk on the host: blocks take chunks grid-stride, find the copy, cut the
// chunk, and move head / words / tail as CopyRange does. Every destination byte must be
// written exactly once with its source byte, and nothing else touched.
void ReplayKernel(const CopyPlan& plan, int blocks, std::vector<int>* writes, char* dst_base) {
  const int n = static_cast<int>(plan.descriptors.size());
  for (int block = 0; block < blocks; ++block) {
    for (int64_t chunk = block; chunk < plan.total_chunks; chunk += blocks) {
      const CopyDescriptor& c =
          plan.descriptors[FindCopyDescriptor(plan.descriptors.data(), n, chunk)];
      const int64_t off = (chunk - c.first_chunk) * kCopyChunkBytes;
      const int64_t len = std::min(kCopyChunkBytes, c.bytes - off);
      const char* src = static_cast<const char*>(c.src) + off;
      char* dst = static_cast<char*>(c.dst) + off;
      const int w = CopyWordBytes(src, dst);
      int64_t head = (w - (reinterpret_cast<uintptr_t>(src) & (w - 1))) & (w - 1);
      head = std::min(head, len);
      const int64_t words = (len - head) / w;
      ASSERT_EQ(reinterpret_cast<uintptr_t>(dst + head) % w, 0u);
      ASSERT_EQ(reinterpret_cast<uintptr_t>(src + head) % w, 0u);
      for (int64_t i = 0; i < len; ++i) {  // head, words * w, tail: all of [0, len)
        dst[i] = src[i];
        ++(*writes)[dst + i - dst_base];
      }
      ASSERT_LE(head + words * w, len);
    }
  }
}

TEST(CopyPlan, ReplayedKernelCopiesEveryByteExactlyOnce) {
  std::vector<char> src(300000), dst(300000, 0);
  std::iota(src.begin(), src.end(), 1);
  // Misaligned, unequal, some larger than a chunk; destinations packed back to back.
  std::vector<CopySpan> copies;
  int64_t s = 3, d = 0;
  for (int64_t bytes : {1, 17, 4000, 16384, 16385, 65536 + 7, 2, 100000}) {
    copies.push_back({dst.data() + d, src.data() + s, bytes});
    s += bytes + 5;
    d += bytes;
  }
  CopyPlan plan;
  ASSERT_TRUE(BuildCopyPlan(copies, &plan).ok());
  std::vector<int> writes(dst.size(), 0);
  for (int blocks : {1, 3, 1000}) {
    std::fill(writes.begin(), writes.end(), 0);
    ReplayKernel(plan, blocks, &writes, dst.data());
    for (int64_t i = 0; i < static_cast<int64_t>(dst.size()); ++i) {
      ASSERT_EQ(writes[i], i < d ? 1 : 0) << "byte " << i << " with " << blocks << " blocks";
    }
  }
  for (const CopySpan& c : copies) {
    EXPECT_EQ(std::memcmp(c.dst, c.src, c.bytes), 0);
  }
}

}  // namespace
}  // namespace autotune::executor
