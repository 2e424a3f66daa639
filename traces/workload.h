// Workload: a model's gradient tensors in the order they become ready in the backward
// pass, with the compute phases around them (DESIGN.md, "Workload file").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "traces/status.h"

namespace autotune {

enum class DType { kFloat32, kFloat64, kFloat16, kBFloat16, kInt32, kInt64 };
enum class Op { kAllreduce, kAllgather };

int DTypeSize(DType d);
const char* DTypeName(DType d);  // "float32", ...
Status ParseDType(const std::string& s, DType* d);
const char* OpName(Op op);  // "allreduce" | "allgather"
Status ParseOp(const std::string& s, Op* op);

// Limits of a workload (file, built-in, or imported from a timeline); README, "Limits of input
// files". A trace stores one row per tensor and rank for every step, so the tensor count
// bounds the database and the simulator as much as the file.
// At most this many tensors: the largest real models have a few thousand parameter tensors.
inline constexpr size_t kMaxWorkloadTensors = size_t{1} << 17;
// At most this many bytes in a tensor's or workload's name (framework names are a few hundred
// at most); names are printed in tables and error lines, so no control characters either.
inline constexpr size_t kMaxTensorNameBytes = 4096;
// At most this many dimensions in a tensor's shape: more is padding with 1s, and it bounds
// the memory one tensor's entry takes.
inline constexpr size_t kMaxShapeDims = 64;
// A workload file larger than this is refused before it is parsed: it bounds the memory of
// the JSON document (about ten times the text); 2^17 tensors of names of a hundred bytes
// take about 20 MiB.
inline constexpr size_t kMaxWorkloadFileBytes = size_t{64} << 20;

// Returns OK for a name within kMaxTensorNameBytes, non-empty, without control characters;
// else an error saying which (without the name itself, which may be what is wrong).
Status ValidateName(const std::string& name);

struct TensorSpec {
  std::string name;
  std::vector<int64_t> shape;  // elements = product of shape (empty shape = scalar, 1 element)
  Op op = Op::kAllreduce;
  DType dtype = DType::kFloat32;
  double ready_ms = 0.0;  // from the start of the backward pass, milliseconds
  int group = -1;         // explicit fusion group from the file, -1 = none
  // Index in the model's parameter registration order (torch's model.parameters()), -1 =
  // not given: then the registration order is taken as the reverse of the ready order.
  int registration = -1;

  int64_t elements() const;
  int64_t bytes() const { return elements() * DTypeSize(dtype); }
};

struct Workload;
// The tensors (indices) in the model's registration order: by TensorSpec::registration when
// the workload gives it, else the reverse of the ready order (the last-ready tensor first).
std::vector<int> RegistrationOrder(const Workload& w);

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
// and non-decreasing, known dtype/op, unique names, at least one tensor, and the limits above
// (the tensor count while parsing, so a huge file stops early).
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
