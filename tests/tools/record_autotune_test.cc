// `autotune record --autotune` end to end (the binary launching 4 local ranks with --np 4):
// the knobs really change between samples (each sample's fused collectives respect its own
// fusion threshold), constants stay, one stored sample and one CSV row per tuned sample, and
// the best setting is written.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "formats/config_file.h"
#include "formats/horovod_autotune_log.h"
#include "store/store.h"
#include "tests/support/cli.h"

namespace {

namespace fs = std::filesystem;
using autotune::testing::AutotuneBinary;
using autotune::testing::CommandResult;
using autotune::testing::ReadFile;
using autotune::testing::RunCommand;
using autotune::testing::TempDir;

constexpr int kWarmupSamples = 1;
constexpr int kStepsPerSample = 2;
constexpr int kMaxSamples = 5;

class RecordAutotuneTest : public ::testing::Test {
 protected:
  TempDir temp_;
  const fs::path dir_ = temp_.path();
};

// One `record --autotune` run (cycle time held constant, the other runtime knobs tuned), run
// once and shared by the TunedRecordTest tests, with what it stored loaded back.
struct TunedRecord {
  TempDir temp;
  fs::path db = fs::path(temp.path()) / "runs.db";
  fs::path log = fs::path(temp.path()) / "log.csv";
  fs::path best = fs::path(temp.path()) / "best.yaml";
  CommandResult result;
  std::string error;                      // why the run or the loading failed; empty if neither
  nlohmann::json summary;                 // the --json summary on stdout
  autotune::Trace trace;                  // the run's stored trace
  std::vector<autotune::Sample> samples;  // the run's stored samples, in stored order
};

// Runs the command into a fresh directory and loads its summary, trace and samples; on
// failure, *record's error says what failed and the fields after it are left empty.
void RunTunedRecord(TunedRecord* record) {
  record->result = RunCommand({AutotuneBinary(),
                               "record",
                               "--np",
                               "4",
                               "--workload",
                               "resnet50",
                               "--scale",
                               "0.02",
                               "--warmup-steps",
                               "1",
                               "--db",
                               record->db.string(),
                               "--json",
                               "--cycle-time-ms",
                               "2",
                               "--autotune",
                               "--autotune-warmup-samples",
                               std::to_string(kWarmupSamples),
                               "--autotune-steps-per-sample",
                               std::to_string(kStepsPerSample),
                               "--autotune-bayes-opt-max-samples",
                               std::to_string(kMaxSamples),
                               "--autotune-log-file",
                               record->log.string(),
                               "--autotune-out",
                               record->best.string()},
                              record->temp.path());
  if (record->result.exit_code != 0) {
    record->error = "record exited with " + std::to_string(record->result.exit_code) + ": " +
                    record->result.err;
    return;
  }
  record->summary = nlohmann::json::parse(record->result.out, nullptr, false);
  if (record->summary.is_discarded() || !record->summary.contains("run")) {
    record->error = "no JSON summary with a run id: " + record->result.out;
    return;
  }
  const int64_t run_id = record->summary["run"];
  std::unique_ptr<autotune::Store> store;
  autotune::Status s =
      autotune::Store::Open(record->db.string(), autotune::Store::Mode::kReadOnly, &store);
  if (s.ok()) s = store->LoadTrace(run_id, &record->trace);
  std::vector<autotune::Sample> all;
  if (s.ok()) {
    s = store->ListSamples(record->trace.run.workload.name, record->trace.run.topology, &all);
  }
  if (!s.ok()) {
    record->error = s.message();
    return;
  }
  for (const autotune::Sample& sample : all) {
    if (sample.run_id == run_id) record->samples.push_back(sample);
  }
}

class TunedRecordTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    run_ = std::make_unique<TunedRecord>();
    RunTunedRecord(run_.get());
  }
  static void TearDownTestSuite() { run_.reset(); }
  // The shared run; fails the calling test first if the run or its loading failed.
  void SetUp() override { ASSERT_TRUE(run_->error.empty()) << run_->error; }

  // Index in the trace of the first step of tuned sample i (after the warm-up samples).
  static int FirstStepOfSample(size_t i) {
    return (kWarmupSamples + static_cast<int>(i)) * kStepsPerSample;
  }

  static inline std::unique_ptr<TunedRecord> run_;
};

