#include "executor/pattern.h"

#include <string>
#include <vector>

#include "executor/dtype_convert.h"

namespace autotune::executor {

int PatternValue(int rank, int tensor, int64_t element) {
  const int64_t k = 7 * static_cast<int64_t>(rank) + 3 * static_cast<int64_t>(tensor) + element;
  return static_cast<int>(k % 9) - 4;
}

int64_t PatternSum(int world_size, int tensor, int64_t element) {
  int64_t sum = 0;
  for (int r = 0; r < world_size; ++r) sum += PatternValue(r, tensor, element);
  return sum;
}

Status FillInputs(Backend* backend, const Workload& w, int rank, TensorMemory* memory) {
  std::vector<char> host;
  for (int t = 0; t < memory->size(); ++t) {
    const TensorSpec& spec = w.tensors[t];
    const int64_t n = spec.elements();
    host.resize(memory->input_bytes(t));
    for (int64_t e = 0; e < n; ++e) {
      StoreElement(spec.dtype, host.data(), e, PatternValue(rank, t, e));
    }
    AUTOTUNE_RETURN_IF_ERROR(backend->Upload(host.data(), memory->input(t), host.size()));
  }
  return Status::Ok();
}

Status PoisonOutputs(Backend* backend, TensorMemory* memory) {
  return backend->Fill(memory->outputs_base(), 0x7f, memory->total_output_bytes());
}

namespace {

Status Mismatch(int rank, const TensorSpec& spec, int t, int64_t element, double expected,
                double got) {
  return Status::Internal("wrong " + std::string(OpName(spec.op)) + " result on rank " +
                          std::to_string(rank) + ": tensor " + std::to_string(t) + " (" +
                          spec.name + ") element " + std::to_string(element) + " expected " +
                          std::to_string(expected) + " got " + std::to_string(got));
}

}  // namespace

Status VerifyOutputs(Backend* backend, const Workload& w, int rank, int world_size,
                     TensorMemory* memory) {
  std::vector<char> host;
  for (int t = 0; t < memory->size(); ++t) {
    const TensorSpec& spec = w.tensors[t];
    const int64_t n = spec.elements();
    host.resize(memory->output_bytes(t));
    AUTOTUNE_RETURN_IF_ERROR(backend->Download(memory->output(t), host.data(), host.size()));
    if (spec.op == Op::kAllreduce) {
      double expected[9];
      for (int k = 0; k < 9; ++k) expected[k] = static_cast<double>(PatternSum(world_size, t, k));
      for (int64_t e = 0; e < n; ++e) {
        const double got = LoadElement(spec.dtype, host.data(), e);
        if (got != expected[e % 9]) return Mismatch(rank, spec, t, e, expected[e % 9], got);
      }
    } else {
      for (int r = 0; r < world_size; ++r) {
        for (int64_t e = 0; e < n; ++e) {
          const double got = LoadElement(spec.dtype, host.data(), r * n + e);
          const double expected = PatternValue(r, t, e);
          if (got != expected) return Mismatch(rank, spec, t, r * n + e, expected, got);
        }
      }
    }
  }
  return Status::Ok();
}

}  // namespace autotune::executor
