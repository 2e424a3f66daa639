// runs / compare / workloads on a database written through the store.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "store/store.h"
#include "tests/support/cli.h"

namespace autotune::testing {
namespace {

int64_t AddRun(Store& store, double cycle_ms, const std::vector<double>& step_ms) {
  RunInfo run;
  EXPECT_TRUE(BuiltinWorkload("resnet50", &run.workload).ok());
  run.knobs.cycle_time_ms = cycle_ms;
  run.steps_planned = static_cast<int>(step_ms.size());
  EXPECT_TRUE(store.CreateRun(&run).ok());
  for (size_t i = 0; i < step_ms.size(); ++i) {
    StepTrace step;
    step.step = static_cast<int>(i);
    step.step_ms = step_ms[i];
    step.bytes = 1000000;
    step.score_bytes_per_s = step.bytes / (step_ms[i] / 1000);
    EXPECT_TRUE(store.AppendStep(run.id, step).ok());
  }
  EXPECT_TRUE(store.FinishRun(run.id, true).ok());
  return run.id;
}

class CompareTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = dir_.File("c.db");
    std::unique_ptr<Store> store;
    ASSERT_TRUE(Store::Open(db_, Store::Mode::kReadWrite, &store).ok());
    std::vector<double> slow, fast, slow_again;
    for (int i = 0; i < 25; ++i) {
      slow.push_back(100 + (i % 7));
      fast.push_back(80 + (i % 5));
      slow_again.push_back(100 + ((i * 3) % 7));
    }
    slow_ = AddRun(*store, 1, slow);
    fast_ = AddRun(*store, 5, fast);
    slow_again_ = AddRun(*store, 1, slow_again);
  }
  TempDir dir_;
  std::string db_;
  int64_t slow_ = 0, fast_ = 0, slow_again_ = 0;
};

TEST_F(CompareTest, ReportsSignificantSpeedupAndKnobDifference) {
  CommandResult r = RunAutotune("compare --json --db " + db_ + " " + std::to_string(slow_) + " " +
                                std::to_string(fast_));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_NEAR(j["speedup"].get<double>(), 103.0 / 82.0, 1e-9);
  EXPECT_TRUE(j["significant"].get<bool>());
  EXPECT_GT(j["speedup_ci"][0].get<double>(), 1.0);
  EXPECT_TRUE(j["knob_differences"].contains("cycle_time_ms"));
  EXPECT_FALSE(j["knob_differences"].contains("fusion_threshold_mb"));
  EXPECT_NE(j["verdict"].get<std::string>().find("B is faster"), std::string::npos);
}

TEST_F(CompareTest, SameDistributionIsWithinNoise) {
  CommandResult r = RunAutotune("compare --db " + db_ + " " + std::to_string(slow_) + " " +
                                std::to_string(slow_again_));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("verdict: within noise"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("knobs"), std::string::npos);
}

TEST_F(CompareTest, RunsListsEveryRun) {
  CommandResult r = RunAutotune("runs --json --db " + db_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 3u);
  EXPECT_EQ(j[1]["run"], fast_);
  EXPECT_EQ(j[1]["workload"], "resnet50");
  EXPECT_TRUE(j[1]["complete"].get<bool>());
  EXPECT_DOUBLE_EQ(j[1]["step_ms_median"].get<double>(), 82.0);
}

TEST(WorkloadsCommand, PrintsAFileThatParsesBack) {
  CommandResult r = RunAutotune("workloads vgg16");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Workload w;
  ASSERT_TRUE(ParseWorkloadJson(r.out, "stdout", &w).ok());
  EXPECT_EQ(w.tensors.size(), 32u);
  EXPECT_EQ(w.total_elements(), 138357544);
  CommandResult list = RunAutotune("workloads");
  ASSERT_EQ(list.exit_code, 0);
  EXPECT_NE(list.out.find("resnet50"), std::string::npos);
  EXPECT_NE(list.out.find("25557032"), std::string::npos);
}

}  // namespace
}  // namespace autotune::testing
