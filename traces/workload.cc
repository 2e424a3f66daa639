// Workload file I/O and helpers (DESIGN.md, "Workload file"). The built-in models live in
// builtin_workloads.cc.
#include "traces/workload.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "traces/files.h"

namespace autotune {
namespace {

using Json = nlohmann::json;

// Largest tensor we accept from a file: 2^40 elements (4 TiB of float32). Keeps every
// byte count far from int64 overflow.
constexpr int64_t kMaxElements = int64_t{1} << 40;

struct DTypeInfo {
  DType dtype;
  const char* name;
  int size;
};
constexpr DTypeInfo kDTypes[] = {
    {DType::kFloat32, "float32", 4}, {DType::kFloat64, "float64", 8},
    {DType::kFloat16, "float16", 2}, {DType::kBFloat16, "bfloat16", 2},
    {DType::kInt32, "int32", 4},     {DType::kInt64, "int64", 8},
};

const char* const kTopLevelKeys[] = {"name",        "dtype",        "forward_ms",
                                     "backward_ms", "optimizer_ms", "tensors"};
const char* const kTensorKeys[] = {"name", "shape", "op", "dtype", "ready_ms", "group",
                                   "registration"};

// A name or value in an error line: JSON-quoted, so control characters stay escaped (and
// bytes that are not UTF-8, from a database row, replaced).
std::string Quoted(const std::string& s) {
  return Json(s).dump(-1, ' ', false, Json::error_handler_t::replace);
}

// Counts the elements of the top-level lists (depth 2) as a SAX pass reads them and stops
// the pass at the first one past the limit, before any document is in memory. (A parser
// callback would do the same in one pass, but nlohmann's callback parser rescans the parent
// list at the end of each element: 131072 tensors took 5.7 s, 86% of it there.)
class TensorCounter : public nlohmann::json_sax<Json> {
 public:
  bool too_many() const { return too_many_; }
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return Enter(); }
  bool key(string_t&) override { return true; }
  bool end_object() override { return Leave(); }
  bool start_array(std::size_t) override { return Enter(); }
  bool end_array() override { return Leave(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

 private:
  bool Enter() {
    // Depth 2 is an element of a top-level list: the document is depth 0, its lists 1.
    if (++depth_ == 2 && ++elements_ > kMaxWorkloadTensors) too_many_ = true;
    return !too_many_;
  }
  bool Leave() {
    --depth_;
    return true;
  }
  int depth_ = -1;
  size_t elements_ = 0;
  bool too_many_ = false;
};

// Reads a finite, non-negative number of milliseconds from `j[key]`.
Status ReadMs(const Json& j, const char* key, const std::string& where, double* out) {
  auto it = j.find(key);
  if (it == j.end()) {
    return Status::InvalidArgument(where + "missing field " + Quoted(key));
  }
  if (!it->is_number()) {
    return Status::InvalidArgument(where + Quoted(key) + " must be a number (milliseconds)");
  }
  double v = it->get<double>();
  if (!std::isfinite(v) || v < 0.0) {
    return Status::InvalidArgument(where + Quoted(key) + " must be a finite number >= 0, got " +
                                   it->dump());
  }
  *out = v;
  return Status::Ok();
}

Status CheckKnownKeys(const Json& j, const char* const* keys, size_t n, const std::string& where) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    bool known = false;
    for (size_t i = 0; i < n && !known; ++i) known = it.key() == keys[i];
    if (!known) {
      std::string list;
      for (size_t i = 0; i < n; ++i) list += (i ? ", " : "") + std::string(keys[i]);
      return Status::InvalidArgument(where + "unknown field " + Quoted(it.key()) +
                                     " (known: " + list + ")");
    }
  }
  return Status::Ok();
}

// Parses tensors[index]. `where` is "tensors[i]: " until the name is known.
Status ParseTensor(const Json& j, size_t index, const Workload& w, TensorSpec* t) {
  std::string where = "tensors[" + std::to_string(index) + "]: ";
  if (!j.is_object()) return Status::InvalidArgument(where + "must be an object");

  auto name = j.find("name");
  if (name == j.end()) return Status::InvalidArgument(where + "missing field \"name\"");
  if (!name->is_string()) return Status::InvalidArgument(where + "\"name\" must be a string");
  t->name = name->get<std::string>();
  AUTOTUNE_RETURN_IF_ERROR(ValidateName(t->name).WithPrefix(where + "\"name\""));
  where = "tensors[" + std::to_string(index) + "] (" + Quoted(t->name) + "): ";
  AUTOTUNE_RETURN_IF_ERROR(CheckKnownKeys(j, kTensorKeys, std::size(kTensorKeys), where));

  auto shape = j.find("shape");
  if (shape == j.end()) return Status::InvalidArgument(where + "missing field \"shape\"");
  Status bad_shape =
      Status::InvalidArgument(where + "\"shape\" must be a list of positive integers");
  if (!shape->is_array()) return bad_shape;
  if (shape->size() > kMaxShapeDims) {
    return Status::InvalidArgument(where + "\"shape\" has " + std::to_string(shape->size()) +
                                   " dimensions, more than " + std::to_string(kMaxShapeDims));
  }
  t->shape.clear();
  int64_t elements = 1;
  for (const Json& d : *shape) {
    if (!d.is_number_integer()) return bad_shape;
    int64_t v = d.is_number_unsigned() && d.get<uint64_t>() > uint64_t{kMaxElements}
                    ? kMaxElements + 1
                    : d.get<int64_t>();
    if (v <= 0) return bad_shape;
    if (v > kMaxElements || elements > kMaxElements / v) {
      return Status::InvalidArgument(where + "\"shape\" " + shape->dump() +
                                     " has more than 2^40 elements");
    }
    elements *= v;
    t->shape.push_back(v);
  }

  t->op = Op::kAllreduce;
  if (auto op = j.find("op"); op != j.end()) {
    if (!op->is_string()) {
      return Status::InvalidArgument(where + "\"op\" must be \"allreduce\" or \"allgather\"");
    }
    AUTOTUNE_RETURN_IF_ERROR(ParseOp(op->get<std::string>(), &t->op).WithPrefix(where + "\"op\""));
  }

  t->dtype = w.dtype;
  if (auto dt = j.find("dtype"); dt != j.end()) {
    if (!dt->is_string()) return Status::InvalidArgument(where + "\"dtype\" must be a string");
    AUTOTUNE_RETURN_IF_ERROR(
        ParseDType(dt->get<std::string>(), &t->dtype).WithPrefix(where + "\"dtype\""));
  }

  AUTOTUNE_RETURN_IF_ERROR(ReadMs(j, "ready_ms", where, &t->ready_ms));
  if (t->ready_ms > w.backward_ms) {
    return Status::InvalidArgument(where + "\"ready_ms\" " + j["ready_ms"].dump() +
                                   " is after the end of the backward pass (backward_ms " +
                                   Json(w.backward_ms).dump() + ")");
  }

  t->group = -1;
  if (auto g = j.find("group"); g != j.end()) {
    if (!g->is_number_integer() || g->get<int64_t>() < 0 ||
        g->get<int64_t>() > std::numeric_limits<int>::max()) {
      return Status::InvalidArgument(where + "\"group\" must be a non-negative integer");
    }
    t->group = static_cast<int>(g->get<int64_t>());
  }
  t->registration = -1;
  if (auto r = j.find("registration"); r != j.end()) {
    if (!r->is_number_integer() || r->get<int64_t>() < 0 ||
        r->get<int64_t>() > std::numeric_limits<int>::max()) {
      return Status::InvalidArgument(where + "\"registration\" must be a non-negative integer");
    }
    t->registration = static_cast<int>(r->get<int64_t>());
  }
  return Status::Ok();
}

// Registration indices are all absent, or a permutation of 0..n-1.
Status CheckRegistration(const Workload& w) {
  const size_t n = w.tensors.size();
  std::vector<bool> seen(n, false);
  size_t given = 0;
  for (size_t i = 0; i < n; ++i) {
    const int r = w.tensors[i].registration;
    if (r < 0) continue;
    ++given;
    const std::string where = "tensors[" + std::to_string(i) + "] (" +
                              Quoted(w.tensors[i].name) + "): \"registration\" " +
                              std::to_string(r);
    if (static_cast<size_t>(r) >= n) {
      return Status::InvalidArgument(where + " is not below the tensor count " +
                                     std::to_string(n));
    }
    if (seen[r]) return Status::InvalidArgument(where + " duplicates an earlier tensor's");
    seen[r] = true;
  }
  if (given != 0 && given != n) {
    return Status::InvalidArgument("\"registration\" is given for " + std::to_string(given) +
                                   " of " + std::to_string(n) + " tensors; give it for all or none");
  }
  return Status::Ok();
}

Status ParseWorkloadObject(const Json& j, Workload* out) {
  if (!j.is_object()) return Status::InvalidArgument("the workload must be a JSON object");
  AUTOTUNE_RETURN_IF_ERROR(CheckKnownKeys(j, kTopLevelKeys, std::size(kTopLevelKeys), ""));

  Workload w;
  auto name = j.find("name");
  if (name == j.end()) return Status::InvalidArgument("missing field \"name\"");
  if (!name->is_string()) return Status::InvalidArgument("\"name\" must be a string");
  w.name = name->get<std::string>();
  AUTOTUNE_RETURN_IF_ERROR(ValidateName(w.name).WithPrefix("\"name\""));

  if (auto dt = j.find("dtype"); dt != j.end()) {
    if (!dt->is_string()) return Status::InvalidArgument("\"dtype\" must be a string");
    AUTOTUNE_RETURN_IF_ERROR(ParseDType(dt->get<std::string>(), &w.dtype).WithPrefix("\"dtype\""));
  }
  AUTOTUNE_RETURN_IF_ERROR(ReadMs(j, "forward_ms", "", &w.forward_ms));
  AUTOTUNE_RETURN_IF_ERROR(ReadMs(j, "backward_ms", "", &w.backward_ms));
  AUTOTUNE_RETURN_IF_ERROR(ReadMs(j, "optimizer_ms", "", &w.optimizer_ms));

  auto tensors = j.find("tensors");
  if (tensors == j.end()) return Status::InvalidArgument("missing field \"tensors\"");
  if (!tensors->is_array() || tensors->empty()) {
    return Status::InvalidArgument("\"tensors\" must be a non-empty list of tensors");
  }
  std::set<std::string> names;
  for (size_t i = 0; i < tensors->size(); ++i) {
    TensorSpec t;
    AUTOTUNE_RETURN_IF_ERROR(ParseTensor((*tensors)[i], i, w, &t));
    std::string where = "tensors[" + std::to_string(i) + "] (" + Quoted(t.name) + "): ";
    if (!names.insert(t.name).second) {
      return Status::InvalidArgument(where + "\"name\" duplicates an earlier tensor");
    }
    if (!w.tensors.empty() && t.ready_ms < w.tensors.back().ready_ms) {
      return Status::InvalidArgument(
          where + "\"ready_ms\" " + Json(t.ready_ms).dump() + " is before the previous tensor's " +
          Json(w.tensors.back().ready_ms).dump() + " (tensors must be listed in ready order)");
    }
    w.tensors.push_back(std::move(t));
  }
  AUTOTUNE_RETURN_IF_ERROR(CheckRegistration(w));
  *out = std::move(w);
  return Status::Ok();
}

}  // namespace

