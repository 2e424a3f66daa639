// MeasureDeviceCopyCurve (executor/nccl/nccl_factory.h): the copy kernel's time against size.
#include <algorithm>
#include <string>
#include <vector>

#include "executor/nccl/nccl_backend.h"
#include "executor/nccl/nccl_factory.h"
#include "traces/trace.h"

namespace autotune::executor {

namespace {

constexpr int kWarmups = 2;
constexpr int kMaxPieces = 16;
constexpr int64_t kMinPieceBytes = 4096;
constexpr int64_t kPieceAlign = 256;

// One copy-in of bytes as up to kMaxPieces member tensors, 256-byte aligned like
// TensorMemory's tensors, packed back to back in the destination.
std::vector<CopySpan> CopyInSpans(char* dst, const char* src, int64_t bytes) {
  const int64_t pieces = std::clamp<int64_t>(bytes / kMinPieceBytes, 1, kMaxPieces);
  const int64_t piece = std::max<int64_t>(bytes / pieces / kPieceAlign * kPieceAlign, 1);
  std::vector<CopySpan> spans;
  int64_t done = 0, src_offset = 0;
  for (int64_t i = 0; i < pieces && done < bytes; ++i) {
    const int64_t n = i + 1 == pieces ? bytes - done : std::min(piece, bytes - done);
    spans.push_back({dst + done, src + src_offset, n});
    done += n;
    src_offset += (n + kPieceAlign - 1) / kPieceAlign * kPieceAlign;
  }
  return spans;
}

}  // namespace

Status MeasureDeviceCopyCurve(Backend* backend, std::span<const int64_t> sizes, int repetitions,
                              std::vector<CalibrationPoint>* points) {
  auto* nccl = dynamic_cast<NcclBackend*>(backend);
  if (nccl == nullptr) {
    return Status::InvalidArgument(std::string("the device copy curve needs the nccl backend, "
                                               "not ") +
                                   backend->name());
  }
  if (repetitions < 1) return Status::InvalidArgument("copy curve: repetitions must be >= 1");
  int64_t largest = 0;
  for (int64_t s : sizes) {
    if (s <= 0) return Status::InvalidArgument("copy curve: size " + std::to_string(s));
    largest = std::max(largest, s);
  }
  if (largest == 0) return Status::Ok();
  std::unique_ptr<Buffer> src, dst;
  // Source pieces are padded to kPieceAlign each.
  AUTOTUNE_RETURN_IF_ERROR(nccl->Allocate(largest + kMaxPieces * kPieceAlign, &src));
  AUTOTUNE_RETURN_IF_ERROR(nccl->Allocate(largest, &dst));
  AUTOTUNE_RETURN_IF_ERROR(nccl->Fill(src->data(), 1, src->bytes()));
  for (int64_t bytes : sizes) {
    const std::vector<CopySpan> spans = CopyInSpans(dst->bytes_ptr(), src->bytes_ptr(), bytes);
    std::vector<double> us;
    for (int r = 0; r < kWarmups + repetitions; ++r) {
      AUTOTUNE_RETURN_IF_ERROR(nccl->BatchCopy(spans));
      AUTOTUNE_RETURN_IF_ERROR(nccl->Synchronize());
      if (r >= kWarmups) us.push_back(nccl->copy_stats().last_us);
    }
    CalibrationPoint p;
    p.op = Op::kAllreduce;
    p.scope = Scope::kCopy;
    p.ranks = 1;
    p.bytes = bytes;
    p.repetitions = repetitions;
    p.median_us = Median(us);
    p.min_us = *std::min_element(us.begin(), us.end());
    p.max_us = *std::max_element(us.begin(), us.end());
    points->push_back(p);
  }
  return Status::Ok();
}

}  // namespace autotune::executor
