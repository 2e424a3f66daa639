// TensorMemory: the per-rank gradient memory of one workload, in the backend's space.
// Each tensor has an input (the gradient this rank contributes: its bytes) and an output
// (the result: allreduce its bytes; allgather world_size * its bytes, rank-major), as
// Horovod's allreduce/allgather take an input tensor and return an output tensor.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "executor/backend.h"
#include "traces/status.h"
#include "traces/workload.h"

namespace autotune::executor {

class TensorMemory {
 public:
  // Allocates two arenas (inputs, outputs) with every tensor 64-byte aligned.
  static Status Create(Backend* backend, const Workload& workload, int world_size,
                       std::unique_ptr<TensorMemory>* out);

  int size() const { return static_cast<int>(input_offset_.size()); }
  char* input(int t) { return inputs_->bytes_ptr() + input_offset_[t]; }
  char* output(int t) { return outputs_->bytes_ptr() + output_offset_[t]; }
  int64_t input_bytes(int t) const { return input_bytes_[t]; }
  int64_t output_bytes(int t) const { return output_bytes_[t]; }
  int64_t total_output_bytes() const { return outputs_->bytes(); }
  char* outputs_base() { return outputs_->bytes_ptr(); }

 private:
  TensorMemory() = default;
  std::unique_ptr<Buffer> inputs_, outputs_;
  std::vector<int64_t> input_offset_, output_offset_, input_bytes_, output_bytes_;
};

}  // namespace autotune::executor
