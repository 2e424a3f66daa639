// Walks the knob table and round-trips every knob through everything derived from it: its
// CLI flag, YAML, JSON, the environment, the tuning log's CSV, the tuner's search space and
// the in-run broadcast. The expected spellings are written out here, independently of the
// table, one row per knob: a knob added to the table without a row here fails the test.
#include "traces/knob_table.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "formats/config_file.h"
#include "tests/support/cli.h"
#include "tools/knob_flags.h"
#include "tools/search/sample_log.h"
#include "tuner/knob_search.h"
#include "tuner/knob_space.h"

namespace autotune {
namespace {

struct Expected {
  std::vector<std::string> flag_args;  // the command line that sets `value`
  std::string value;                   // a valid value other than the default, as text
  std::string env;                     // "NAME=VALUE" lines it exports ("" = none)
  bool runtime;                        // may change inside one run
};

// One row per knob, written from Horovod's, NCCL's, Open MPI's and PyTorch DDP's
// documentation (DDP's variables are autotune's own, read by its sitecustomize).
const std::map<std::string, Expected>& Rows() {
  static const std::map<std::string, Expected> k = {
      {"fusion_threshold_mb",
       {{"--fusion-threshold-mb", "32"}, "32", "HOROVOD_FUSION_THRESHOLD=33554432", true}},
      {"cycle_time_ms", {{"--cycle-time-ms", "2.5"}, "2.5", "HOROVOD_CYCLE_TIME=2.5", true}},
      {"cache_capacity", {{"--cache-capacity", "0"}, "0", "HOROVOD_CACHE_CAPACITY=0", true}},
      {"hierarchical_allreduce",
       {{"--hierarchical-allreduce"}, "true", "HOROVOD_HIERARCHICAL_ALLREDUCE=1", true}},
      {"hierarchical_allgather",
       {{"--hierarchical-allgather"}, "true", "HOROVOD_HIERARCHICAL_ALLGATHER=1", true}},
      {"num_groups", {{"--num-groups", "4"}, "4", "", false}},
      {"ddp_bucket_cap_mb",
       {{"--ddp-bucket-cap-mb", "5"}, "5", "AUTOTUNE_DDP_BUCKET_CAP_MB=5", true}},
      {"ddp_first_bucket_mb",
       {{"--ddp-first-bucket-mb", "0.5"}, "0.5", "AUTOTUNE_DDP_FIRST_BUCKET_MB=0.5", true}},
      {"ddp_gradient_as_bucket_view",
       {{"--ddp-gradient-as-bucket-view"}, "true", "AUTOTUNE_DDP_GRADIENT_AS_BUCKET_VIEW=1", true}},
      {"nccl_algo", {{"--nccl-algo", "tree"}, "tree", "NCCL_ALGO=Tree", false}},
      {"nccl_proto", {{"--nccl-proto", "ll128"}, "ll128", "NCCL_PROTO=LL128", false}},
      {"nccl_max_nchannels",
       {{"--nccl-max-nchannels", "8"}, "8", "NCCL_MAX_NCHANNELS=8", false}},
      {"nccl_cross", {{"--nccl-cross", "mpi"}, "mpi", "", false}},
      {"mpi_allreduce_algorithm",
       {{"--mpi-allreduce-algorithm", "4"},
        "4",
        "OMPI_MCA_coll_tuned_use_dynamic_rules=1\nOMPI_MCA_coll_tuned_allreduce_algorithm=4",
        false}},
      {"mpi_tcp_eager_limit",
       {{"--mpi-tcp-eager-limit", "131072"}, "131072", "OMPI_MCA_btl_tcp_eager_limit=131072",
        false}},
  };
  return k;
}

Knobs WithValue(const std::string& name, const std::string& value) {
  Knobs knobs;
  EXPECT_TRUE(SetKnob(&knobs, name, value).ok()) << name;
  EXPECT_TRUE(knobs.Validate().ok()) << name << " = " << value;
  EXPECT_FALSE(knobs == Knobs()) << name << ": the test value must not be the default";
  return knobs;
}

std::string ExportedLines(const Knobs& knobs, KnobLibrary library = KnobLibrary::kNone) {
  std::string out;
  for (const auto& [name, value] : KnobEnvironment(knobs, library)) {
    if (!value.empty()) out += (out.empty() ? "" : "\n") + name + "=" + value;
  }
  return out;
}

TEST(KnobTable, EveryKnobHasARowInThisTest) {
  ASSERT_EQ(KnobTable().size(), Rows().size());
  for (const KnobSpec& spec : KnobTable()) EXPECT_TRUE(Rows().count(spec.name)) << spec.name;
}

TEST(KnobTable, FlagSetsTheKnobAndMakesItAConstant) {
  for (const auto& [name, row] : Rows()) {
    CLI::App app;
    cli::KnobFlags flags;
    flags.Add(&app);
    std::vector<std::string> args(row.flag_args.rbegin(), row.flag_args.rend());
    ASSERT_NO_THROW(app.parse(args)) << name;
    Knobs knobs;
    std::set<std::string> constants;
    ASSERT_TRUE(flags.Resolve(&knobs, &constants).ok()) << name;
    EXPECT_EQ(knobs, WithValue(name, row.value)) << name;
    EXPECT_EQ(constants, std::set<std::string>{name}) << name;
  }
}

TEST(KnobTable, YamlAndJsonRoundTrip) {
  for (const auto& [name, row] : Rows()) {
    ConfigFile config;
    const bool ddp = name.rfind("ddp_", 0) == 0;
    config.framework = ddp ? Framework::kDdp : Framework::kHorovod;
    config.knobs = WithValue(name, row.value);
    ConfigFile back;
    ASSERT_TRUE(ParseConfigYaml(ConfigToYaml(config), "t.yaml", &back).ok()) << name;
    EXPECT_EQ(back.knobs, config.knobs) << name << "\n" << ConfigToYaml(config);
    EXPECT_EQ(back.framework, config.framework) << name;
    // DDP's knobs live in a top-level ddp: section (the spelling).
    EXPECT_EQ(ConfigToYaml(config).rfind(ddp ? "ddp:" : "params:", 0), 0u) << name;
    // A DDP file holds no Horovod knob (num_groups is Horovod's, in autotune_extra).
    if (ddp) {
      EXPECT_EQ(ConfigToYaml(config).find("num_groups"), std::string::npos) << name;
    }
    EXPECT_TRUE(back.set_knobs.count(name)) << name;
    Knobs from_json;
    ASSERT_TRUE(KnobsFromJson(KnobsToJson(config.knobs), &from_json).ok()) << name;
    EXPECT_EQ(from_json, config.knobs) << name;
  }
}

TEST(KnobTable, EnvironmentInTheLibrariesSpelling) {
  const std::string defaults = ExportedLines(Knobs());
  EXPECT_EQ(defaults,
            "HOROVOD_FUSION_THRESHOLD=134217728\nHOROVOD_CYCLE_TIME=1\n"
            "HOROVOD_CACHE_CAPACITY=1024\nHOROVOD_HIERARCHICAL_ALLREDUCE=0\n"
            "HOROVOD_HIERARCHICAL_ALLGATHER=0\nAUTOTUNE_DDP_BUCKET_CAP_MB=25\n"
            "AUTOTUNE_DDP_FIRST_BUCKET_MB=1\nAUTOTUNE_DDP_GRADIENT_AS_BUCKET_VIEW=0");
  for (const auto& [name, row] : Rows()) {
    const Knobs knobs = WithValue(name, row.value);
    const std::string backend = ExportedLines(knobs, FindKnob(name)->library);
    if (row.env.empty()) {
      EXPECT_EQ(ExportedLines(knobs), defaults) << name;
    } else if (row.env.rfind("HOROVOD_", 0) == 0 || row.env.rfind("AUTOTUNE_DDP_", 0) == 0) {
      EXPECT_NE(backend.find(row.env), std::string::npos) << name << ": " << backend;
    } else {
      EXPECT_EQ(backend, row.env) << name;
    }
  }
}

TEST(KnobTable, TuningLogHasOneColumnPerKnob) {
  testing::TempDir dir;
  const std::string path = dir.File("log.csv");
  for (const auto& [name, row] : Rows()) {
    cli::SampleLog log;
    ASSERT_TRUE(log.Open(path).ok());
    log.Write(WithValue(name, row.value), Fidelity::kMeasured, 2e6);
    log = cli::SampleLog();  // closes the file
    std::ifstream in(path);
    std::string header, line, cell;
    std::getline(in, header);
    std::getline(in, line);
    std::vector<std::string> columns, cells;
    for (std::stringstream h(header); std::getline(h, cell, ',');) columns.push_back(cell);
    for (std::stringstream l(line); std::getline(l, cell, ',');) cells.push_back(cell);
    ASSERT_EQ(columns.size(), cells.size()) << line;
    std::map<std::string, std::string> by_column;
    for (size_t i = 0; i < columns.size(); ++i) by_column[columns[i]] = cells[i];
    EXPECT_EQ(by_column["score"], "2") << "Horovod's unit: bytes per microsecond";
    std::string expected = row.value;
    // Horovod's own columns write booleans as 0/1, as its log does; ours write the knob's text.
    if (expected == "true" && FindKnob(name)->horovod_log_column >= 0) expected = "1";
    const std::string column = name == "fusion_threshold_mb" ? "tensor_fusion_threshold" : name;
    EXPECT_EQ(by_column[column], expected) << name << ": " << header << "\n" << line;
  }
}

TEST(KnobTable, SearchSpaceHoldsTheKnobsOfTheBackendAndFrameworkWithTheirLifetime) {
  for (auto framework : {Framework::kHorovod, Framework::kDdp})
  for (auto backend : {BackendKind::kMpi, BackendKind::kNccl}) {
    const tuner::Space space = tuner::KnobSearchSpace(backend, framework);
    for (const auto& [name, row] : Rows()) {
      const bool nccl_only = name.rfind("nccl_", 0) == 0;
      const bool mpi_only = name.rfind("mpi_", 0) == 0;
      const bool ddp_only = name.rfind("ddp_", 0) == 0;
      const bool backend_knob = nccl_only || mpi_only;
      const bool in_framework = backend_knob || ddp_only == (framework == Framework::kDdp);
      // Set by a search with the other knobs (tuner::WithCompanionKnobs), never a dimension.
      const bool set_with_others = name == "mpi_tcp_eager_limit";
      const bool expected = in_framework && !set_with_others &&
                            (backend == BackendKind::kNccl ? !mpi_only : !nccl_only);
      const int i = space.IndexOf(name);
      ASSERT_EQ(i >= 0, expected) << name;
      if (i < 0) continue;
      EXPECT_EQ(space.dimension(i).lifetime == tuner::Lifetime::kRuntime, row.runtime) << name;
      const Knobs knobs = WithValue(name, row.value);
      tuner::Point point;
      ASSERT_TRUE(tuner::KnobsToPoint(space, knobs, &point).ok()) << name;
      Knobs back;
      ASSERT_TRUE(tuner::PointToKnobs(space, point, Knobs(), &back).ok()) << name;
      EXPECT_EQ(back, knobs) << name;
    }
  }
}

// The executor's in-run broadcast, the online tuner and the search space agree on which knobs
// may change inside a run (they once disagreed about num_groups).
TEST(KnobTable, RuntimeKnobsAreTheOnesTheBroadcastCarries) {
  for (const auto& [name, row] : Rows()) {
    const Knobs changed = WithValue(name, row.value);
    EXPECT_EQ(SameExceptRuntimeKnobs(Knobs(), changed), row.runtime) << name;
    const Knobs received = DecodeRuntimeKnobs(EncodeRuntimeKnobs(changed), Knobs());
    EXPECT_EQ(received == changed, row.runtime) << name;
  }
}

TEST(KnobTable, ValidationNamesKnobValueAndRange) {
  Knobs k;
  k.cycle_time_ms = 0.05;
  EXPECT_EQ(k.Validate().message(), "knob cycle_time_ms = 0.05 is out of range [0.1, 100] ms");
  k = Knobs();
  k.nccl_proto = "fast";
  EXPECT_EQ(k.Validate().message(), "knob nccl_proto = fast is out of range {simple, ll, ll128}");
}

// A proposed real value carries the digits its text carries: the double nearest the decimal.
TEST(KnobTable, RealValuesRoundToTheSixDigitsOfTheirText) {
  EXPECT_EQ(RoundToKnobPrecision(0.439251818493754), std::strtod("0.439252", nullptr));
  EXPECT_EQ(RoundToKnobPrecision(123456789.0), 123457000.0);
  EXPECT_EQ(RoundToKnobPrecision(511.9999999), 512.0);
  EXPECT_EQ(RoundToKnobPrecision(0.000123456789), std::strtod("0.000123457", nullptr));
  EXPECT_EQ(RoundToKnobPrecision(0.0), 0.0);
  EXPECT_EQ(RoundToKnobPrecision(3.5), 3.5);
}

// One boolean parser: every spelling a YAML file or a flag may use, and nothing else.
TEST(KnobTable, OneBooleanParser) {
  for (const char* yes : {"1", "true", "True", "on", "yes"}) {
    bool value = false;
    EXPECT_TRUE(ParseBoolText(yes, &value) && value) << yes;
  }
  for (const char* no : {"0", "false", "False", "off", "no"}) {
    bool value = true;
    EXPECT_TRUE(ParseBoolText(no, &value) && !value) << no;
  }
  bool value = false;
  EXPECT_FALSE(ParseBoolText("TRUE", &value));
  EXPECT_FALSE(ParseBoolText("", &value));
}

TEST(KnobTable, ARowIsFoundByItsField) {
  EXPECT_STREQ(KnobOfField(&Knobs::nccl_algo).name, "nccl_algo");
  EXPECT_STREQ(KnobOfField(&Knobs::num_groups).name, "num_groups");
  EXPECT_STREQ(KnobOfField(&Knobs::ddp_gradient_as_bucket_view).name,
               "ddp_gradient_as_bucket_view");
}

}  // namespace
}  // namespace autotune