std::vector<int> RegistrationOrder(const Workload& w) {
  const int n = static_cast<int>(w.tensors.size());
  std::vector<int> order(n);
  for (int i = 0; i < n; ++i) order[i] = n - 1 - i;
  if (n > 0 && w.tensors[0].registration >= 0) {
    for (int i = 0; i < n; ++i) order[w.tensors[i].registration] = i;
  }
  return order;
}

int DTypeSize(DType d) {
  for (const DTypeInfo& info : kDTypes) {
    if (info.dtype == d) return info.size;
  }
  return 0;
}

const char* DTypeName(DType d) {
  for (const DTypeInfo& info : kDTypes) {
    if (info.dtype == d) return info.name;
  }
  return "unknown";
}

Status ParseDType(const std::string& s, DType* d) {
  for (const DTypeInfo& info : kDTypes) {
    if (s == info.name) {
      *d = info.dtype;
      return Status::Ok();
    }
  }
  return Status::InvalidArgument("unknown dtype " + Quoted(s) +
                                 " (expected float32, float64, float16, bfloat16, int32 or int64)");
}

const char* OpName(Op op) { return op == Op::kAllgather ? "allgather" : "allreduce"; }

Status ParseOp(const std::string& s, Op* op) {
  if (s == "allreduce") {
    *op = Op::kAllreduce;
  } else if (s == "allgather") {
    *op = Op::kAllgather;
  } else {
    return Status::InvalidArgument("unknown op " + Quoted(s) +
                                   " (expected allreduce or allgather)");
  }
  return Status::Ok();
}