// Every step of every sample is recorded, and there is one measured sample per tuned sample
// (the warm-up one is discarded), none for the run as a whole.
TEST_F(TunedRecordTest, StoresOneMeasuredSamplePerTunedSample) {
  EXPECT_EQ(run_->summary["steps"], (kWarmupSamples + kMaxSamples) * kStepsPerSample);
  EXPECT_EQ(run_->summary["complete"], true);
  ASSERT_EQ(run_->samples.size(), static_cast<size_t>(kMaxSamples));
  for (const autotune::Sample& s : run_->samples) {
    EXPECT_EQ(s.fidelity, autotune::Fidelity::kMeasured);
    EXPECT_GT(s.score_bytes_per_s, 0.0);
  }
}

// The runtime knobs change between samples, starting at the defaults; the constants stay.
TEST_F(TunedRecordTest, TunesRuntimeKnobsBetweenSamplesAndKeepsConstants) {
  ASSERT_EQ(run_->samples.size(), static_cast<size_t>(kMaxSamples));
  std::set<std::string> settings;
  for (const autotune::Sample& s : run_->samples) {
    EXPECT_EQ(s.knobs.cycle_time_ms, 2.0);  // the constant
    EXPECT_EQ(s.knobs.num_groups, 0);
    settings.insert(autotune::KnobsShort(s.knobs));
  }
  EXPECT_GE(settings.size(), 3u);
  // The first tuned sample is the starting setting (defaults + the constant).
  EXPECT_EQ(run_->samples[0].knobs.fusion_threshold_mb, 128.0);
  EXPECT_FALSE(run_->samples[0].knobs.hierarchical_allreduce);
}

// A sample's score is the run's statistic over its own steps: total bytes / total time.
TEST_F(TunedRecordTest, EachSampleScoresItsOwnSteps) {
  ASSERT_EQ(run_->samples.size(), static_cast<size_t>(kMaxSamples));
  ASSERT_GE(run_->trace.steps.size(), static_cast<size_t>(FirstStepOfSample(kMaxSamples)));
  for (size_t i = 0; i < run_->samples.size(); ++i) {
    const int first = FirstStepOfSample(i);
    double bytes = 0.0, seconds = 0.0;
    for (int step = first; step < first + kStepsPerSample; ++step) {
      bytes += static_cast<double>(run_->trace.steps[step].bytes);
      seconds += run_->trace.steps[step].step_ms / 1000.0;
    }
    EXPECT_NEAR(run_->samples[i].score_bytes_per_s, bytes / seconds, 1e-9 * bytes / seconds)
        << "sample " << i;
  }
}

// The engine really ran each sample's knobs: no fused collective above its threshold, and
// hierarchical allreduces exactly when asked for.
TEST_F(TunedRecordTest, EachSampleRanItsOwnKnobs) {
  ASSERT_EQ(run_->samples.size(), static_cast<size_t>(kMaxSamples));
  ASSERT_GE(run_->trace.steps.size(), static_cast<size_t>(FirstStepOfSample(kMaxSamples)));
  for (size_t i = 0; i < run_->samples.size(); ++i) {
    const autotune::Knobs& knobs = run_->samples[i].knobs;
    const int first = FirstStepOfSample(i);
    for (int step = first; step < first + kStepsPerSample; ++step) {
      for (const autotune::CollectiveRecord& c : run_->trace.steps[step].collectives) {
        if (c.tensors.size() > 1) {
          EXPECT_LE(c.bytes, knobs.threshold_bytes()) << "sample " << i << " step " << step;
        }
        if (c.op == autotune::Op::kAllreduce) {
          EXPECT_EQ(c.algorithm != autotune::Algorithm::kFlat, knobs.hierarchical_allreduce)
              << "sample " << i << " step " << step;
        }
      }
    }
  }
}

// The CSV log: Horovod's columns first, one row per tuned sample, then the best row (the setting
// written to --autotune-out, fidelity "best").
TEST_F(TunedRecordTest, LogsOneCsvRowPerTunedSample) {
  std::istringstream csv(ReadFile(run_->log));
  std::string header, line;
  std::getline(csv, header);
  EXPECT_EQ(header.rfind("hierarchical_allreduce,hierarchical_allgather,torus_allreduce,"
                         "cache_enabled,cycle_time_ms,tensor_fusion_threshold,score,",
                         0),
            0u)
      << header;
  int rows = 0;
  std::string last;
  while (std::getline(csv, line)) {
    if (line.empty()) continue;
    ++rows;
    last = line;
  }
  EXPECT_EQ(rows, kMaxSamples + 1);
  autotune::HorovodLog log;
  ASSERT_TRUE(autotune::ReadHorovodAutotuneLog(run_->log.string(), autotune::Knobs{}, &log).ok());
  EXPECT_EQ(log.samples.size(), static_cast<size_t>(kMaxSamples));
  ASSERT_TRUE(log.best.has_value()) << last;
  autotune::ConfigFile config;
  ASSERT_TRUE(autotune::LoadConfigFile(run_->best.string(), &config).ok());
  // The log holds 6 significant digits, as Horovod's stream writes them.
  EXPECT_NEAR(log.best->knobs.fusion_threshold_mb, config.knobs.fusion_threshold_mb,
              1e-5 * config.knobs.fusion_threshold_mb)
      << last;
  EXPECT_NEAR(log.best->knobs.cycle_time_ms, config.knobs.cycle_time_ms,
              1e-5 * config.knobs.cycle_time_ms)
      << last;
}

