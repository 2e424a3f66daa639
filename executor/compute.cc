#include "executor/compute.h"

#include <cstdint>
#include <thread>

namespace autotune::executor {

namespace {

// Burns CPU until the deadline. Each round is a chain of dependent multiply-adds whose value
// passes through an empty asm statement the optimizer must treat as reading and changing it,
// so neither the loop nor its arithmetic can be folded away; the clock is read between
// rounds (a few microseconds each) so the phase ends close to its deadline.
void SpinUntil(std::chrono::steady_clock::time_point deadline) {
  uint64_t x = static_cast<uint64_t>(deadline.time_since_epoch().count());
  while (std::chrono::steady_clock::now() < deadline) {
    for (int i = 0; i < 4096; ++i) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      asm volatile("" : "+r"(x));
    }
  }
  asm volatile("" : : "r"(x));
}

}  // namespace

const char* ComputeModeName(ComputeMode mode) {
  switch (mode) {
    case ComputeMode::kSpin:
      return "spin";
    case ComputeMode::kSleep:
      return "sleep";
  }
  return "?";
}

Status ParseComputeMode(const std::string& name, ComputeMode* out) {
  for (ComputeMode mode : {ComputeMode::kSpin, ComputeMode::kSleep}) {
    if (name == ComputeModeName(mode)) {
      *out = mode;
      return Status::Ok();
    }
  }
  return Status::InvalidArgument("--compute " + name + ": must be spin or sleep");
}

ComputeMode DefaultComputeMode(BackendKind backend) {
  return backend == BackendKind::kNccl ? ComputeMode::kSleep : ComputeMode::kSpin;
}

void ComputeUntil(ComputeMode mode, std::chrono::steady_clock::time_point deadline) {
  if (mode == ComputeMode::kSpin) {
    SpinUntil(deadline);
  } else {
    std::this_thread::sleep_until(deadline);
  }
}

}  // namespace autotune::executor