int64_t TensorSpec::elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

int64_t Workload::total_elements() const {
  int64_t n = 0;
  for (const TensorSpec& t : tensors) n += t.elements();
  return n;
}

int64_t Workload::total_bytes() const {
  int64_t n = 0;
  for (const TensorSpec& t : tensors) n += t.bytes();
  return n;
}

Status ValidateName(const std::string& name) {
  if (name.empty()) return Status::InvalidArgument("must be a non-empty string");
  if (name.size() > kMaxTensorNameBytes) {
    return Status::InvalidArgument("is " + std::to_string(name.size()) + " bytes, more than " +
                                   std::to_string(kMaxTensorNameBytes));
  }
  for (unsigned char c : name) {
    if (c < 0x20 || c == 0x7f) {
      return Status::InvalidArgument("holds a control character (code " + std::to_string(c) + ")");
    }
  }
  return Status::Ok();
}

Status ParseWorkloadJson(const std::string& text, const std::string& source, Workload* out) {
  const std::string prefix = source.empty() ? "workload" : source;
  if (text.size() > kMaxWorkloadFileBytes) {
    return Status::InvalidArgument(prefix + ": " + std::to_string(text.size()) +
                                   " bytes, more than the " +
                                   std::to_string(kMaxWorkloadFileBytes >> 20) +
                                   " MiB a workload file may have");
  }
  // The elements of the top-level lists are counted first, by a pass that builds nothing: a
  // file of more tensors than allowed stops there, before its whole document is in memory.
  TensorCounter counter;
  Json::sax_parse(text, &counter);
  if (counter.too_many()) {
    return Status::InvalidArgument(prefix + ": \"tensors\": more than " +
                                   std::to_string(kMaxWorkloadTensors) +
                                   " tensors (the most a workload may have)");
  }
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::exception& e) {
    // e.what() is "[json.exception.parse_error.101] parse error at line 1, column 5: ..." or
    // "[json.exception.out_of_range.406] number overflow parsing '1e400'".
    std::string what = e.what();
    if (auto pos = what.find("] ");
        what.rfind("[json.exception", 0) == 0 && pos != std::string::npos) {
      what = what.substr(pos + 2);
    }
    return Status::InvalidArgument(prefix + ": invalid JSON: " + what);
  }
  return ParseWorkloadObject(j, out).WithPrefix(prefix);
}

