#include "traces/workload.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace autotune {
namespace {

struct BuiltinExpectation {
  const char* name;
  size_t tensors;
  int64_t parameters;
  const char* first_tensor;  // first gradient ready: the output layer
  const char* last_tensor;   // last gradient ready: the input layer
};

class WorkloadBuiltinTest : public ::testing::TestWithParam<BuiltinExpectation> {};

TEST_P(WorkloadBuiltinTest, ExactCountsOrderAndTimes) {
  const BuiltinExpectation& e = GetParam();
  Workload w;
  ASSERT_TRUE(BuiltinWorkload(e.name, &w).ok());
  EXPECT_EQ(w.name, e.name);
  EXPECT_EQ(w.tensors.size(), e.tensors);
  EXPECT_EQ(w.total_elements(), e.parameters);
  EXPECT_EQ(w.total_bytes(), e.parameters * 4);
  ASSERT_FALSE(w.tensors.empty());
  EXPECT_EQ(w.tensors.front().name, e.first_tensor);
  EXPECT_EQ(w.tensors.back().name, e.last_tensor);
  EXPECT_GT(w.forward_ms, 0.0);
  EXPECT_GT(w.backward_ms, w.forward_ms);
  EXPECT_GT(w.optimizer_ms, 0.0);
  EXPECT_GT(w.tensors.front().ready_ms, 0.0);
  for (size_t i = 1; i < w.tensors.size(); ++i) {
    EXPECT_LE(w.tensors[i - 1].ready_ms, w.tensors[i].ready_ms) << w.tensors[i].name;
  }
  EXPECT_EQ(w.tensors.back().ready_ms, w.backward_ms);
  // A built-in is a valid workload file.
  Workload parsed;
  Status s = ParseWorkloadJson(WorkloadToJson(w).dump(), "builtin", &parsed);
  EXPECT_TRUE(s.ok()) << s.message();
}

INSTANTIATE_TEST_SUITE_P(
    WorkloadBuiltins, WorkloadBuiltinTest,
    ::testing::Values(BuiltinExpectation{"resnet50", 161, 25'557'032, "fc.bias", "conv1.weight"},
                      BuiltinExpectation{"vgg16", 32, 138'357'544, "classifier.6.bias",
                                         "features.0.weight"},
                      BuiltinExpectation{"bert-large", 391, 335'141'888, "pooler.dense.bias",
                                         "embeddings.word_embeddings.weight"},
                      BuiltinExpectation{"gpt2", 148, 124'439'808, "ln_f.bias", "wte.weight"}),
    [](const auto& info) {
      std::string n = info.param.name;
      for (char& c : n) c = (c == '-') ? '_' : c;
      return n;
    });

const TensorSpec* Find(const Workload& w, const std::string& name) {
  for (const TensorSpec& t : w.tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

TEST(WorkloadBuiltin, RealShapes) {
  Workload r;
  ASSERT_TRUE(BuiltinWorkload("resnet50", &r).ok());
  ASSERT_NE(Find(r, "layer3.0.downsample.0.weight"), nullptr);
  EXPECT_EQ(Find(r, "layer3.0.downsample.0.weight")->shape,
            (std::vector<int64_t>{1024, 512, 1, 1}));
  EXPECT_EQ(Find(r, "layer4.2.conv2.weight")->shape, (std::vector<int64_t>{512, 512, 3, 3}));
  EXPECT_EQ(Find(r, "layer1.1.downsample.0.weight"), nullptr);
  Workload g;
  ASSERT_TRUE(BuiltinWorkload("gpt2", &g).ok());
  EXPECT_EQ(Find(g, "h.11.attn.c_attn.weight")->shape, (std::vector<int64_t>{768, 2304}));
  EXPECT_EQ(Find(g, "h.0.mlp.c_proj.weight")->shape, (std::vector<int64_t>{3072, 768}));
  Workload v;
  ASSERT_TRUE(BuiltinWorkload("vgg16", &v).ok());
  EXPECT_EQ(Find(v, "features.28.weight")->shape, (std::vector<int64_t>{512, 512, 3, 3}));
  EXPECT_EQ(Find(v, "classifier.0.weight")->shape, (std::vector<int64_t>{4096, 25088}));
}

TEST(WorkloadBuiltin, BackwardTimeFollowsWork) {
  // VGG-16's classifier is 90% of the parameters but a tiny share of the work, so its
  // gradients are ready early; the conv layers take most of the backward pass.
  Workload v;
  ASSERT_TRUE(BuiltinWorkload("vgg16", &v).ok());
  EXPECT_LT(Find(v, "classifier.0.weight")->ready_ms, 0.02 * v.backward_ms);
  EXPECT_GT(Find(v, "features.2.weight")->ready_ms, 0.8 * v.backward_ms);
}

TEST(WorkloadBuiltin, UnknownNameListsKnownOnes) {
  Workload w;
  Status s = BuiltinWorkload("resnet51", &w);
  EXPECT_EQ(s.code(), Status::Code::kNotFound);
  EXPECT_NE(s.message().find("resnet51"), std::string::npos);
  EXPECT_NE(s.message().find("bert-large"), std::string::npos);
}

TEST(WorkloadTypes, NamesParseBack) {
  for (DType d : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                  DType::kInt32, DType::kInt64}) {
    DType back;
    ASSERT_TRUE(ParseDType(DTypeName(d), &back).ok());
    EXPECT_EQ(back, d);
  }
  EXPECT_EQ(DTypeSize(DType::kFloat16), 2);
  EXPECT_EQ(DTypeSize(DType::kInt64), 8);
  Op op;
  ASSERT_TRUE(ParseOp("allgather", &op).ok());
  EXPECT_EQ(op, Op::kAllgather);
  EXPECT_FALSE(ParseOp("reduce", &op).ok());
  DType d;
  EXPECT_FALSE(ParseDType("float8", &d).ok());
  TensorSpec scalar;
  EXPECT_EQ(scalar.elements(), 1);
}

const char kGood[] = R"({"name": "tiny", "dtype": "float32",
  "forward_ms": 3.0, "backward_ms": 6.5, "optimizer_ms": 0.25,
  "tensors": [
    {"name": "fc.weight", "shape": [10, 20], "op": "allreduce", "ready_ms": 1.2},
    {"name": "fc.bias", "shape": [10], "ready_ms": 1.2, "group": 0},
    {"name": "emb", "shape": [7, 3], "op": "allgather", "dtype": "float16", "ready_ms": 6.5},
    {"name": "step", "shape": [], "dtype": "int64", "ready_ms": 6.5}
  ]})";

