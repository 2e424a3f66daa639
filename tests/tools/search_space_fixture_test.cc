// `autotune search` on the shared real Horovod timelines (tests/fixtures/horovod): every
// setting it prints or writes lies in the space the job shapes (tuner/job_space.h), and it
// notes that space on stderr.
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "formats/config_file.h"
#include "tests/support/cli.h"
#include "traces/knob_table.h"
#include "traces/knobs.h"

namespace autotune::testing {
namespace {

// The fusion bounds of a fixture, worked out from its timeline with a python one-off (the
// shapes and dtypes on the allreduce processes' end events, the tensors of every step):
//   mlp_default: 404 float32 tensors, the two smallest 256 floats each (2 * 1,024 B = 2,048 B
//     = 0.001953125 MB, 0.00195313 at the knob's 6 significant digits rounded up), all of them
//     30,696,352 B = 29.274322509765625 MB (29.2744 rounded up).
//   resnet50_*: 161 float32 tensors, the two smallest 64 floats each (512 B = 0.00048828125
//     MB, 0.000488282 rounded up), all of them 102,228,128 B = 97.49234008789062 MB (97.4924).
struct Fixture {
  const char* name;
  int tensors;
  const char* lower_mb;
  const char* upper_mb;
};
const Fixture kFixtures[] = {
    {"mlp_default", 404, "0.00195313", "29.2744"},
    {"resnet50_default", 161, "0.000488282", "97.4924"},
    {"resnet50_f4_c10", 161, "0.000488282", "97.4924"},
};

double Parse(const char* text) { return std::strtod(text, nullptr); }

// Whether `knobs` is a setting of the fixture's job-shaped space, as a user would type it: the
// threshold 0, inside the bounds, or the default 128 MB (which behaves as the upper bound);
// HOROVOD_FUSION_THRESHOLD whole bytes; the cycle in [0.5, 100] ms (each fixture's step takes
// over 500 ms: 0.1% of it is past 0.5 ms, and 100 ms is the table's end); the cache off or
// holding every tensor (the default 1024 does); no hierarchical collective (CPU Horovod or
// one node).
void ExpectInTheJobsSpace(const Fixture& f, const Knobs& knobs, const std::string& what) {
  const double mb = knobs.fusion_threshold_mb;
  EXPECT_TRUE(mb == 0.0 || (mb >= Parse(f.lower_mb) && mb <= Parse(f.upper_mb)) || mb == 128.0)
      << what << ": fusion_threshold_mb " << mb;
  bool found = false;
  for (const auto& [name, value] : KnobEnvironment(knobs, KnobLibrary::kHorovod)) {
    if (name != "HOROVOD_FUSION_THRESHOLD") continue;
    found = true;
    EXPECT_EQ(value, std::to_string(knobs.threshold_bytes())) << what;
    EXPECT_EQ(value.find_first_not_of("0123456789"), std::string::npos) << what << ": " << value;
  }
  EXPECT_TRUE(found) << what;
  EXPECT_GE(knobs.cycle_time_ms, 0.5) << what;
  EXPECT_LE(knobs.cycle_time_ms, 100.0) << what;
  EXPECT_TRUE(knobs.cache_capacity == 0 || knobs.cache_capacity >= f.tensors)
      << what << ": cache_capacity " << knobs.cache_capacity;
  EXPECT_FALSE(knobs.hierarchical_allreduce) << what;
  EXPECT_FALSE(knobs.hierarchical_allgather) << what;
}

Knobs FromJson(const nlohmann::json& j) {
  Knobs knobs;
  EXPECT_TRUE(KnobsFromJson(j, &knobs).ok()) << j.dump();
  return knobs;
}

// Imports the fixture on `topology` ("--nodes 2 --ranks-per-node 2") and searches it with
// `flags`; checks every setting printed or written.
void SearchFixture(const Fixture& f, const std::string& topology, const std::string& flags) {
  TempDir dir;
  const std::string db = dir.File("f.db");
  const CommandResult imported =
      RunAutotune("import --db '" + db + "' --horovod-timeline '" + AUTOTUNE_FIXTURES_DIR +
                  "/horovod/" + f.name + ".json' " + topology);
  ASSERT_EQ(imported.exit_code, 0) << f.name << " " << imported.err;
  const std::string out = dir.File("best.yaml");
  const CommandResult r =
      RunAutotune("search --json --quiet --db '" + db +
                  "' --run 1 --propose 4 --sim-budget 40 --out '" + out + "' " + flags);
  ASSERT_EQ(r.exit_code, 0) << f.name << " " << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const std::string where = std::string(f.name) + " " + topology + " " + flags;
  ExpectInTheJobsSpace(f, FromJson(j["best"]["knobs"]), where + " best");
  ExpectInTheJobsSpace(f, FromJson(j["candidate"]["knobs"]), where + " candidate");
  ExpectInTheJobsSpace(f, FromJson(j["default"]["knobs"]), where + " default");
  EXPECT_EQ(FromJson(j["default"]["knobs"]), Knobs()) << where;
  ASSERT_FALSE(j["proposals"].empty()) << where;
  for (const auto& p : j["proposals"]) {
    ExpectInTheJobsSpace(f, FromJson(p["knobs"]), where + " proposal");
    ConfigFile written;
    ASSERT_TRUE(LoadConfigFile(p["file"].get<std::string>(), &written).ok()) << where;
    ExpectInTheJobsSpace(f, written.knobs, where + " " + p["file"].get<std::string>());
  }
  // The space, noted one line a knob.
  EXPECT_NE(r.err.find(std::string("search: note: fusion_threshold_mb searched in 0 or [") +
                       f.lower_mb + ", " + f.upper_mb + "] MB: "),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("search: note: cache_capacity searched in {0, " + std::to_string(f.tensors) +
                       "} entries: "),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("search: note: cycle_time_ms searched in [0.5, 100] ms: "),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("search: note: hierarchical_allreduce held at false: "), std::string::npos)
      << r.err;
}

TEST(SearchSpaceFixtureTest, EveryPrintedSettingIsInTheJobsSpace) {
  for (const Fixture& f : kFixtures) {
    // As imported from CPU Horovod (target cpu: no hierarchical collectives).
    SearchFixture(f, "--nodes 2 --ranks-per-node 2", "");
  }
}

TEST(SearchSpaceFixtureTest, OneNodeHoldsTheHierarchicalKnobsWhateverTheTarget) {
  const Fixture& mlp = kFixtures[0];
  SearchFixture(mlp, "--nodes 1 --ranks-per-node 4", "--target executor");
  TempDir dir;
  const std::string db = dir.File("f.db");
  ASSERT_EQ(RunAutotune("import --db '" + db + "' --horovod-timeline '" + AUTOTUNE_FIXTURES_DIR +
                        "/horovod/mlp_default.json' --nodes 1 --ranks-per-node 4")
                .exit_code,
            0);
  const CommandResult r = RunAutotune("search --quiet --db '" + db + "' --run 1 --sim-budget 10 " +
                                      "--target executor --out '" + dir.File("b.yaml") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("search: note: hierarchical_allgather held at false: one node: "),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace autotune::testing
