// WorkloadFromTrace on hand-built traces whose workload is known by construction.
#include "traces/workload_from_trace.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace autotune {
namespace {

// A run of `ranks` ranks on one node and tensors a, b, c of 4, 8 and 16 float32 elements.
Trace EmptyTrace(int ranks) {
  Trace trace;
  trace.run.id = 7;
  trace.run.topology.nodes = 1;
  trace.run.topology.ranks_per_node = ranks;
  trace.run.workload.name = "toy";
  trace.run.workload.forward_ms = 99.0;  // the source's own phases: must not leak through
  trace.run.workload.backward_ms = 99.0;
  trace.run.workload.optimizer_ms = 99.0;
  const std::vector<std::string> names = {"a", "b", "c"};
  for (int t = 0; t < 3; ++t) {
    TensorSpec spec;
    spec.name = names[t];
    spec.shape = {int64_t{4} << t};
    spec.op = t == 2 ? Op::kAllgather : Op::kAllreduce;
    spec.dtype = t == 1 ? DType::kFloat64 : DType::kFloat32;
    spec.ready_ms = 50.0 + t;
    trace.run.workload.tensors.push_back(spec);
  }
  return trace;
}

// One step: ready_ms[r][t] per rank and tensor, one collective ending at end_ms, step_ms.
StepTrace Step(int index, const std::vector<std::vector<double>>& ready_ms, double end_ms,
               double step_ms) {
  StepTrace step;
  step.step = index;
  step.step_ms = step_ms;
  for (int r = 0; r < static_cast<int>(ready_ms.size()); ++r) {
    for (int t = 0; t < static_cast<int>(ready_ms[r].size()); ++t) {
      step.tensors.push_back(TensorEvent{r, t, ready_ms[r][t] * 1000.0, end_ms * 1000.0 - 1.0});
    }
  }
  CollectiveRecord c;
  c.tensors = {0, 1, 2};
  c.end_us = end_ms * 1000.0;
  step.collectives.push_back(c);
  return step;
}

TEST(WorkloadFromTraceTest, MediansOfTheSlowestRanksReadinessAndTheTail) {
  // Rank 1 is the slowest, rank 0 readies everything 1.5 ms before it. Per step, rank 1's
  // first gradient at b = 10, 12, 11 ms; the second 2, 3, 1.5 ms after it; the third 5 ms
  // after it; the last collective ends at b + 8 and the step 3, 1, 2 ms later.
  Trace trace = EmptyTrace(2);
  const double first[] = {10.0, 12.0, 11.0}, second[] = {2.0, 3.0, 1.5}, tail[] = {3.0, 1.0, 2.0};
  for (int s = 0; s < 3; ++s) {
    const double b = first[s];
    const std::vector<double> slow = {b, b + second[s], b + 5.0};
    const std::vector<double> fast = {slow[0] - 1.5, slow[1] - 1.5, slow[2] - 1.5};
    trace.steps.push_back(Step(s, {fast, slow}, b + 8.0, b + 8.0 + tail[s]));
  }
  TraceWorkload out;
  ASSERT_TRUE(WorkloadFromTrace(trace, &out).ok());
  const Workload& w = out.workload;
  EXPECT_EQ(w.name, "toy");
  EXPECT_DOUBLE_EQ(w.forward_ms, 11.0);
  ASSERT_EQ(w.tensors.size(), 3u);
  EXPECT_DOUBLE_EQ(w.tensors[0].ready_ms, 0.0);
  EXPECT_DOUBLE_EQ(w.tensors[1].ready_ms, 2.0);
  EXPECT_DOUBLE_EQ(w.tensors[2].ready_ms, 5.0);
  EXPECT_DOUBLE_EQ(w.backward_ms, 5.0);
  EXPECT_DOUBLE_EQ(w.optimizer_ms, 2.0);
  for (int t = 0; t < 3; ++t) {
    EXPECT_EQ(w.tensors[t].name, trace.run.workload.tensors[t].name);
    EXPECT_EQ(w.tensors[t].shape, trace.run.workload.tensors[t].shape);
    EXPECT_EQ(w.tensors[t].op, trace.run.workload.tensors[t].op);
    EXPECT_EQ(w.tensors[t].dtype, trace.run.workload.tensors[t].dtype);
  }
  ASSERT_EQ(out.rank_lead_ms.size(), 2u);
  EXPECT_DOUBLE_EQ(out.rank_lead_ms[0], 1.5);
  EXPECT_DOUBLE_EQ(out.rank_lead_ms[1], 0.0);
}

TEST(WorkloadFromTraceTest, ReadyTimesOutOfTensorOrderAreHeldNonDecreasing) {
  // One rank; b is ready 1 ms before a, c 3 ms after b.
  Trace trace = EmptyTrace(1);
  trace.steps.push_back(Step(0, {{4.0, 3.0, 6.0}}, 9.0, 9.0));
  TraceWorkload out;
  ASSERT_TRUE(WorkloadFromTrace(trace, &out).ok());
  EXPECT_DOUBLE_EQ(out.workload.forward_ms, 3.0);
  EXPECT_DOUBLE_EQ(out.workload.tensors[0].ready_ms, 1.0);
  EXPECT_DOUBLE_EQ(out.workload.tensors[1].ready_ms, 1.0);
  EXPECT_DOUBLE_EQ(out.workload.tensors[2].ready_ms, 3.0);
  EXPECT_DOUBLE_EQ(out.workload.backward_ms, 3.0);
}

TEST(WorkloadFromTraceTest, AStepEndingAtItsLastCollectiveHasNoOptimizerTail) {
  // As an imported run: the step ends when its last collective does; without collectives
  // the latest done time stands in for it.
  Trace trace = EmptyTrace(1);
  trace.steps.push_back(Step(0, {{20.0, 21.0, 22.0}}, 30.0, 30.0));
  StepTrace bare = Step(1, {{20.0, 21.0, 22.0}}, 30.0, 30.0 - 0.001);
  bare.collectives.clear();
  trace.steps.push_back(bare);
  TraceWorkload out;
  ASSERT_TRUE(WorkloadFromTrace(trace, &out).ok());
  EXPECT_DOUBLE_EQ(out.workload.optimizer_ms, 0.0);
  EXPECT_DOUBLE_EQ(out.workload.forward_ms, 20.0);
  EXPECT_DOUBLE_EQ(out.workload.backward_ms, 2.0);
}

TEST(WorkloadFromTraceTest, ATraceItCannotReadIsRefusedNamingTheRun) {
  Trace trace = EmptyTrace(2);
  TraceWorkload out;
  Status st = WorkloadFromTrace(trace, &out);
  EXPECT_EQ(st.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(st.message().find("run 7: no stored steps"), std::string::npos) << st.message();

  trace.steps.push_back(Step(0, {{1.0, 2.0}, {1.0, 2.0}}, 3.0, 3.0));  // no event for c
  st = WorkloadFromTrace(trace, &out);
  EXPECT_NE(st.message().find("tensor c has no ready time"), std::string::npos) << st.message();

  trace.steps[0] = Step(0, {{1.0, 2.0, 3.0}, {1.0, 2.0, 3.0}, {1.0, 2.0, 3.0}}, 4.0, 4.0);
  st = WorkloadFromTrace(trace, &out);  // rank 2 in a world of 2
  EXPECT_NE(st.message().find("on rank 2 outside"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace autotune