Status LoadWorkloadFile(const std::string& path, Workload* out) {
  std::string text;
  AUTOTUNE_RETURN_IF_ERROR(ReadInputFile(path, "workload file", static_cast<int64_t>(kMaxWorkloadFileBytes), &text));
  return ParseWorkloadJson(text, path, out);
}

nlohmann::json WorkloadToJson(const Workload& w) {
  Json tensors = Json::array();
  for (const TensorSpec& t : w.tensors) {
    // ordered_json would keep key order, but the house type is json; keys sort by name.
    Json jt = {
        {"name", t.name}, {"shape", t.shape}, {"op", OpName(t.op)}, {"ready_ms", t.ready_ms}};
    if (t.dtype != w.dtype) jt["dtype"] = DTypeName(t.dtype);
    if (t.group >= 0) jt["group"] = t.group;
    if (t.registration >= 0) jt["registration"] = t.registration;
    tensors.push_back(std::move(jt));
  }
  return Json{{"name", w.name},
              {"dtype", DTypeName(w.dtype)},
              {"forward_ms", w.forward_ms},
              {"backward_ms", w.backward_ms},
              {"optimizer_ms", w.optimizer_ms},
              {"tensors", std::move(tensors)}};
}

Status ResolveWorkload(const std::string& name_or_path, Workload* out) {
  for (const std::string& name : BuiltinWorkloadNames()) {
    if (name == name_or_path) return BuiltinWorkload(name, out);
  }
  std::error_code ec;
  const bool looks_like_file =
      name_or_path.ends_with(".json") || std::filesystem::exists(name_or_path, ec);
  if (looks_like_file) return LoadWorkloadFile(name_or_path, out);
  std::string names;
  for (const std::string& name : BuiltinWorkloadNames()) {
    names += (names.empty() ? "" : ", ") + name;
  }
  return Status::NotFound("unknown workload " + Quoted(name_or_path) + " (built-in: " + names +
                          "; or a path to a .json workload file)");
}

Status ScaleWorkload(double scale, Workload* w) {
  if (!(scale > 0.0 && scale <= 1.0)) {
    return Status::InvalidArgument("scale must be in (0, 1], got " + Json(scale).dump());
  }
  if (scale == 1.0) return Status::Ok();
  for (TensorSpec& t : w->tensors) {
    int64_t scaled = std::llround(static_cast<double>(t.elements()) * scale);
    t.shape = {std::max<int64_t>(1, scaled)};
    // Multiplying by the same positive factor keeps ready_ms non-decreasing and <= backward_ms.
    t.ready_ms *= scale;
  }
  w->forward_ms *= scale;
  w->backward_ms *= scale;
  w->optimizer_ms *= scale;
  return Status::Ok();
}

}  // namespace autotune
