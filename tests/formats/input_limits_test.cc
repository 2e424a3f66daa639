// The limits of input files (README, "Limits of input files"): a hostile or broken workload
// JSON, config YAML or Horovod timeline either works or is refused with one line naming the
// file and the field, in bounded memory.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "formats/config_file.h"
#include "formats/horovod_timeline.h"
#include "traces/workload.h"

namespace autotune {
namespace {

// One tensor as the workload JSON writes it, ready at 0.
std::string Tensor(const std::string& name) {
  return R"({"name":")" + name + R"(","shape":[1],"ready_ms":0})";
}

std::string WorkloadOf(const std::string& tensors) {
  return R"({"name":"m","forward_ms":1,"backward_ms":1,"optimizer_ms":1,"tensors":[)" + tensors +
         "]}";
}

// n tensors named t0, t1, ...
std::string ManyTensors(size_t n) {
  std::string tensors;
  tensors.reserve(n * 48);
  for (size_t i = 0; i < n; ++i) tensors += (i ? "," : "") + Tensor("t" + std::to_string(i));
  return WorkloadOf(tensors);
}

void ExpectOneLine(const Status& s, const std::string& expected_start) {
  ASSERT_FALSE(s.ok()) << expected_start;
  EXPECT_EQ(s.message().rfind(expected_start, 0), 0u) << s.message();
  EXPECT_EQ(s.message().find('\n'), std::string::npos) << s.message();
  EXPECT_LT(s.message().size(), 400u) << s.message();
}

TEST(InputLimits, AMillionTensorsAreRefusedWhileParsing) {
  Workload w;
  ExpectOneLine(ParseWorkloadJson(ManyTensors(1000000), "big.json", &w),
                "big.json: \"tensors\": more than 131072 tensors");
  EXPECT_TRUE(w.tensors.empty());
}

TEST(InputLimits, TheLargestWorkloadAllowedWorks) {
  Workload w;
  const Status s = ParseWorkloadJson(ManyTensors(kMaxWorkloadTensors), "max.json", &w);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(w.tensors.size(), size_t{131072});
  EXPECT_EQ(w.tensors.back().name, "t131071");
}

TEST(InputLimits, ALongNameIsRefusedWithoutBeingPrinted) {
  Workload w;
  const std::string long_name(10 * 1024, 'x');
  const Status s =
      ParseWorkloadJson(WorkloadOf(Tensor("a") + "," + Tensor(long_name)), "long.json", &w);
  ExpectOneLine(s, "long.json: tensors[1]: \"name\": is 10240 bytes, more than 4096");
  EXPECT_EQ(s.message().find("xxxx"), std::string::npos);
  const std::string at_limit(kMaxTensorNameBytes, 'y');
  ASSERT_TRUE(ParseWorkloadJson(WorkloadOf(Tensor(at_limit)), "ok.json", &w).ok());
  EXPECT_EQ(w.tensors[0].name, at_limit);
}

TEST(InputLimits, UnicodeNamesWorkAndControlCharactersAreRefused) {
  Workload w;
  const std::string name = "conv1/\xE6\x9D\x83\xE9\x87\x8D/\xCE\xB3";  // conv1/权重/γ
  ASSERT_TRUE(ParseWorkloadJson(WorkloadOf(Tensor(name)), "u.json", &w).ok());
  EXPECT_EQ(w.tensors[0].name, name);
  Workload back;
  ASSERT_TRUE(ParseWorkloadJson(WorkloadToJson(w).dump(), "back.json", &back).ok());
  EXPECT_EQ(back.tensors[0].name, name);
  ExpectOneLine(ParseWorkloadJson(WorkloadOf(Tensor("a\\nb")), "nl.json", &w),
                "nl.json: tensors[0]: \"name\": holds a control character (code 10)");
  // Bytes that are not UTF-8 are not JSON.
  ExpectOneLine(ParseWorkloadJson(WorkloadOf(Tensor("a\xFF")), "bad.json", &w),
                "bad.json: invalid JSON");
}

TEST(InputLimits, TimesOutOfRangeNameTheFileAndField) {
  Workload w;
  const std::string tensor = R"({"name":"a","shape":[1],"ready_ms":X})";
  auto with_ready = [&](const std::string& x) {
    std::string t = tensor;
    return WorkloadOf(t.replace(t.find('X'), 1, x));
  };
  ExpectOneLine(ParseWorkloadJson(with_ready("1e400"), "t.json", &w), "t.json: invalid JSON");
  ExpectOneLine(ParseWorkloadJson(with_ready("NaN"), "t.json", &w), "t.json: invalid JSON");
  ExpectOneLine(ParseWorkloadJson(with_ready("Infinity"), "t.json", &w), "t.json: invalid JSON");
  ExpectOneLine(ParseWorkloadJson(with_ready("1e300"), "t.json", &w),
                "t.json: tensors[0] (\"a\"): \"ready_ms\" 1e+300 is after the end");
}

TEST(InputLimits, AListWhereAScalarBelongs) {
  Workload w;
  ExpectOneLine(
      ParseWorkloadJson(WorkloadOf(R"({"name":["a"],"shape":[1],"ready_ms":0})"), "l.json", &w),
      "l.json: tensors[0]: \"name\" must be a string");
  ExpectOneLine(
      ParseWorkloadJson(WorkloadOf(R"({"name":"a","shape":[1],"ready_ms":[0]})"), "l.json", &w),
      "l.json: tensors[0] (\"a\"): \"ready_ms\" must be a number");
  ConfigFile c;
  ExpectOneLine(ParseConfigYaml("params:\n  cycle_time_ms: [1, 2]\n", "l.yaml", &c),
                "l.yaml: params.cycle_time_ms: expected a single value");
  ExpectOneLine(ParseConfigYaml("autotune:\n  log_file: [a]\n", "l.yaml", &c),
                "l.yaml: autotune.log_file: ");
  ExpectOneLine(ParseConfigYaml("autotune:\n  enabled: {a: 1}\n", "l.yaml", &c),
                "l.yaml: autotune.enabled: ");
}

TEST(InputLimits, ABooleanGivenAsTwo) {
  ConfigFile c;
  ExpectOneLine(ParseConfigYaml("params:\n  hierarchical_allreduce: 2\n", "b.yaml", &c),
                "b.yaml: params.hierarchical_allreduce: \"2\" has the wrong type");
  ExpectOneLine(ParseConfigYaml("autotune:\n  enabled: 2\n", "b.yaml", &c),
                "b.yaml: autotune.enabled: \"2\" has the wrong type");
}

TEST(InputLimits, NonFiniteNumbersInTheConfig) {
  ConfigFile c;
  for (const char* value : {".nan", ".inf", "-.inf", "1e400"}) {
    ExpectOneLine(
        ParseConfigYaml(std::string("params:\n  cycle_time_ms: ") + value + "\n", "n.yaml", &c),
        "n.yaml: params.cycle_time_ms: ");
    ExpectOneLine(
        ParseConfigYaml(std::string("autotune:\n  gaussian_process_noise: ") + value + "\n",
                        "n.yaml", &c),
        "n.yaml: autotune.gaussian_process_noise: ");
  }
}

TEST(InputLimits, DuplicateYamlKeysAreRefused) {
  ConfigFile c;
  ExpectOneLine(ParseConfigYaml("autotune:\n  enabled: true\n  enabled: false\n", "d.yaml", &c),
                "d.yaml: autotune.enabled: given twice (line 3)");
}

// A timeline of one tensor "a" over `steps` steps whose negotiations carry a tick of `rank`.
std::string TimelineWithTick(int steps, int rank) {
  std::string t = R"([{"name":"process_name","ph":"M","pid":1,"args":{"name":"allreduce.a"}})";
  for (int k = 0; k < steps; ++k) {
    const std::string ts = std::to_string(100 * k);
    t += R"(,{"ph":"B","name":"NEGOTIATE_ALLREDUCE","ts":)" + ts + R"(,"pid":1})";
    t += R"(,{"ph":"X","name":")" + std::to_string(rank) + R"(","ts":)" + ts + R"(,"pid":1})";
    t += R"(,{"ph":"E","ts":)" + ts + R"(,"pid":1},{"ph":"B","name":"ALLREDUCE","ts":)" + ts +
         R"(,"pid":1},{"ph":"E","ts":)" + std::to_string(100 * k + 50) +
         R"(,"pid":1,"args":{"dtype":"float32","shape":"[4]"}})";
  }
  return t + "]";
}

ImportOptions Import(const std::string& source) {
  ImportOptions o;
  o.source = source;
  o.topology.nodes = 0;
  o.topology.ranks_per_node = 0;
  return o;
}

TEST(InputLimits, TimelineRankTicksTakeMemoryInProportionToTheFile) {
  Trace trace;
  ASSERT_TRUE(
      ParseHorovodTimeline(TimelineWithTick(3, 3), Import("ok.json"), &trace, nullptr).ok());
  EXPECT_EQ(trace.run.topology.world_size(), 4);
  // 40 negotiations naming rank 65535 would hold 2.6 million per-rank times from 10 KB.
  ExpectOneLine(
      ParseHorovodTimeline(TimelineWithTick(40, 65535), Import("tick.json"), &trace, nullptr),
      "tick.json: event ");
}

TEST(InputLimits, TimelineTopologyAndNamesHaveLimits) {
  Trace trace;
  ImportOptions o = Import("topo.json");
  o.topology.nodes = 100000;
  o.topology.ranks_per_node = 100000;
  ExpectOneLine(ParseHorovodTimeline(TimelineWithTick(3, 1), o, &trace, nullptr),
                "topo.json: topology 100000x100000 has more than 65536 ranks");
  std::string text = TimelineWithTick(3, 1);
  text.replace(text.find("allreduce.a"), 11, "allreduce.a\\tb");
  ExpectOneLine(ParseHorovodTimeline(text, Import("name.json"), &trace, nullptr),
                "name.json: the tensor name of pid 1 holds a control character");
}

TEST(InputLimits, TimelineNumbersOutOfRange) {
  Trace trace;
  std::string text = TimelineWithTick(3, 1);
  ExpectOneLine(
      ParseHorovodTimeline(std::string(text).replace(text.find("\"pid\":1}"), 8, "\"pid\":1e300}"),
                           Import("pid.json"), &trace, nullptr),
      "pid.json: event 1: \"pid\" is not an integer");
  ExpectOneLine(
      ParseHorovodTimeline(std::string(text).replace(text.find("\"ts\":0"), 6, "\"ts\":1e400"),
                           Import("ts.json"), &trace, nullptr),
      "ts.json: event 1: malformed JSON");
}

}  // namespace
}  // namespace autotune