TEST(WorkloadJson, ParsesEveryField) {
  Workload w;
  Status s = ParseWorkloadJson(kGood, "tiny.json", &w);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(w.name, "tiny");
  EXPECT_DOUBLE_EQ(w.backward_ms, 6.5);
  EXPECT_DOUBLE_EQ(w.optimizer_ms, 0.25);
  ASSERT_EQ(w.tensors.size(), 4u);
  EXPECT_EQ(w.tensors[0].op, Op::kAllreduce);
  EXPECT_EQ(w.tensors[0].group, -1);
  EXPECT_EQ(w.tensors[1].group, 0);
  EXPECT_EQ(w.tensors[1].op, Op::kAllreduce);  // default
  EXPECT_EQ(w.tensors[2].op, Op::kAllgather);
  EXPECT_EQ(w.tensors[2].dtype, DType::kFloat16);
  EXPECT_EQ(w.tensors[2].bytes(), 42);
  EXPECT_EQ(w.tensors[3].elements(), 1);
  EXPECT_EQ(w.total_elements(), 200 + 10 + 21 + 1);
  EXPECT_EQ(w.total_bytes(), 800 + 40 + 42 + 8);
}

void ExpectSameWorkload(const Workload& a, const Workload& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.dtype, b.dtype);
  EXPECT_EQ(a.forward_ms, b.forward_ms);
  EXPECT_EQ(a.backward_ms, b.backward_ms);
  EXPECT_EQ(a.optimizer_ms, b.optimizer_ms);
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    const TensorSpec& x = a.tensors[i];
    const TensorSpec& y = b.tensors[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.shape, y.shape) << x.name;
    EXPECT_EQ(x.op, y.op) << x.name;
    EXPECT_EQ(x.dtype, y.dtype) << x.name;
    EXPECT_EQ(x.ready_ms, y.ready_ms) << x.name;  // exact, not approximate
    EXPECT_EQ(x.group, y.group) << x.name;
  }
}

