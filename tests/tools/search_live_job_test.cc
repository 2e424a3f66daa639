// `search --live` on a run imported from a real job: each proposal is measured by running the
// job's own command (--launcher) under `autotune apply` with HOROVOD_TIMELINE set, and the
// timeline it writes is imported as a measured run. The job here is a stand-in that writes a
// real Horovod timeline (tests/fixtures/horovod) where HOROVOD_TIMELINE says and logs the
// knobs it was given, so the test sees what a real job would have been handed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "formats/config_file.h"
#include "store/store.h"
#include "tests/support/cli.h"
#include "tests/support/sim_fixtures.h"
#include "tests/support/synthetic.h"

namespace autotune::testing {
namespace {

std::string Fixture(const std::string& file) {
  return std::string(AUTOTUNE_FIXTURES_DIR) + "/horovod/" + file;
}

std::vector<std::string> Lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Writes the stand-in job: it appends "THRESHOLD CYCLE TIMELINE_SET" to log and copies the
// real timeline to $HOROVOD_TIMELINE.
std::string WriteJob(const TempDir& dir, const std::string& log) {
  const std::string job = dir.File("job.sh");
  std::ofstream(job) << "#!/bin/sh\n"
                     << "echo \"${HOROVOD_FUSION_THRESHOLD:-unset} ${HOROVOD_CYCLE_TIME:-unset} "
                        "${HOROVOD_TIMELINE_MARK_CYCLES:-0}\" >> '"
                     << log << "'\n"
                     << "cp '" << Fixture("resnet50_default.json") << "' \"$HOROVOD_TIMELINE\"\n";
  return job;
}

// Imports the real resnet50 timeline as run 1 of `db` (workload "job", 2x2, with
// `extra_import_flags`) and stores a calibration of 2x2 beside it; the caller ASSERTs on
// HasFatalFailure.
void ImportBaseRun(const std::string& db, const std::string& extra_import_flags) {
  CommandResult r = RunAutotune("import --db '" + db + "' --horovod-timeline '" +
                                Fixture("resnet50_default.json") +
                                "' --nodes 2 --ranks-per-node 2 --workload job " +
                                extra_import_flags + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(db, Store::Mode::kReadWrite, &store).ok());
  Calibration cal = sim::SynthesizeCalibration(sim::NetworkModel::FromParams(
      sim::NetworkParams::Uniform(40, 115), sim::testing::Topo(2, 2)));
  ASSERT_TRUE(store->SaveCalibration(&cal).ok());
}

TEST(SearchLiveJobTest, ProposalsRunTheJobUnderApplyAndImportItsTimeline) {
  TempDir dir;
  const std::string db = dir.File("runs.db");
  const std::string log = dir.File("job.log");
  ImportBaseRun(db, "--host-cores 2 --nodes-per-host 2");
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  const std::string job = WriteJob(dir, log);
  CommandResult r =
      RunAutotune("search --db '" + db + "' --run 1 --live --max-samples 3 --sim-budget 20 "
                  "--autotune-warmup-samples 1 --autotune-steps-per-sample 5 --launcher 'sh " +
                  job + "' --out '" + dir.File("best.yaml") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;

  // Every proposal ran the job once, with the proposal's knobs in Horovod's variables.
  const std::vector<std::string> runs = Lines(log);
  const int64_t imported = QueryInt(db, "SELECT count(*) FROM runs WHERE kind = 'imported'");
  ASSERT_GE(runs.size(), 1u) << r.err;
  EXPECT_EQ(static_cast<int64_t>(runs.size()), imported - 1);
  for (size_t i = 0; i < runs.size(); ++i) {
    const int64_t id = 2 + static_cast<int64_t>(i);
    const std::string where = " FROM runs WHERE id = " + std::to_string(id);
    const double mb = std::stod(QueryText(db, "SELECT fusion_threshold_mb" + where));
    const double ms = std::stod(QueryText(db, "SELECT cycle_time_ms" + where));
    std::istringstream fields(runs[i]);
    std::string threshold, cycle, marks;
    fields >> threshold >> cycle >> marks;
    EXPECT_EQ(std::stoll(threshold), static_cast<long long>(std::llround(mb * 1048576))) << runs[i];
    EXPECT_DOUBLE_EQ(std::stod(cycle), ms) << runs[i];
    EXPECT_EQ(marks, "1");
    // Imported as the base run's workload and topology, 1 warm-up step left out, 5 kept.
    EXPECT_EQ(QueryText(db, "SELECT workload_name" + where), "job");
    EXPECT_EQ(QueryInt(db, "SELECT nodes * 10 + ranks_per_node" + where), 22);
    // On the base run's host: 2 cores shared by both nodes' ranks.
    EXPECT_EQ(QueryInt(db, "SELECT host_cores * 10 + nodes_per_host" + where), 22);
    EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM steps WHERE run_id = " + std::to_string(id)), 5);
  }
  // The job wrote the same timeline under every setting: no setting is faster beyond noise,
  // so the defaults are kept.
  EXPECT_NE((r.out + r.err).find("keeping the defaults"), std::string::npos) << r.out << r.err;
  ConfigFile best;
  ASSERT_TRUE(LoadConfigFile(dir.File("best.yaml"), &best).ok());
  EXPECT_EQ(best.knobs.fusion_threshold_mb, Knobs().fusion_threshold_mb);
  EXPECT_EQ(best.knobs.cycle_time_ms, Knobs().cycle_time_ms);
}

// --production-runs: each proposal runs first without the timeline (the stand-in prints its step
// times as a job's own log would: 300 ms at the median under the default's fusion threshold and
// cycle time, 200 ms under any other) and then traced; the traced run's import carries the
// production median, and the candidate is chosen and judged by production step times only (the
// timeline's steps take about 2.5 s here at every setting). Traced, the stand-in prints its own
// step times (2,500 ms at the median) under the default's setting only: those runs carry them
// as the traced job's own, the others are imported without and say so.
TEST(SearchLiveJobTest, ProductionRunsDecideOnTheJobsOwnStepTimes) {
  TempDir dir;
  const std::string db = dir.File("runs.db");
  const std::string log = dir.File("job.log");
  ImportBaseRun(db, "");
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  const std::string job = dir.File("job.sh");
  std::ofstream(job) << "#!/bin/sh\n"
                     << "if [ -n \"$HOROVOD_TIMELINE\" ]; then echo traced >> '" << log << "'; cp '"
                     << Fixture("resnet50_default.json") << "' \"$HOROVOD_TIMELINE\"; "
                     << "if [ \"$HOROVOD_FUSION_THRESHOLD\" = 134217728 ] && "
                     << "[ \"$HOROVOD_CYCLE_TIME\" = 1 ]; then "
                     << "echo '{\"step_ms\": [2400, 2500, 2600]}'; fi; "
                     << "else echo production >> '" << log << "'; echo 'step 1'; "
                     << "if [ \"$HOROVOD_FUSION_THRESHOLD\" = 134217728 ] && "
                     << "[ \"$HOROVOD_CYCLE_TIME\" = 1 ]; then "
                     << "echo '{\"step_ms\": [290, 300, 310]}'; "
                     << "else echo '{\"step_ms\": [190, 200, 210]}'; fi; fi\n";
  CommandResult r =
      RunAutotune("search --db '" + db + "' --run 1 --live --production-runs --max-samples 3 "
                  "--sim-budget 20 --autotune-warmup-samples 1 --autotune-steps-per-sample 5 "
                  "--launcher 'sh " + job + "' --out '" + dir.File("best.yaml") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> runs = Lines(log);
  const int64_t imported = QueryInt(db, "SELECT count(*) FROM runs WHERE kind = 'imported'");
  ASSERT_GE(imported, 2) << r.err;
  ASSERT_EQ(static_cast<int64_t>(runs.size()), 2 * (imported - 1)) << r.err;
  for (size_t i = 0; i < runs.size(); ++i) {
    EXPECT_EQ(runs[i], i % 2 == 0 ? "production" : "traced") << i;
  }
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM runs WHERE id > 1 AND "
                         "untraced_step_ms IN (200, 300)"),
            imported - 1);
  // The traced job's own step time: 2,500 ms on the default's runs, none on the others.
  const int64_t defaults =
      QueryInt(db, "SELECT count(*) FROM runs WHERE id > 1 AND untraced_step_ms = 300");
  EXPECT_GT(defaults, 0);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM runs WHERE id > 1 AND untraced_step_ms = 300 "
                         "AND traced_step_ms = 2500"),
            defaults);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM runs WHERE id > 1 AND untraced_step_ms = 200 "
                         "AND traced_step_ms = 0"),
            imported - 1 - defaults);
  EXPECT_NE(r.err.find("traced-steps.log: no line holds a JSON object with \"step_ms\": "
                       "imported without it"),
            std::string::npos)
      << r.err;
  // The stored decision's runs: production ones only (the base run, traced, has none), each at
  // its production median: the default's 300 ms and a contender's 200 ms.
  // (Round 1 gives the default its second run, live, and probes; round 2 compares the two.)
  const int64_t decided = QueryInt(db, "SELECT count(*) FROM decision_runs");
  ASSERT_GT(decided, 0) << r.out;
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM decision_runs WHERE run_id = 1"), 0);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM decision_runs WHERE "
                         "abs(median_step_ms - 300) < 1e-6 OR abs(median_step_ms - 200) < 1e-6"),
            decided);
  EXPECT_GT(QueryInt(db, "SELECT count(*) FROM decision_runs WHERE "
                         "abs(median_step_ms - 200) < 1e-6"),
            0);
  // The tuner learned from the production runs alone: the traced base run was left out.
  EXPECT_NE(r.err.find("measured sample(s) of traced runs left out"), std::string::npos)
      << r.err;
}

TEST(SearchLiveJobTest, AnImportedRunNeedsTheJobsCommand) {
  TempDir dir;
  const std::string db = dir.File("runs.db");
  CommandResult r = RunAutotune("import --db '" + db + "' --horovod-timeline '" +
                                Fixture("mlp_default.json") + "' --nodes 2 --ranks-per-node 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = RunAutotune("search --db '" + db + "' --run 1 --live --out '" + dir.File("b.yaml") + "'");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("--launcher"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace autotune::testing