// The best setting is written (with the constant) and announced; without a calibration in the
// database there is no simulator prior, and the run says so.
TEST_F(TunedRecordTest, WritesTheBestSettingWithoutASimulatorPrior) {
  autotune::ConfigFile config;
  ASSERT_TRUE(autotune::LoadConfigFile(run_->best.string(), &config).ok());
  EXPECT_EQ(config.knobs.cycle_time_ms, 2.0);
  const std::string& err = run_->result.err;
  EXPECT_NE(err.find("autotune: best of 5 samples"), std::string::npos) << err;
  EXPECT_NE(err.find("no simulator prior (no calibration for topology"), std::string::npos) << err;
  // The job-shaped space is said as `search` says it: the fusion threshold searched in the job's
  // range.
  EXPECT_NE(err.find("record --autotune: note: fusion_threshold_mb searched in "),
            std::string::npos)
      << err;
  // The one rule decides what is written: the default (with the constant) unless it shows
  // the candidate faster, and the line says which.
  EXPECT_TRUE(err.find("autotune: candidate ") != std::string::npos ||
              err.find("autotune: the candidate is the default (") != std::string::npos)
      << err;
  autotune::Knobs start;
  start.cycle_time_ms = 2.0;
  if (err.find(" beats the default: yes") == std::string::npos) {
    EXPECT_EQ(config.knobs, start) << err;
  }
  // The decision is stored with the run, as search's are.
  std::unique_ptr<autotune::Store> store;
  ASSERT_TRUE(
      autotune::Store::Open(run_->db.string(), autotune::Store::Mode::kReadOnly, &store).ok());
  autotune::StoredDecision decision;
  ASSERT_TRUE(store->LatestDecision(run_->trace.run.id, &decision).ok());
  EXPECT_EQ(decision.command, "record --autotune");
  EXPECT_EQ(decision.chosen, config.knobs);
  EXPECT_EQ(decision.default_knobs, start);
  EXPECT_EQ(decision.verdict == "beats_default",
            err.find(" beats the default: yes") != std::string::npos);
  for (const autotune::DecisionRun& r : decision.runs) {
    EXPECT_EQ(r.run_id, run_->trace.run.id);
    EXPECT_EQ(r.steps, kStepsPerSample);
  }
}

