// The simulated score is the statistic a measured run is scored by: total bytes / total
// time over the steps, not the median of per-step ratios. Steps of unequal length tell the
// two apart.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "simulator/simulation.h"
#include "store/store.h"
#include "tests/support/sim_fixtures.h"

namespace autotune::sim {
namespace {

using testing::MakeSimulation;
using testing::MakeTrace;
using testing::MakeWorkload;
using testing::PlainKnobs;
using testing::Topo;

// One tensor of 1e6 bytes ready 2.3 ms into the backward pass, all done at 9 ms; steps 0 and
// 1 end at 10 ms (1 ms tail), step 2 at 40 ms (31 ms tail). Under a 1 ms cycle and a network
// of 5 us per step and 200 B/us, 2 ranks (see ReplayExactTest): the tensor waits for the 3 ms
// cycle, then 10 us latency + 5000 us transfer, then the tail.
constexpr double kTensorBytes = 1e6;
constexpr double kShortStepUs = 3000.0 + 10.0 + 5000.0 + 1000.0;
constexpr double kLongStepUs = 3000.0 + 10.0 + 5000.0 + 31000.0;

Simulation UnequalStepsSimulation(Trace* trace) {
  const Knobs knobs = PlainKnobs(0.0, 1.0);
  *trace = MakeTrace(MakeWorkload({static_cast<int64_t>(kTensorBytes)}, {2.3}, 0.0, 2.5, 1.0),
                     Topo(1, 2), knobs, 9000.0, 10.0, /*steps=*/3);
  trace->steps[2].step_ms = 40.0;
  NetworkParams params = NetworkParams::Uniform(5.0, 200.0);
  params.copy = {0.0, 1e12};
  return MakeSimulation(*trace, NetworkModel::FromParams(params, Topo(1, 2)));
}

TEST(SimulationScoreTest, IsTotalBytesOverTotalTimeOfTheSteps) {
  Trace trace;
  const Simulation sim = UnequalStepsSimulation(&trace);
  std::vector<StepTrace> timeline;
  const SettingResult r = sim.Evaluate(PlainKnobs(0.0, 1.0), &timeline);
  ASSERT_EQ(r.step_ms.size(), 3u);
  EXPECT_NEAR(r.step_ms[0] * 1000.0, kShortStepUs, 1e-3);
  EXPECT_NEAR(r.step_ms[2] * 1000.0, kLongStepUs, 1e-3);

  const double total_seconds = (2 * kShortStepUs + kLongStepUs) * 1e-6;
  const double expected = 3 * kTensorBytes / total_seconds;
  EXPECT_NEAR(r.score_bytes_per_s, expected, expected * 1e-9);
  // The median of per-step ratios (the short steps' ratio) is far from it.
  EXPECT_GT(kTensorBytes / (kShortStepUs * 1e-6), 1.5 * expected);
}

TEST(SimulationScoreTest, EqualsTheStoredRunScoreOfItsTimeline) {
  Trace trace;
  const Simulation sim = UnequalStepsSimulation(&trace);
  std::vector<StepTrace> timeline;
  const SettingResult r = sim.Evaluate(PlainKnobs(0.0, 1.0), &timeline);

  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("autotune_simulation_score_test_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  {
    std::unique_ptr<Store> store;
    ASSERT_TRUE(Store::Open((dir / "t.db").string(), Store::Mode::kReadWrite, &store).ok());
    RunInfo run = trace.run;
    run.kind = RunKind::kSimulated;
    run.steps_planned = static_cast<int>(timeline.size());
    ASSERT_TRUE(store->CreateRun(&run).ok());
    for (const StepTrace& step : timeline) ASSERT_TRUE(store->AppendStep(run.id, step).ok());
    RunInfo summary;
    const Status st = store->FinishRun(run.id, true, &summary);
    ASSERT_TRUE(st.ok()) << st.message();
    EXPECT_DOUBLE_EQ(summary.score_bytes_per_s, r.score_bytes_per_s);
    EXPECT_DOUBLE_EQ(summary.step_ms_median, r.step_ms_median);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace autotune::sim