TEST(WorkloadJson, RoundTripIsExact) {
  Workload w;
  ASSERT_TRUE(ParseWorkloadJson(kGood, "tiny.json", &w).ok());
  w.dtype = DType::kFloat64;          // tensors keep their own dtypes, written explicitly
  w.tensors[0].ready_ms = 0.1 + 0.2;  // not representable in short decimal
  Workload back;
  Status s = ParseWorkloadJson(WorkloadToJson(w).dump(), "again.json", &back);
  ASSERT_TRUE(s.ok()) << s.message();
  ExpectSameWorkload(w, back);

  for (const std::string& name : BuiltinWorkloadNames()) {
    Workload b;
    ASSERT_TRUE(BuiltinWorkload(name, &b).ok());
    Workload parsed;
    ASSERT_TRUE(ParseWorkloadJson(WorkloadToJson(b).dump(2), name, &parsed).ok());
    ExpectSameWorkload(b, parsed);
  }
}

struct BadCase {
  const char* label;
  std::string text;
  std::vector<std::string> expected;  // substrings of the one-line message
};

// How gtest shows a case: its label.
void PrintTo(const BadCase& c, std::ostream* os) { *os << c.label; }

std::string WithTensors(const std::string& tensors, const std::string& extra = "") {
  return R"({"name": "m", "forward_ms": 1, "backward_ms": 10, "optimizer_ms": 1)" + extra +
         R"(, "tensors": [)" + tensors + "]}";
}

const std::string kOkTensor = R"({"name": "a", "shape": [4], "ready_ms": 1})";

// Malformed files whose fault is in the top-level object.
std::vector<BadCase> TopLevelCases() {
  return {
      {"syntax", R"({"name": "m", "tensors": [})", {"model.json: invalid JSON", "line 1"}},
      {"a number out of double's range",
       WithTensors(R"({"name": "a", "shape": [4], "ready_ms": 1e400})"),
       {"model.json: invalid JSON", "number overflow", "1e400"}},
      {"not an object", "[1, 2]", {"model.json: ", "object"}},
      {"missing backward_ms",
       R"({"name": "m", "forward_ms": 1, "optimizer_ms": 1, "tensors": [)" + kOkTensor + "]}",
       {"missing field \"backward_ms\""}},
      {"unknown default dtype",
       WithTensors(kOkTensor, R"(, "dtype": "complex64")"),
       {"model.json: \"dtype\": unknown dtype \"complex64\""}},
      {"empty tensor list", WithTensors(""), {"model.json: \"tensors\" must be a non-empty"}},
      {"unknown top-level field",
       WithTensors(kOkTensor, R"(, "backwards_ms": 3)"),
       {"model.json: unknown field \"backwards_ms\""}},
      // Found by fuzzing: a key holding a newline made the error two lines.
      {"unknown field whose key holds a newline",
       WithTensors(kOkTensor, R"(, "a\nb": 3)"),
       {"model.json: unknown field \"a\\nb\""}},
      {"negative backward_ms",
       R"({"name": "m", "forward_ms": 1, "backward_ms": -10, "optimizer_ms": 1, "tensors": [)" +
           kOkTensor + "]}",
       {"\"backward_ms\""}},
  };
}