// With a calibration of the topology in the database, the simulator replays the run's own
// trace after the first observed sample: --autotune-sim-budget simulated settings (plus the
// starting one) join the tuner as its prior, logged as such; only measured samples are stored.
TEST_F(RecordAutotuneTest, SimulatorIsThePriorWhenACalibrationExists) {
  const fs::path db = dir_ / "runs.db", log = dir_ / "log.csv";
  CommandResult cal = RunCommand({AutotuneBinary(), "calibrate", "--np", "4", "--db", db.string(),
                                  "--repetitions", "3", "--max-bytes", "4194304"},
                                 dir_);
  ASSERT_EQ(cal.exit_code, 0) << cal.err;
  constexpr int kSimBudget = 12;
  CommandResult r = RunCommand({AutotuneBinary(),
                                "record",
                                "--np",
                                "4",
                                "--workload",
                                "resnet50",
                                "--scale",
                                "0.02",
                                "--warmup-steps",
                                "1",
                                "--db",
                                db.string(),
                                "--json",
                                "--autotune",
                                "--autotune-warmup-samples",
                                "0",
                                "--autotune-steps-per-sample",
                                "2",
                                "--autotune-bayes-opt-max-samples",
                                "3",
                                "--autotune-sim-budget",
                                std::to_string(kSimBudget),
                                "--autotune-log-file",
                                log.string()},
                               dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("simulator prior: " + std::to_string(kSimBudget + 1) +
                       " settings simulated on this run's 2 steps"),
            std::string::npos)
      << r.err;
  // The measured samples in the log, the simulated ones in log.csv.simulated.csv.
  const auto count_rows = [](const fs::path& file, const std::string& fidelity) {
    std::istringstream csv(ReadFile(file));
    std::string line;
    std::getline(csv, line);  // header
    int rows = 0;
    while (std::getline(csv, line)) {
      EXPECT_NE(line.find("," + fidelity + ","), std::string::npos) << file << ": " << line;
      rows += line.empty() ? 0 : 1;
    }
    return rows;
  };
  EXPECT_EQ(count_rows(fs::path(log.string() + ".simulated.csv"), "simulated"), kSimBudget + 1);
  // The measured log: the 3 samples, then the decision as Horovod's final best row (fidelity
  // "best"), scored by the mean of the samples of its setting.
  autotune::HorovodLog hvd_log;
  ASSERT_TRUE(autotune::ReadHorovodAutotuneLog(log.string(), autotune::Knobs{}, &hvd_log).ok());
  ASSERT_EQ(hvd_log.samples.size(), 3u);
  ASSERT_TRUE(hvd_log.best.has_value());
  double sum = 0.0;
  int same = 0;
  for (const autotune::HorovodLogEntry& e : hvd_log.samples) {
    if (e.knobs.fusion_threshold_mb == hvd_log.best->knobs.fusion_threshold_mb &&
        e.knobs.cycle_time_ms == hvd_log.best->knobs.cycle_time_ms &&
        e.knobs.cache_capacity == hvd_log.best->knobs.cache_capacity) {
      sum += e.score_bytes_per_s;
      ++same;
    }
  }
  ASSERT_GT(same, 0) << ReadFile(log);
  // Each score is written with 6 significant digits: the mean of rounded ones within 3e-5.
  EXPECT_NEAR(hvd_log.best->score_bytes_per_s, sum / same, 3e-5 * sum / same) << ReadFile(log);
  {
    std::istringstream csv(ReadFile(log));
    std::string line, last;
    while (std::getline(csv, line)) {
      if (!line.empty()) last = line;
    }
    EXPECT_NE(last.find(",best,"), std::string::npos) << last;
  }
  const nlohmann::json j = nlohmann::json::parse(r.out);
  std::unique_ptr<autotune::Store> store;
  ASSERT_TRUE(autotune::Store::Open(db.string(), autotune::Store::Mode::kReadOnly, &store).ok());
  autotune::RunInfo run;
  ASSERT_TRUE(store->GetRun(j["run"].get<int64_t>(), &run).ok());
  std::vector<autotune::Sample> all;
  ASSERT_TRUE(store->ListSamples("resnet50", run.topology, &all).ok());
  int stored = 0;
  for (const autotune::Sample& s : all) {
    if (s.run_id != run.id) continue;
    EXPECT_EQ(s.fidelity, autotune::Fidelity::kMeasured);
    ++stored;
  }
  EXPECT_EQ(stored, 3);
}

// Bagua's time-based flags: the probe sample's step time maps them to sample counts.
TEST_F(RecordAutotuneTest, TimeBasedFlagsBecomeSampleCounts) {
  CommandResult r = RunCommand({AutotuneBinary(),
                                "record",
                                "--np",
                                "4",
                                "--workload",
                                "resnet50",
                                "--scale",
                                "0.02",
                                "--warmup-steps",
                                "1",
                                "--db",
                                (dir_ / "runs.db").string(),
                                "--json",
                                "--autotune",
                                "--autotune-steps-per-sample",
                                "2",
                                "--autotune-sampling-confidence-time-s",
                                "0.02",
                                "--autotune-warmup-time-s",
                                "0",
                                "--autotune-max-samples",
                                "2"},
                               dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string::size_type at = r.err.find("ms -> ");
  ASSERT_NE(at, std::string::npos) << r.err;
  const int steps_per_sample = std::stoi(r.err.substr(at + 6));
  EXPECT_GE(steps_per_sample, 1);
  EXPECT_NE(r.err.find(" 0 warm-up samples after this probe"), std::string::npos) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["steps"], 2 + 2 * steps_per_sample);  // the probe, then 2 tuned samples
  EXPECT_NE(r.err.find("autotune: best of 2 samples"), std::string::npos) << r.err;
}

TEST_F(RecordAutotuneTest, EveryRuntimeKnobConstantIsRefusedBeforeLaunch) {
  CommandResult r = RunCommand(
      {AutotuneBinary(), "record", "--np", "4", "--db", (dir_ / "runs.db").string(), "--autotune",
       "--fusion-threshold-mb", "8", "--cycle-time-ms", "2", "--cache-capacity", "0",
       "--no-hierarchical-allreduce", "--no-hierarchical-allgather"},
      dir_);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("nothing to tune"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "runs.db"));
}

}  // namespace
