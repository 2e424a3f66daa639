// Bad input to the simulator library: a run without trace rows, corrupt rows, trace and
// calibration of different topologies. Each gives one line naming what is at fault.
#include <gtest/gtest.h>

#include <cmath>

#include "simulator/prepared_trace.h"
#include "simulator/simulation.h"
#include "tests/support/sim_fixtures.h"
#include "tests/support/synthetic.h"

namespace autotune::sim {
namespace {

using testing::MakeTrace;
using testing::MakeWorkload;
using testing::PlainKnobs;
using testing::Topo;

Trace GoodTrace() {
  return MakeTrace(MakeWorkload({4000, 8000}, {0.5, 1.0}, 1.0, 2.0, 1.0), Topo(1, 2),
                   PlainKnobs(1, 1), 3000.0, 5.0, 2);
}

void ExpectPrepareFails(const Trace& trace, Status::Code code, const std::string& needle) {
  PreparedTrace out;
  const Status st = PreparedTrace::Prepare(trace, &out);
  EXPECT_EQ(st.code(), code) << st.message();
  EXPECT_NE(st.message().find(needle), std::string::npos) << st.message();
  EXPECT_EQ(st.message().find('\n'), std::string::npos) << "one line";
}

TEST(PreparedTraceTest, AcceptsAGoodTrace) {
  PreparedTrace p;
  ASSERT_TRUE(PreparedTrace::Prepare(GoodTrace(), &p).ok());
  ASSERT_EQ(p.steps().size(), 2u);
  EXPECT_DOUBLE_EQ(p.steps()[0].ready_us[1], 2000.0);
  EXPECT_DOUBLE_EQ(p.steps()[0].compute_end_us, 3000.0);
  EXPECT_DOUBLE_EQ(p.steps()[0].tail_us, 2000.0);
  EXPECT_EQ(p.steps()[0].ready_order, (std::vector<int>{0, 1}));
}

TEST(PreparedTraceTest, RunWithoutTraceRows) {
  Trace t = GoodTrace();
  t.steps.clear();
  ExpectPrepareFails(t, Status::Code::kInvalidArgument, "run 7 has no recorded steps");
  t = GoodTrace();
  t.steps[1].tensors.clear();
  ExpectPrepareFails(t, Status::Code::kInvalidArgument, "run 7 step 1 has no tensor rows");
}

TEST(PreparedTraceTest, CorruptRows) {
  Trace t = GoodTrace();
  t.steps[0].tensors[2].tensor = 5;
  ExpectPrepareFails(t, Status::Code::kCorruption, "tensor row 2: tensor index 5");
  t = GoodTrace();
  t.steps[0].tensors[1].rank = 3;
  ExpectPrepareFails(t, Status::Code::kCorruption, "rank 3 outside 1x2");
  t = GoodTrace();
  t.steps[1].tensors[0].ready_us = std::nan("");
  ExpectPrepareFails(t, Status::Code::kCorruption, "run 7 step 1 tensor row 0");
  t = GoodTrace();
  t.steps[0].tensors.erase(t.steps[0].tensors.begin() + 1);  // rank 0's tensor 1
  t.steps[0].tensors.erase(t.steps[0].tensors.begin() + 2);  // rank 1's tensor 1
  ExpectPrepareFails(t, Status::Code::kCorruption, "tensor 1 (\"t1\") has no ready time");
  t = GoodTrace();
  t.steps[0].step_ms = 0.0;
  ExpectPrepareFails(t, Status::Code::kCorruption, "step_ms");
  t = GoodTrace();
  CollectiveRecord c;
  c.tensors = {0, 9};
  t.steps[1].collectives.push_back(c);
  ExpectPrepareFails(t, Status::Code::kCorruption, "collective row 0");
  t = GoodTrace();
  t.run.workload.tensors.clear();
  ExpectPrepareFails(t, Status::Code::kCorruption, "has no tensors");
}

TEST(SimulationBuildTest, TraceAndCalibrationOfDifferentTopologies) {
  const Calibration cal = SynthesizeCalibration(
      NetworkModel::FromParams(NetworkParams::Uniform(10, 100), Topo(2, 2)), 3);
  Simulation sim;
  const Status st = Simulation::Build(GoodTrace(), cal, std::nullopt, &sim);
  EXPECT_EQ(st.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(st.message().find("run 7 was recorded on 1x2 but calibration 3 is of 2x2"),
            std::string::npos)
      << st.message();
}

TEST(SimulationBuildTest, BackendMismatchAndUnreachableTarget) {
  Calibration cal = SynthesizeCalibration(
      NetworkModel::FromParams(NetworkParams::Uniform(10, 100), Topo(1, 2)), 3);
  Simulation sim;
  cal.backend = BackendKind::kNccl;
  Status st = Simulation::Build(GoodTrace(), cal, std::nullopt, &sim);
  EXPECT_NE(st.message().find("backend mpi"), std::string::npos) << st.message();
  cal.backend = BackendKind::kMpi;
  ASSERT_TRUE(Simulation::Build(GoodTrace(), cal, std::nullopt, &sim).ok());
  st = Simulation::Build(GoodTrace(), cal, Topo(8, 2), &sim);
  EXPECT_EQ(st.code(), Status::Code::kNotSupported) << st.message();
}

}  // namespace
}  // namespace autotune::sim