// Malformed files whose fault is in one tensor: the message names its index and name.
std::vector<BadCase> TensorCases() {
  return {
      {"missing tensor shape",
       WithTensors(kOkTensor + R"(, {"name": "b", "ready_ms": 2})"),
       {"tensors[1] (\"b\"): missing field \"shape\""}},
      {"missing tensor name",
       WithTensors(R"({"shape": [1], "ready_ms": 2})"),
       {"tensors[0]: missing field \"name\""}},
      {"negative shape",
       WithTensors(kOkTensor + R"(, {"name": "fc.bias", "shape": [3, -1], "ready_ms": 2})"),
       {"model.json: tensors[1] (\"fc.bias\"): \"shape\" must be a list of positive integers"}},
      {"zero shape",
       WithTensors(R"({"name": "z", "shape": [0], "ready_ms": 2})"),
       {"tensors[0] (\"z\"): \"shape\""}},
      {"fractional shape",
       WithTensors(R"({"name": "z", "shape": [2.5], "ready_ms": 2})"),
       {"\"shape\""}},
      {"shape not a list",
       WithTensors(R"({"name": "z", "shape": 4, "ready_ms": 2})"),
       {"\"shape\""}},
      {"huge shape",
       WithTensors(R"({"name": "z", "shape": [1048576, 1048576, 2], "ready_ms": 2})"),
       {"\"shape\"", "2^40"}},
      {"unknown dtype",
       WithTensors(R"({"name": "h", "shape": [4], "dtype": "float8", "ready_ms": 2})"),
       {"tensors[0] (\"h\"): \"dtype\": unknown dtype \"float8\""}},
      {"unknown op",
       WithTensors(R"({"name": "o", "shape": [4], "op": "reduce", "ready_ms": 2})"),
       {"tensors[0] (\"o\"): \"op\": unknown op \"reduce\""}},
      {"decreasing ready_ms",
       WithTensors(kOkTensor + R"(, {"name": "late", "shape": [4], "ready_ms": 0.5})"),
       {"tensors[1] (\"late\"): \"ready_ms\"", "ready order"}},
      {"ready_ms after backward",
       WithTensors(R"({"name": "a", "shape": [4], "ready_ms": 11})"),
       {"tensors[0] (\"a\"): \"ready_ms\"", "backward_ms"}},
      {"negative ready_ms",
       WithTensors(R"({"name": "a", "shape": [4], "ready_ms": -1})"),
       {"\"ready_ms\""}},
      {"ready_ms not a number",
       WithTensors(R"({"name": "a", "shape": [4], "ready_ms": "1"})"),
       {"\"ready_ms\" must be a number"}},
      {"duplicate names",
       WithTensors(kOkTensor + ", " + kOkTensor),
       {"tensors[1] (\"a\"): \"name\" duplicates"}},
      {"negative group",
       WithTensors(R"({"name": "g", "shape": [4], "ready_ms": 1, "group": -2})"),
       {"tensors[0] (\"g\"): \"group\""}},
      {"unknown tensor field",
       WithTensors(R"({"name": "t", "shape": [4], "ready": 1})"),
       {"tensors[0] (\"t\"): unknown field \"ready\""}},
  };
}

class WorkloadJsonMalformedTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(WorkloadJsonMalformedTest, NamesTheField) {
  const BadCase& c = GetParam();
  Workload w;
  w.name = "untouched";
  Status s = ParseWorkloadJson(c.text, "model.json", &w);
  EXPECT_FALSE(s.ok()) << c.label;
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << c.label;
  EXPECT_EQ(s.message().rfind("model.json: ", 0), 0u) << c.label << ": " << s.message();
  EXPECT_EQ(s.message().find('\n'), std::string::npos) << c.label << ": " << s.message();
  for (const std::string& want : c.expected) {
    EXPECT_NE(s.message().find(want), std::string::npos)
        << c.label << ": \"" << s.message() << "\" lacks \"" << want << "\"";
  }
  EXPECT_EQ(w.name, "untouched") << c.label << ": output changed on error";
}

