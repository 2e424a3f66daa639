#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "formats/config_file.h"
#include "traces/knobs.h"

namespace autotune {
namespace {

TEST(Knobs, DefaultsAreHorovods) {
  Knobs k;
  EXPECT_EQ(k.threshold_bytes(), 128LL * 1024 * 1024);
  EXPECT_DOUBLE_EQ(k.cycle_time_ms, 1.0);
  EXPECT_EQ(k.cache_capacity, 1024);
  EXPECT_TRUE(k.Validate().ok());
}

TEST(Knobs, ValidateNamesTheFieldOutOfRange) {
  Knobs k;
  k.fusion_threshold_mb = 513;
  EXPECT_NE(k.Validate().message().find("fusion_threshold_mb"), std::string::npos);
  k = Knobs();
  k.cycle_time_ms = 0.05;
  EXPECT_NE(k.Validate().message().find("cycle_time_ms"), std::string::npos);
  k = Knobs();
  k.cache_capacity = -1;
  EXPECT_FALSE(k.Validate().ok());
  k = Knobs();
  k.num_groups = 65;
  EXPECT_FALSE(k.Validate().ok());
  k = Knobs();
  k.nccl_proto = "fast";
  EXPECT_FALSE(k.Validate().ok());
}

TEST(Knobs, JsonRoundTrip) {
  Knobs k;
  k.fusion_threshold_mb = 32.5;
  k.hierarchical_allgather = true;
  k.nccl_algo = "tree";
  k.num_groups = 3;
  Knobs back;
  ASSERT_TRUE(KnobsFromJson(KnobsToJson(k), &back).ok());
  EXPECT_EQ(back, k);
  EXPECT_FALSE(KnobsFromJson(nlohmann::json{{"bogus", 1}}, &back).ok());
}

TEST(ConfigFile, ReadsHorovodrunKeys) {
  const char* yaml = R"(
params:
  fusion_threshold_mb: 32
  cycle_time_ms: 3.5
  cache_capacity: 2048
  hierarchical_allreduce: true
  hierarchical_allgather: false
autotune:
  enabled: true
  log_file: at.csv
  warmup_samples: 2
  steps_per_sample: 5
  bayes_opt_max_samples: 30
  gaussian_process_noise: 0.5
timeline:
  filename: tl.json
stall_check:
  enabled: false
)";
  ConfigFile c;
  Status s = ParseConfigYaml(yaml, "h.yaml", &c);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(c.knobs.threshold_bytes(), 33554432);
  EXPECT_DOUBLE_EQ(c.knobs.cycle_time_ms, 3.5);
  EXPECT_EQ(c.knobs.cache_capacity, 2048);
  EXPECT_TRUE(c.knobs.hierarchical_allreduce);
  EXPECT_TRUE(c.autotune.enabled);
  EXPECT_EQ(c.autotune.steps_per_sample, 5);
  EXPECT_DOUBLE_EQ(c.autotune.gaussian_process_noise, 0.5);
  EXPECT_EQ(c.set_knobs.size(), 5u);
  EXPECT_EQ(c.set_knobs.count("num_groups"), 0u);
}

TEST(ConfigFile, RoundTripIncludingExtras) {
  ConfigFile c;
  c.knobs.fusion_threshold_mb = 8;
  c.knobs.num_groups = 4;
  c.knobs.nccl_algo = "ring";
  c.knobs.nccl_max_nchannels = 8;
  c.knobs.mpi_allreduce_algorithm = 4;
  c.provenance_json = R"({"db":"runs.db","run":2,"predicted_score":1.9e9})";
  ConfigFile back;
  Status s = ParseConfigYaml(ConfigToYaml(c), "rt.yaml", &back);
  ASSERT_TRUE(s.ok()) << s.message() << "\n" << ConfigToYaml(c);
  EXPECT_EQ(back.knobs, c.knobs);
  auto prov = nlohmann::json::parse(back.provenance_json);
  EXPECT_EQ(prov["run"], 2);
  EXPECT_EQ(prov["db"], "runs.db");
}

TEST(ConfigFile, WritesShortNumbers) {
  ConfigFile c;
  c.knobs.cycle_time_ms = 0.17025;
  std::string yaml = ConfigToYaml(c);
  EXPECT_NE(yaml.find("cycle_time_ms: 0.17025\n"), std::string::npos) << yaml;
  ConfigFile back;
  ASSERT_TRUE(ParseConfigYaml(yaml, "short.yaml", &back).ok());
  EXPECT_EQ(back.knobs.cycle_time_ms, 0.17025);
}

// A setting at the defaults writes no NCCL section: a CPU job's file carries nothing of the
// GPU-only executor knob nccl_cross at its default; away from it, the file says so and reads
// back.
TEST(ConfigFile, TheExecutorsNcclCrossIsWrittenOnlyAwayFromItsDefault) {
  ConfigFile c;
  EXPECT_EQ(ConfigToYaml(c).find("nccl"), std::string::npos) << ConfigToYaml(c);
  c.knobs.nccl_cross = "mpi";
  const std::string yaml = ConfigToYaml(c);
  EXPECT_NE(yaml.find("cross: mpi"), std::string::npos) << yaml;
  ConfigFile back;
  ASSERT_TRUE(ParseConfigYaml(yaml, "cross.yaml", &back).ok());
  EXPECT_EQ(back.knobs.nccl_cross, "mpi");
  ASSERT_TRUE(ParseConfigYaml("params:\n  cycle_time_ms: 2\n", "plain.yaml", &back).ok());
  EXPECT_EQ(back.knobs.nccl_cross, "nccl");
}

TEST(ConfigFile, BadInputNamesTheKey) {
  ConfigFile c;
  Status s = ParseConfigYaml("params:\n  fusion_treshold_mb: 4\n", "bad.yaml", &c);
  EXPECT_NE(s.message().find("bad.yaml: params.fusion_treshold_mb: unknown key"), std::string::npos)
      << s.message();
  s = ParseConfigYaml("params:\n  cycle_time_ms: fast\n", "bad.yaml", &c);
  EXPECT_NE(s.message().find("params.cycle_time_ms"), std::string::npos) << s.message();
  s = ParseConfigYaml("params:\n  fusion_threshold_mb: -4\n", "bad.yaml", &c);
  EXPECT_NE(s.message().find("fusion_threshold_mb"), std::string::npos) << s.message();
  s = ParseConfigYaml("params: [1, 2\n", "bad.yaml", &c);
  EXPECT_NE(s.message().find("malformed YAML"), std::string::npos) << s.message();
  s = ParseConfigYaml("autotune:\n  warmup_samples: many\n", "bad.yaml", &c);
  EXPECT_FALSE(s.ok());
  s = ParseConfigYaml("paramz:\n  x: 1\n", "bad.yaml", &c);
  EXPECT_NE(s.message().find("unknown section"), std::string::npos);
  // A key given twice is refused with its path and line, not silently resolved; the same key
  // in two different mappings is fine.
  s = ParseConfigYaml("params:\n  fusion_threshold_mb: 4\n  fusion_threshold_mb: 8\n", "dup.yaml",
                      &c);
  EXPECT_EQ(s.message(), "dup.yaml: params.fusion_threshold_mb: given twice (line 3)");
  s = ParseConfigYaml("params:\n  cycle_time_ms: 2\nparams:\n  cycle_time_ms: 3\n", "dup.yaml", &c);
  EXPECT_EQ(s.message(), "dup.yaml: params: given twice (line 3)");
  s = ParseConfigYaml("autotune_extra:\n  nccl: {algo: ring}\n  mpi: {allreduce_algorithm: 2}\n",
                      "ok.yaml", &c);
  EXPECT_TRUE(s.ok()) << s.message();
  // A boolean given as 2 and a list where a scalar belongs: one line naming the key.
  s = ParseConfigYaml("params:\n  hierarchical_allreduce: 2\n", "b.yaml", &c);
  EXPECT_NE(s.message().find("b.yaml: params.hierarchical_allreduce"), std::string::npos)
      << s.message();
  s = ParseConfigYaml("params:\n  cycle_time_ms: [1, 2]\n", "l.yaml", &c);
  EXPECT_NE(s.message().find("l.yaml: params.cycle_time_ms"), std::string::npos) << s.message();
}

// Found by fuzzing: a provenance key of more than 1024 characters was written as an implicit
// YAML key, and the file written did not read back.
TEST(ConfigFile, LongProvenanceKeysReadBack) {
  ConfigFile c;
  const std::string key = std::string(2000, 'k') + "\x1c;";
  c.provenance_json = nlohmann::json{{key, 1}, {"db", "runs.db"}}.dump();
  ConfigFile back;
  const Status s = ParseConfigYaml(ConfigToYaml(c), "long.yaml", &back);
  ASSERT_TRUE(s.ok()) << s.message();
  const auto provenance = nlohmann::json::parse(back.provenance_json);
  ASSERT_TRUE(provenance.contains(key)) << back.provenance_json.substr(0, 200);
  EXPECT_EQ(provenance[key], 1);
  EXPECT_EQ(provenance["db"], "runs.db");
}

// Bytes that are not UTF-8 in the provenance (yaml-cpp does not check them) would throw from
// the JSON writer; they become U+FFFD.
TEST(ConfigFile, ProvenanceBytesThatAreNotUtf8) {
  ConfigFile c;
  const Status s = ParseConfigYaml(
      "autotune_extra:\n  provenance:\n    db: a\xFF"
      "b\n",
      "u.yaml", &c);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(nlohmann::json::parse(c.provenance_json)["db"], std::string("a\xEF\xBF\xBD"
                                                                        "b"));
}

// A key or value holding a newline is named with the newline escaped: one error line.
TEST(ConfigFile, ErrorsStayOneLine) {
  ConfigFile c;
  Status s = ParseConfigYaml("params:\n  \"cycle\\ntime\": 1\n", "nl.yaml", &c);
  EXPECT_EQ(s.message(), "nl.yaml: params.cycle\\ntime: unknown key");
  s = ParseConfigYaml("params:\n  cycle_time_ms: \"1\\n2\"\n", "nl.yaml", &c);
  EXPECT_EQ(s.message(), "nl.yaml: params.cycle_time_ms: \"1\\n2\" has the wrong type");
  s = ParseConfigYaml("\"a\\nb\": 1\n", "nl.yaml", &c);
  EXPECT_EQ(s.message(), "nl.yaml: a\\nb: unknown section");
}

}  // namespace
}  // namespace autotune
