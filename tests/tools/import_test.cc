// `autotune import` end to end on the real Horovod timelines (tests/fixtures/horovod): the
// JSON summary, the stored imported run and its measured sample, a malformed or unreadable
// file leaving no database (or an existing one byte for byte), and the imported run used by
// runs, simulate, search and compare as a recorded one would be.
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "store/store.h"
#include "tests/support/cli.h"
#include "tests/support/sim_fixtures.h"
#include "tests/support/synthetic.h"

namespace autotune::testing {
namespace {

std::string Fixture(const std::string& file) {
  // Appended in place: GCC 12's -Warray-bounds misreads the temporaries of `a + "..." + b`.
  std::string path = AUTOTUNE_FIXTURES_DIR;
  path.append("/horovod/").append(file);
  return path;
}

std::string ImportArgs(const std::string& db, const std::string& file) {
  return "import --db '" + db + "' --horovod-timeline '" + file +
         "' --nodes 2 --ranks-per-node 2 --json";
}

// A calibration of 2x2 off a parametric network of about the emulated cluster's link.
void AddCalibration(const std::string& db) {
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(db, Store::Mode::kReadWrite, &store).ok());
  Calibration cal = sim::SynthesizeCalibration(sim::NetworkModel::FromParams(
      sim::NetworkParams::Uniform(40, 115), sim::testing::Topo(2, 2)));
  ASSERT_TRUE(store->SaveCalibration(&cal).ok());
}

TEST(ImportTest, JsonSummaryAndTheStoredRun) {
  TempDir dir;
  const std::string db = dir.File("runs.db");
  CommandResult r = RunAutotune(ImportArgs(db, Fixture("resnet50_default.json")) +
                                " --fusion-threshold-mb 128 --cycle-time-ms 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["run"], 1);
  EXPECT_EQ(j["kind"], "imported");
  EXPECT_EQ(j["workload"], "resnet50_default");
  EXPECT_EQ(j["topology"], "2x2");
  EXPECT_EQ(j["backend"], "mpi");
  EXPECT_EQ(j["tensors"], 161);                    // torchvision resnet50's parameters
  EXPECT_EQ(j["bytes_per_step"], 25557032LL * 4);  // float32
  EXPECT_EQ(j["steps"], 9);                        // 10 in the file, 1 warm-up
  EXPECT_EQ(j["truncated"], false);
  EXPECT_GT(j["step_ms_median"].get<double>(), 1000.0);
  EXPECT_GT(j["collectives_per_step"].get<int>(), 0);
  EXPECT_EQ(QueryText(db, "SELECT kind FROM runs WHERE id = 1"), "imported");
  EXPECT_EQ(QueryText(db, "SELECT hardware FROM runs WHERE id = 1"),
            "horovod timeline " + Fixture("resnet50_default.json"));
  EXPECT_NE(QueryText(db, "SELECT command FROM runs WHERE id = 1").find("import --db"),
            std::string::npos);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM steps WHERE run_id = 1"), 9);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM tensor_events WHERE run_id = 1"), 9 * 161 * 4);
  EXPECT_EQ(QueryInt(db,
                     "SELECT count(*) FROM samples WHERE run_id = 1 AND fidelity = "
                     "'measured'"),
            1);
  CommandResult runs = RunAutotune("runs --json --db '" + db + "'");
  ASSERT_EQ(runs.exit_code, 0) << runs.err;
  EXPECT_EQ(nlohmann::json::parse(runs.out)[0]["kind"], "imported");
  // No calibrate: the job's own collectives are its network model, and `runs` says so; the
  // runs a simulate stores name theirs as made, in one line.
  const std::string own =
      "the own collectives of run 1 (self-calibrated: no mpi calibrate of 2x2 in the database)";
  EXPECT_EQ(nlohmann::json::parse(runs.out)[0]["network"], own);
  for (const char* mb : {"8", "16"}) {
    r = RunAutotune("simulate --db '" + db + "' --run 1 --fusion-threshold-mb " + mb);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  runs = RunAutotune("runs --db '" + db + "'");
  ASSERT_EQ(runs.exit_code, 0) << runs.err;
  EXPECT_NE(runs.out.find("run 1 network model: " + own + "\n"), std::string::npos) << runs.out;
  EXPECT_NE(runs.out.find("runs 2-3 (simulated): simulated from run 1 with " + own + "\n"),
            std::string::npos)
      << runs.out;
}

TEST(ImportTest, HumanSummaryAndACutOffFile) {
  TempDir dir;
  const std::string db = dir.File("runs.db");
  const std::string text = ReadFile(Fixture("mlp_default.json"));
  const std::string cut = dir.File("cut.json", text.substr(0, text.size() / 2));
  const CommandResult r = RunAutotune("import --db '" + db + "' --horovod-timeline '" + cut +
                                      "' --nodes 2 --ranks-per-node 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("imported " + cut + " as run 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cut off"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("404 tensors"), std::string::npos) << r.out;
}

// --step-log and --traced-step-log: the medians of their last JSON lines (train.py's format,
// other lines around them) are the production and the traced job's own step times, stored
// with the run; the tracing cost is printed against the traced job's own (2,000 over 1,900 ms:
// +5.3%), and the same file with another traced step time is another import, not a reuse.
TEST(ImportTest, StepLogsGiveTheProductionAndTheTracedJobsStepTimes) {
  TempDir dir;
  const std::string db = dir.File("runs.db");
  const std::string production = dir.File(
      "production.log", "step 1\n{\"step_ms\": [1, 2]}\n{\"step_ms\": [1950, 1900, 1850]}\n");
  const std::string traced =
      dir.File("traced.log", "{\"step_ms\": [2100, 1990, 2000, 2010, 1900]}\ndone\n");
  const std::string args = "import --db '" + db + "' --horovod-timeline '" +
                           Fixture("mlp_default.json") +
                           "' --nodes 2 --ranks-per-node 2 --step-log '" + production + "'";
  CommandResult r = RunAutotune(args + " --traced-step-log '" + traced + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("the traced job's own step time 2000.0 ms"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("production (untraced) step time 1900.0 ms: tracing cost this job +5.3%"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(QueryText(db, "SELECT untraced_step_ms || ' ' || traced_step_ms FROM runs"),
            "1900.0 2000.0");
  r = RunAutotune(args + " --traced-step-ms 2000 --json");  // the same: reused
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["run"], 1);
  EXPECT_EQ(j["reused"], true);
  EXPECT_EQ(j["traced_step_ms"], 2000.0);
  r = RunAutotune(args + " --traced-step-ms 1800 --json");  // production no faster: pooled
  ASSERT_EQ(r.exit_code, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["run"], 2);
  EXPECT_EQ(j["untraced_step_ms"], 1900.0);
  EXPECT_EQ(j["traced_step_ms"], 1800.0);
  AddCalibration(db);
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  r = RunAutotune("simulate --db '" + db + "' --run 2 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(nlohmann::json::parse(r.out)["predicts"].get<std::string>().find(
                "the two are pooled: 1849.3 ms"),
            std::string::npos)
      << r.out;  // sqrt(1900 x 1800)
}

// --step-log given once per production run: the median of the runs' medians (1,900, 2,600 and
// 1,950 ms: 1,950), so the run that came out slow as a whole does not set the production step
// time; the output says how many runs it took; a bad one of them fails the import naming it.
TEST(ImportTest, SeveralStepLogsGiveTheMedianOfTheirRuns) {
  TempDir dir;
  const std::string db = dir.File("runs.db");
  const std::string a = dir.File("a.log", "{\"step_ms\": [1950, 1900, 1850]}\n");
  const std::string b = dir.File("b.log", "{\"step_ms\": [2600, 2500, 2700]}\n");
  const std::string c = dir.File("c.log", "{\"step_ms\": [1940, 1950, 1960]}\n");
  const std::string args = "import --db '" + db + "' --horovod-timeline '" +
                           Fixture("mlp_default.json") + "' --nodes 2 --ranks-per-node 2";
  CommandResult r = RunAutotune(args + " --step-log '" + a + "' --step-log '" + b +
                                "' --step-log '" + c + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("production (untraced) step time 1950.0 ms (the median of 3 runs' "
                       "medians)"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(QueryText(db, "SELECT untraced_step_ms FROM runs"), "1950.0");
  const std::string bad = dir.File("bad.log", "no json here\n");
  r = RunAutotune(args + " --again --step-log '" + a + "' --step-log '" + bad + "'");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--step-log " + bad), std::string::npos) << r.err;
  EXPECT_EQ(QueryText(db, "SELECT count(*) FROM runs"), "1");  // the failed import stored none
}

TEST(ImportTest, ALongCycleIsNotedAsReadinessKnownOnlyToTheCycle) {
  // The MLP's steps take about 0.6 s: a 25 ms cycle is over 2% of one, the default 1 ms is
  // not; resnet50's take over 1 s, so 10 ms is under 2% of one.
  TempDir dir;
  const std::string note = "a tensor shows in Horovod's timeline only when a cycle takes it";
  auto import = [&](const std::string& file, const std::string& cycle) {
    return RunAutotune("import --db '" + dir.File("runs.db") + "' --horovod-timeline '" +
                       Fixture(file) + "' --nodes 2 --ranks-per-node 2 --again --cycle-time-ms " +
                       cycle);
  };
  CommandResult r = import("mlp_default.json", "25");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("cycle time 25 ms, "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(note), std::string::npos) << r.out;
  r = import("mlp_default.json", "1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find(note), std::string::npos) << r.out;
  r = import("resnet50_f4_c10.json", "10");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find(note), std::string::npos) << r.out;
  r = RunAutotune(ImportArgs(dir.File("runs.db"), Fixture("mlp_default.json")) +
                  " --again --cycle-time-ms 25");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["readiness_resolution_ms"], 25.0);
}

TEST(ImportTest, MalformedFileChangesNothing) {
  TempDir dir;
  std::string text = ReadFile(Fixture("resnet50_f4_c10.json"));
  // One event's timestamp in the middle of the file quoted: "ts": "123".
  const size_t ts = text.find("\"ts\": ", text.size() / 2);
  ASSERT_NE(ts, std::string::npos);
  text.insert(text.find(',', ts), "\"");
  text.insert(ts + 6, "\"");
  const std::string bad = dir.File("bad.json", text);
  const std::string fresh = dir.path() + "/fresh.db";
  CommandResult r = RunAutotune(ImportArgs(fresh, bad));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(LineCount(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(bad + ": event "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("\"ts\" is not a number"), std::string::npos) << r.err;
  EXPECT_TRUE(ReadFile(fresh).empty()) << "a database was created";
  EXPECT_NE(access(fresh.c_str(), F_OK), 0);
  // An existing database stays byte for byte.
  const std::string db = dir.File("runs.db");
  ASSERT_EQ(RunAutotune(ImportArgs(db, Fixture("resnet50_default.json"))).exit_code, 0);
  const std::string before = ReadFile(db);
  r = RunAutotune(ImportArgs(db, bad));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(ReadFile(db), before);
  r = RunAutotune(ImportArgs(db, dir.path() + "/missing.json"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("cannot read timeline " + dir.path() + "/missing.json: No such file"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(ReadFile(db), before);
}

TEST(ImportTest, SimulateSearchAndCompareUseImportedRuns) {
  TempDir dir;
  const std::string db = dir.File("runs.db");
  for (const char* file : {"resnet50_default.json", "resnet50_f4_c10.json"}) {
    const std::string knobs = std::string(file) == "resnet50_default.json"
                                  ? ""
                                  : " --fusion-threshold-mb 4 --cycle-time-ms 10";
    const CommandResult r =
        RunAutotune(ImportArgs(db, Fixture(file)) + " --workload resnet50-real" + knobs);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  AddCalibration(db);
  CommandResult r = RunAutotune("simulate --db '" + db + "' --run 1 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  const double predicted = j["step_ms_median"].get<double>();
  const double recorded = j["recorded_step_ms_median"].get<double>();
  EXPECT_GT(predicted, 0.25 * recorded);  // a sanity bound: accuracy is bench/horovod's
  EXPECT_LT(predicted, 4.0 * recorded);
  // The replay's fitted scales as trace_calibration.h bounds them.
  EXPECT_GE(j["comm_scale"].get<double>(), 0.5);
  EXPECT_LE(j["comm_scale"].get<double>(), 2.0);
  EXPECT_GE(j["comm_contention"].get<double>(), 1.0);
  EXPECT_LE(j["comm_contention"].get<double>(), 4.0);
  // search blends both imported runs' measured samples (same workload, topology, scale).
  r = RunAutotune("search --db '" + db + "' --run 1 --sim-budget 10 --propose 1 --json --out '" +
                  dir.path() + "/best.yaml'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["measured_samples"], 2);
  r = RunAutotune("compare --db '" + db + "' 1 2 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

// A Horovod autotune log written by hand in Horovod 0.28.1's layout (parameter_manager.cc:
// header, rows "ha,hg,torus, cache,cycle_ms,threshold_mb,score" with the score in bytes/us,
// and a final best row repeating the best score).
constexpr const char* kHorovodLog =
    "hierarchical_allreduce,hierarchical_allgather,torus_allreduce,cache_enabled,cycle_time_ms,"
    "tensor_fusion_threshold,score\n"
    "0,0,0, 1,5,4,310.5\n"
    "0,0,0, 1,50,32,402.25\n"
    "0,0,0, 0,25,16,377\n"
    "0,0,0, 1,50,32,402.25\n";

// Its rows become measured samples of the job's imported run: same workload, topology, scale
// and backend, so that `search --run 1` counts them; they are held by a run of their own, so
// the timeline's run keeps its one sample (and its steps). A second import of the same log is
// the same measurement; --again stores it once more.
TEST(ImportTest, HorovodAutotuneLogRowsBecomeMeasuredSamplesOfTheJob) {
  TempDir dir;
  const std::string db = dir.File("runs.db");
  ASSERT_EQ(RunAutotune(ImportArgs(db, Fixture("resnet50_default.json"))).exit_code, 0);
  const std::string log = dir.File("autotune_log.csv");
  WriteFile(log, kHorovodLog);
  const std::string args = "import --db '" + db + "' --horovod-autotune-log '" + log + "' --run 1";
  CommandResult r = RunAutotune(args + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["run"], 2);
  EXPECT_EQ(j["job_run"], 1);
  EXPECT_EQ(j["samples"], 3);
  EXPECT_EQ(j["best"]["line"], 5);
  EXPECT_EQ(j["best"]["knobs"]["fusion_threshold_mb"], 32.0);
  EXPECT_EQ(j["reused"], false);

  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(db, Store::Mode::kReadOnly, &store).ok());
  RunInfo job, holder;
  ASSERT_TRUE(store->GetRun(1, &job).ok());
  ASSERT_TRUE(store->GetRun(2, &holder).ok());
  EXPECT_EQ(holder.kind, RunKind::kImported);
  EXPECT_FALSE(holder.complete);
  EXPECT_EQ(holder.steps_recorded, 0);
  EXPECT_NE(holder.end_reason.find("Horovod's autotune log"), std::string::npos);
  SampleQuery query;  // what search's LoadStoredSamples asks for run 1
  query.workload = job.workload.name;
  query.topology = job.topology;
  query.fidelity = Fidelity::kMeasured;
  query.scale = job.scale;
  query.backend = job.backend;
  std::vector<Sample> samples;
  ASSERT_TRUE(store->ListSamples(query, &samples).ok());
  ASSERT_EQ(samples.size(), 4u);  // the timeline's and the log's 3
  EXPECT_EQ(samples[0].run_id, 1);
  const double bytes_per_step = 25557032.0 * 4;  // resnet50's float32 gradients
  const double scores[] = {310.5e6, 402.25e6, 377e6};
  for (int i = 0; i < 3; ++i) {
    const Sample& s = samples[i + 1];
    EXPECT_EQ(s.run_id, 2);
    EXPECT_EQ(s.trace_run_id, 1);
    EXPECT_DOUBLE_EQ(s.score_bytes_per_s, scores[i]);
    EXPECT_NEAR(s.step_ms, 1e3 * bytes_per_step / scores[i], 1e-6 * s.step_ms);
  }
  EXPECT_EQ(samples[1].knobs.cycle_time_ms, 5.0);
  EXPECT_EQ(samples[1].knobs.fusion_threshold_mb, 4.0);
  EXPECT_EQ(samples[1].knobs.cache_capacity, job.knobs.cache_capacity);
  EXPECT_EQ(samples[3].knobs.cache_capacity, 0);
  EXPECT_EQ(samples[3].knobs.cycle_time_ms, 25.0);
  store.reset();

  r = RunAutotune(args + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["reused"], true);
  EXPECT_EQ(nlohmann::json::parse(r.out)["run"], 2);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM samples"), 4);
  r = RunAutotune(args + " --again");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("imported 3 rows of Horovod's autotune log"), std::string::npos) << r.out;
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM samples WHERE run_id = 3"), 3);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM samples WHERE run_id = 1"), 1);
  // search from the job's run counts them; runs and report show the run that holds them.
  AddCalibration(db);
  r = RunAutotune("search --db '" + db + "' --run 1 --sim-budget 10 --propose 1 --json --out '" +
                  dir.path() + "/best.yaml'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["measured_samples"], 7);
  r = RunAutotune("runs --db '" + db + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("run 2 ended: holds the 3 measured samples of Horovod's autotune log"),
            std::string::npos)
      << r.out;
  r = RunAutotune("report --db '" + db + "' --out '" + dir.path() + "/report.html'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

// A malformed log, a missing --run, a run that is not the job's: one line, exit 1, the
// database byte for byte as it was.
TEST(ImportTest, BadHorovodAutotuneLogLeavesTheDatabaseAsItWas) {
  TempDir dir;
  const std::string db = dir.File("runs.db");
  ASSERT_EQ(RunAutotune(ImportArgs(db, Fixture("resnet50_default.json"))).exit_code, 0);
  const std::string before = ReadFile(db);
  const std::string log = dir.File("autotune_log.csv");
  WriteFile(log, std::string(kHorovodLog) + "0,0,0, 1,5,x,300\n");
  const std::string args = "import --db '" + db + "' --horovod-autotune-log '" + log + "'";
  struct Case {
    std::string extra, phrase;
  };
  for (const Case& c : {Case{" --run 1", log + " line 6: tensor_fusion_threshold \"x\" is not a "
                                               "number"},
                        Case{"", "--horovod-autotune-log needs --run N"},
                        Case{" --run 7", "run 7"}}) {
    const CommandResult r = RunAutotune(args + c.extra);
    EXPECT_EQ(r.exit_code, 1) << c.extra;
    EXPECT_EQ(LineCount(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(c.phrase), std::string::npos) << r.err;
    EXPECT_EQ(ReadFile(db), before) << c.extra;
  }
}

}  // namespace
}  // namespace autotune::testing