// The case's label as a test name: letters, digits and underscores.
std::string CaseName(const ::testing::TestParamInfo<BadCase>& info) {
  std::string n = info.param.label;
  for (char& ch : n) ch = std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(TopLevel, WorkloadJsonMalformedTest, ::testing::ValuesIn(TopLevelCases()),
                         CaseName);
INSTANTIATE_TEST_SUITE_P(Tensor, WorkloadJsonMalformedTest, ::testing::ValuesIn(TensorCases()),
                         CaseName);

TEST(WorkloadScale, ShrinksTensorsAndTimes) {
  Workload w;
  ASSERT_TRUE(BuiltinWorkload("resnet50", &w).ok());
  const Workload full = w;
  ASSERT_TRUE(ScaleWorkload(0.05, &w).ok());
  ASSERT_EQ(w.tensors.size(), full.tensors.size());
  EXPECT_DOUBLE_EQ(w.backward_ms, full.backward_ms * 0.05);
  EXPECT_DOUBLE_EQ(w.forward_ms, full.forward_ms * 0.05);
  EXPECT_DOUBLE_EQ(w.optimizer_ms, full.optimizer_ms * 0.05);
  for (size_t i = 0; i < w.tensors.size(); ++i) {
    const TensorSpec& t = w.tensors[i];
    EXPECT_EQ(t.name, full.tensors[i].name);
    ASSERT_EQ(t.shape.size(), 1u);
    int64_t want = std::max<int64_t>(1, std::llround(full.tensors[i].elements() * 0.05));
    EXPECT_EQ(t.elements(), want) << t.name;
    if (i > 0) {
      EXPECT_LE(w.tensors[i - 1].ready_ms, t.ready_ms);
    }
    EXPECT_LE(t.ready_ms, w.backward_ms);
  }
  EXPECT_EQ(w.tensors.back().ready_ms, w.backward_ms);
  EXPECT_NEAR(static_cast<double>(w.total_elements()), 25'557'032 * 0.05, 161.0);
  // Tiny tensors keep at least one element.
  Workload tiny = full;
  ASSERT_TRUE(ScaleWorkload(1e-9, &tiny).ok());
  for (const TensorSpec& t : tiny.tensors) EXPECT_EQ(t.elements(), 1) << t.name;
}

TEST(WorkloadScale, RejectsOutOfRange) {
  Workload w;
  ASSERT_TRUE(BuiltinWorkload("gpt2", &w).ok());
  EXPECT_FALSE(ScaleWorkload(0.0, &w).ok());
  EXPECT_FALSE(ScaleWorkload(1.5, &w).ok());
  EXPECT_FALSE(ScaleWorkload(-0.1, &w).ok());
  EXPECT_NE(ScaleWorkload(2.0, &w).message().find("scale"), std::string::npos);
  EXPECT_EQ(w.total_elements(), 124'439'808);  // unchanged
  ASSERT_TRUE(ScaleWorkload(1.0, &w).ok());
  EXPECT_EQ(w.total_elements(), 124'439'808);
}

class WorkloadFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("workload_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  std::filesystem::path dir_;
};

TEST_F(WorkloadFileTest, ResolveBuiltinFileAndUnknown) {
  Workload w;
  ASSERT_TRUE(ResolveWorkload("vgg16", &w).ok());
  EXPECT_EQ(w.tensors.size(), 32u);

  const std::string path = Write("tiny.json", kGood);
  Status s = ResolveWorkload(path, &w);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(w.name, "tiny");

  // An existing file without the .json suffix is still a file.
  const std::string plain = Write("tiny_workload", kGood);
  ASSERT_TRUE(ResolveWorkload(plain, &w).ok());

  s = ResolveWorkload("resnet-50", &w);
  EXPECT_EQ(s.code(), Status::Code::kNotFound);
  EXPECT_NE(s.message().find("\"resnet-50\""), std::string::npos) << s.message();
  for (const std::string& name : BuiltinWorkloadNames()) {
    EXPECT_NE(s.message().find(name), std::string::npos) << s.message();
  }

  s = ResolveWorkload((dir_ / "missing.json").string(), &w);
  EXPECT_EQ(s.code(), Status::Code::kIoError);
  EXPECT_NE(s.message().find("missing.json"), std::string::npos) << s.message();
}

TEST_F(WorkloadFileTest, ErrorsNameTheFile) {
  Workload w;
  const std::string path = Write("broken.json", WithTensors(R"({"name": "x", "shape": [-4],
                                                                "ready_ms": 1})"));
  Status s = LoadWorkloadFile(path, &w);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind(path + ": tensors[0] (\"x\"): \"shape\"", 0), 0u) << s.message();

  s = LoadWorkloadFile(dir_.string(), &w);
  EXPECT_EQ(s.code(), Status::Code::kIoError);
  EXPECT_NE(s.message().find(dir_.string()), std::string::npos) << s.message();
}

}  // namespace
}  // namespace autotune
