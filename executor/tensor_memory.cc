#include "executor/tensor_memory.h"

#include <string>

namespace autotune::executor {

namespace {
constexpr int64_t kAlign = 64;
int64_t AlignUp(int64_t x) { return (x + kAlign - 1) / kAlign * kAlign; }
}  // namespace

Status TensorMemory::Create(Backend* backend, const Workload& workload, int world_size,
                            std::unique_ptr<TensorMemory>* out) {
  std::unique_ptr<TensorMemory> m(new TensorMemory());
  int64_t in_total = 0, out_total = 0;
  for (const TensorSpec& t : workload.tensors) {
    const int64_t in = t.bytes();
    const int64_t res = t.op == Op::kAllgather ? in * world_size : in;
    m->input_offset_.push_back(in_total);
    m->output_offset_.push_back(out_total);
    m->input_bytes_.push_back(in);
    m->output_bytes_.push_back(res);
    in_total += AlignUp(in);
    out_total += AlignUp(res);
  }
  Status st = backend->Allocate(in_total, &m->inputs_);
  if (st.ok()) st = backend->Allocate(out_total, &m->outputs_);
  if (!st.ok()) {
    return st.WithPrefix("workload " + workload.name + ": allocating " +
                         std::to_string(in_total + out_total) + " bytes of tensors");
  }
  *out = std::move(m);
  return Status::Ok();
}

}  // namespace autotune::executor
