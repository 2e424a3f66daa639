// Workload: a model's gradient tensors in the order they become ready in the backward
// pass, with the compute phases around them (DESIGN.md, "Workload file").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "traces/status.h"

namespace autotune {

enum class DType { kFloat32, kFloat64, kFloat16, kBFloat16, kInt32, kInt64 };
enum class Op { kAllreduce, kAllgather };

int DTypeSize(DType d);
const char* DTypeName(DType d);  // "float32", ...
Status ParseDType(const std::string& s, DType* d);
const char* OpName(Op op);  // "allreduce" | "allgather"
Status ParseOp(const std::string& s, Op* op);

struct TensorSpec {
  std::string name;
  std::vector<int64_t> shape;  // elements = product of shape (empty shape = scalar, 1 element)
  Op op = Op::kAllreduce;
  DType dtype = DType::kFloat32;
  double ready_ms = 0.0;  // from the start of the backward pass, milliseconds
  int group = -1;         // explicit fusion group from the file, -1 = none

  int64_t elements() const;
  int64_t bytes() const { return elements() * DTypeSize(dtype); }
};

struct Workload {
  std::string name;
  DType dtype = DType::kFloat32;  // default dtype of the tensors
  double forward_ms = 0.0;        // emulated forward compute per step, ms
  double backward_ms = 0.0;       // emulated backward compute per step, ms
  double optimizer_ms = 0.0;      // emulated optimizer step, ms
  std::vector<TensorSpec> tensors;  // in ready order (ready_ms non-decreasing)

  int64_t total_elements() const;
  int64_t total_bytes() const;
};

// Parses the workload JSON format. `source` (a file name) prefixes every error.
// Checks: required fields, types, positive shapes, ready_ms within [0, backward_ms]
// and non-decreasing, known dtype/op, unique names, at least one tensor.
Status ParseWorkloadJson(const std::string& text, const std::string& source, Workload* out);
Status LoadWorkloadFile(const std::string& path, Workload* out);
nlohmann::json WorkloadToJson(const Workload& w);

// Built-in workloads: resnet50, vgg16, bert-large, gpt2 (exact parameter lists).
const std::vector<std::string>& BuiltinWorkloadNames();
// Returns NotFound (listing the known names) for an unknown name.
Status BuiltinWorkload(const std::string& name, Workload* out);
// A name from BuiltinWorkloadNames() or a path to a JSON file.
Status ResolveWorkload(const std::string& name_or_path, Workload* out);

// Shrinks every tensor to max(1, round(elements * scale)) elements (kept as a 1-D shape
// when scaled) and the compute phases by the same factor. REQUIRES: 0 < scale <= 1.
Status ScaleWorkload(double scale, Workload* w);

}  // namespace autotune
