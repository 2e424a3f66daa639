#include <cstring>
#include <string>
#include <vector>

#include "executor/dtype_convert.h"
#include "executor/hierarchical.h"
#include "gpu_checks.h"

namespace autotune::executor::gpu_test {

namespace {

// Small integers: every sum over a few hundred ranks is exact in every dtype.
double Value(int rank, int64_t e) { return static_cast<double>((3 * rank + e) % 7) - 3; }
unsigned char Byte(int rank, int64_t i) { return static_cast<unsigned char>(rank * 31 + i); }

Status Wrong(const std::string& what, int64_t index, double expected, double got) {
  return Status::Internal(what + ": element " + std::to_string(index) + " expected " +
                          std::to_string(expected) + " got " + std::to_string(got));
}

struct DeviceArray {
  std::unique_ptr<Buffer> buf;
  std::vector<char> host;
  Status Make(Backend* b, int64_t bytes) {
    host.assign(bytes, 0);
    return b->Allocate(bytes, &buf);
  }
  Status Up(Backend* b) { return b->Upload(host.data(), buf->data(), host.size()); }
  Status Down(Backend* b) {
    AUTOTUNE_RETURN_IF_ERROR(b->Synchronize());
    return b->Download(buf->data(), host.data(), host.size());
  }
};

}  // namespace

Status CheckAllreduce(Backend* b, Level level, DType dtype, int64_t count) {
  const int rank = b->Rank(level), size = b->Size(level);
  DeviceArray a;
  AUTOTUNE_RETURN_IF_ERROR(a.Make(b, count * DTypeSize(dtype)));
  for (int64_t e = 0; e < count; ++e) StoreElement(dtype, a.host.data(), e, Value(rank, e));
  AUTOTUNE_RETURN_IF_ERROR(a.Up(b));
  AUTOTUNE_RETURN_IF_ERROR(b->Allreduce(level, a.buf->data(), count, dtype));
  AUTOTUNE_RETURN_IF_ERROR(a.Down(b));
  for (int64_t e = 0; e < count; ++e) {
    double expected = 0;
    for (int r = 0; r < size; ++r) expected += Value(r, e);
    const double got = LoadElement(dtype, a.host.data(), e);
    if (got != expected) return Wrong("allreduce", e, expected, got);
  }
  return Status::Ok();
}

Status CheckReduceScatter(Backend* b, Level level, int64_t count) {
  const int rank = b->Rank(level), size = b->Size(level);
  DeviceArray a;
  AUTOTUNE_RETURN_IF_ERROR(a.Make(b, size * count * 4));
  for (int64_t e = 0; e < size * count; ++e) {
    StoreElement(DType::kFloat32, a.host.data(), e, Value(rank, e));
  }
  AUTOTUNE_RETURN_IF_ERROR(a.Up(b));
  AUTOTUNE_RETURN_IF_ERROR(b->ReduceScatter(level, a.buf->data(), count, DType::kFloat32));
  AUTOTUNE_RETURN_IF_ERROR(a.Down(b));
  for (int64_t e = rank * count; e < (rank + 1) * count; ++e) {
    double expected = 0;
    for (int r = 0; r < size; ++r) expected += Value(r, e);
    const double got = LoadElement(DType::kFloat32, a.host.data(), e);
    if (got != expected) return Wrong("reduce-scatter", e, expected, got);
  }
  return Status::Ok();
}

Status CheckAllgather(Backend* b, Level level, int64_t block_bytes) {
  const int rank = b->Rank(level), size = b->Size(level);
  DeviceArray a;
  AUTOTUNE_RETURN_IF_ERROR(a.Make(b, size * block_bytes));
  std::memset(a.host.data(), 0x7f, a.host.size());
  for (int64_t i = 0; i < block_bytes; ++i) a.host[rank * block_bytes + i] = Byte(rank, i);
  AUTOTUNE_RETURN_IF_ERROR(a.Up(b));
  AUTOTUNE_RETURN_IF_ERROR(b->Allgather(level, a.buf->data(), block_bytes));
  AUTOTUNE_RETURN_IF_ERROR(a.Down(b));
  for (int r = 0; r < size; ++r) {
    for (int64_t i = 0; i < block_bytes; ++i) {
      const unsigned char got = a.host[r * block_bytes + i];
      if (got != Byte(r, i)) return Wrong("allgather", r * block_bytes + i, Byte(r, i), got);
    }
  }
  return Status::Ok();
}

Status CheckBroadcast(Backend* b, Level level, int64_t bytes) {
  const int rank = b->Rank(level), root = b->Size(level) - 1;
  DeviceArray a;
  AUTOTUNE_RETURN_IF_ERROR(a.Make(b, bytes));
  for (int64_t i = 0; i < bytes; ++i) a.host[i] = rank == root ? Byte(root, i) : 0x7f;
  AUTOTUNE_RETURN_IF_ERROR(a.Up(b));
  AUTOTUNE_RETURN_IF_ERROR(b->Broadcast(level, a.buf->data(), bytes, root));
  AUTOTUNE_RETURN_IF_ERROR(a.Down(b));
  for (int64_t i = 0; i < bytes; ++i) {
    const unsigned char got = a.host[i];
    if (got != Byte(root, i)) return Wrong("broadcast", i, Byte(root, i), got);
  }
  return Status::Ok();
}

Status CheckGather(Backend* b, Level level, int64_t block_bytes) {
  const int rank = b->Rank(level), size = b->Size(level), root = 0;
  DeviceArray a;
  AUTOTUNE_RETURN_IF_ERROR(a.Make(b, size * block_bytes));
  std::memset(a.host.data(), 0x55, a.host.size());
  for (int64_t i = 0; i < block_bytes; ++i) a.host[rank * block_bytes + i] = Byte(rank, i);
  AUTOTUNE_RETURN_IF_ERROR(a.Up(b));
  AUTOTUNE_RETURN_IF_ERROR(b->Gather(level, a.buf->data(), block_bytes, root));
  AUTOTUNE_RETURN_IF_ERROR(a.Down(b));
  for (int r = 0; r < size; ++r) {
    for (int64_t i = 0; i < block_bytes; ++i) {
      // The root holds every block; other ranks' buffers are unchanged.
      const unsigned char expected = rank == root || r == rank ? Byte(r, i) : 0x55;
      const unsigned char got = a.host[r * block_bytes + i];
      if (got != expected) return Wrong("gather", r * block_bytes + i, expected, got);
    }
  }
  return Status::Ok();
}

Status CheckBatchCopy(Backend* b, int copies) {
  const int64_t kBytes = 8 << 20;
  DeviceArray src, dst;
  AUTOTUNE_RETURN_IF_ERROR(src.Make(b, kBytes));
  AUTOTUNE_RETURN_IF_ERROR(dst.Make(b, kBytes));
  for (int64_t i = 0; i < kBytes; ++i) src.host[i] = static_cast<char>(i * 7 + 1);
  AUTOTUNE_RETURN_IF_ERROR(src.Up(b));
  AUTOTUNE_RETURN_IF_ERROR(dst.Up(b));  // zeros
  // Sizes from 1 byte to past a chunk, offsets misaligned in every way, packed in dst.
  std::vector<CopySpan> spans;
  std::vector<char> expected(kBytes, 0);
  int64_t s = 1, d = 0;
  for (int i = 0; i < copies; ++i) {
    const int64_t n = 1 + (static_cast<int64_t>(i) * 7919) % (copies > 100 ? 9000 : 70000);
    if (s + n > kBytes || d + n > kBytes) break;
    spans.push_back({dst.buf->bytes_ptr() + d, src.buf->bytes_ptr() + s, n});
    std::memcpy(expected.data() + d, src.host.data() + s, n);
    s += n + i % 5;
    d += n + i % 3;
  }
  AUTOTUNE_RETURN_IF_ERROR(b->BatchCopy(spans));
  AUTOTUNE_RETURN_IF_ERROR(dst.Down(b));
  for (int64_t i = 0; i < kBytes; ++i) {
    if (dst.host[i] != expected[i]) {
      return Wrong("batch copy of " + std::to_string(spans.size()) + " spans", i,
                   static_cast<unsigned char>(expected[i]),
                   static_cast<unsigned char>(dst.host[i]));
    }
  }
  return Status::Ok();
}

Status CheckHierarchicalAllreduce(Backend* b, DType dtype, int64_t count) {
  const int rank = b->Rank(Level::kWorld), size = b->Size(Level::kWorld);
  DeviceArray a;
  AUTOTUNE_RETURN_IF_ERROR(a.Make(b, count * DTypeSize(dtype)));
  for (int64_t e = 0; e < count; ++e) StoreElement(dtype, a.host.data(), e, Value(rank, e));
  AUTOTUNE_RETURN_IF_ERROR(a.Up(b));
  AUTOTUNE_RETURN_IF_ERROR(HierarchicalAllreduce(b, a.buf->data(), count, dtype));
  AUTOTUNE_RETURN_IF_ERROR(a.Down(b));
  for (int64_t e = 0; e < count; ++e) {
    double expected = 0;
    for (int r = 0; r < size; ++r) expected += Value(r, e);
    const double got = LoadElement(dtype, a.host.data(), e);
    if (got != expected) return Wrong("hierarchical allreduce", e, expected, got);
  }
  return Status::Ok();
}

Status CheckHierarchicalAllgather(Backend* b, const NodeLayout& layout, int64_t block_bytes) {
  const int rank = layout.rank, size = layout.size;
  DeviceArray a;
  AUTOTUNE_RETURN_IF_ERROR(a.Make(b, size * block_bytes));
  std::unique_ptr<Buffer> scratch;
  if (!layout.block_placement()) {
    AUTOTUNE_RETURN_IF_ERROR(b->Allocate(size * block_bytes, &scratch));
  }
  std::memset(a.host.data(), 0x7f, a.host.size());
  for (int64_t i = 0; i < block_bytes; ++i) a.host[rank * block_bytes + i] = Byte(rank, i);
  AUTOTUNE_RETURN_IF_ERROR(a.Up(b));
  AUTOTUNE_RETURN_IF_ERROR(HierarchicalAllgather(b, layout, a.buf->data(), block_bytes,
                                                 scratch ? scratch->data() : nullptr));
  AUTOTUNE_RETURN_IF_ERROR(a.Down(b));
  for (int r = 0; r < size; ++r) {
    for (int64_t i = 0; i < block_bytes; ++i) {
      const unsigned char got = a.host[r * block_bytes + i];
      if (got != Byte(r, i)) {
        return Wrong("hierarchical allgather", r * block_bytes + i, Byte(r, i), got);
      }
    }
  }
  return Status::Ok();
}

}  // namespace autotune::executor::gpu_test
