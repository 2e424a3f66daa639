// Fuzz target: the workload JSON parser (traces/workload.h) on arbitrary bytes. Whatever the
// input, ParseWorkloadJson returns a Status; a workload it accepts must satisfy the
// contract it documents and write back to JSON that parses to the same workload.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "traces/workload.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using autotune::Workload;
  const std::string text(reinterpret_cast<const char*>(data), size);
  Workload w;
  autotune::Status s = autotune::ParseWorkloadJson(text, "fuzz.json", &w);
  if (!s.ok()) {
    if (s.message().empty() || s.message().find('\n') != std::string::npos) std::abort();
    return 0;
  }
  if (w.tensors.empty() || w.total_bytes() < 0) std::abort();
  for (size_t i = 0; i < w.tensors.size(); ++i) {
    const autotune::TensorSpec& t = w.tensors[i];
    if (t.elements() < 1 || t.ready_ms < 0 || t.ready_ms > w.backward_ms) std::abort();
    if (i > 0 && t.ready_ms < w.tensors[i - 1].ready_ms) std::abort();
  }
  Workload again;
  if (!autotune::ParseWorkloadJson(autotune::WorkloadToJson(w).dump(), "again", &again).ok()) {
    std::abort();
  }
  if (again.tensors.size() != w.tensors.size() || again.total_bytes() != w.total_bytes()) {
    std::abort();
  }
  return 0;
}
