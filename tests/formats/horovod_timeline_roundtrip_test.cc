// The Horovod-timeline round trip: ParseHorovodTimeline(WriteHorovodTimeline(trace)) with
// no warm-up steps gives back the trace's workload (names, shapes, dtypes, ops, order) and,
// per step, its collectives (members, bytes, order). Here on hand-made traces; on a run the
// executor recorded in tests/tools/timeline_record_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "formats/horovod_timeline.h"
#include "tests/support/timeline_roundtrip.h"

namespace autotune {
namespace {

TensorSpec Spec(const std::string& name, std::vector<int64_t> shape, Op op, DType dtype) {
  TensorSpec t;
  t.name = name;
  t.shape = std::move(shape);
  t.op = op;
  t.dtype = dtype;
  return t;
}

// One step of w on `world` ranks fused as `plan` says (collectives in order): tensor t is
// ready on rank r at 500 + 300 t + 37 r (step + 1) us; a collective starts 50 us after its
// last member is ready everywhere (or when the previous one ends), copies take 100 us when
// fused, the collective 1000 us + 1 us per kB of its fusion buffer (an allgathered tensor
// fills world times its bytes); one cycle per collective.
StepTrace MakeStep(const Workload& w, int world, int step,
                   const std::vector<std::vector<int>>& plan) {
  StepTrace s;
  s.step = step;
  auto ready = [&](int t, int r) { return 500.0 + 300.0 * t + 37.0 * r * (step + 1); };
  double free_us = 0.0;
  for (size_t k = 0; k < plan.size(); ++k) {
    CollectiveRecord c;
    c.seq = static_cast<int>(k);
    c.cycle = static_cast<int>(k);
    c.op = w.tensors[plan[k][0]].op;
    c.tensors = plan[k];
    double last_ready = 0.0;
    for (int t : plan[k]) {
      c.bytes += w.tensors[t].bytes() * (c.op == Op::kAllgather ? world : 1);
      for (int r = 0; r < world; ++r) last_ready = std::max(last_ready, ready(t, r));
    }
    const double copy = plan[k].size() > 1 ? 100.0 : 0.0;
    c.start_us = std::max(free_us, last_ready + 50.0);
    c.copy_in_end_us = c.start_us + copy;
    c.comm_end_us = c.copy_in_end_us + 1000.0 + static_cast<double>(c.bytes) / 1000.0;
    c.end_us = c.comm_end_us + copy;
    free_us = c.end_us;
    CycleRecord cycle;
    cycle.cycle = c.cycle;
    cycle.start_us = c.start_us - 40.0;
    cycle.negotiate_end_us = c.start_us - 10.0;
    cycle.responses = static_cast<int>(plan[k].size());
    cycle.collectives = 1;
    s.cycles.push_back(cycle);
    for (int t : plan[k]) {
      for (int r = 0; r < world; ++r) s.tensors.push_back({r, t, ready(t, r), c.end_us});
    }
    s.collectives.push_back(std::move(c));
  }
  s.step_ms = free_us / 1000.0 + 2.0;
  return s;
}

// Six tensors (one allgathered, mixed dtypes and ranks of shape) on 2x2 over three steps
// fused three different ways.
Trace MakeTrace(BackendKind backend) {
  Trace trace;
  trace.run.backend = backend;
  trace.run.topology.nodes = 2;
  trace.run.topology.ranks_per_node = 2;
  trace.run.workload.name = "handmade";
  trace.run.workload.tensors = {
      Spec("layer4.conv.weight", {64, 3, 7, 7}, Op::kAllreduce, DType::kFloat32),
      Spec("layer4.bn.weight", {64}, Op::kAllreduce, DType::kFloat32),
      Spec("layer4.bn.bias", {64}, Op::kAllreduce, DType::kFloat32),
      Spec("fc.weight", {1000, 2048}, Op::kAllreduce, DType::kFloat32),
      Spec("fc.bias", {1000}, Op::kAllreduce, DType::kFloat16),
      Spec("step_counts", {4}, Op::kAllgather, DType::kInt64)};
  const Workload& w = trace.run.workload;
  trace.steps = {MakeStep(w, 4, 0, {{0, 1, 2}, {3}, {4}, {5}}),
                 MakeStep(w, 4, 1, {{0}, {1, 2, 3, 4}, {5}}),
                 MakeStep(w, 4, 2, {{0, 1, 2, 3, 4}, {5}})};
  return trace;
}

TEST(HorovodTimelineRoundTrip, HandMadeTraceComesBackWithItsWorkloadAndCollectives) {
  for (BackendKind backend : {BackendKind::kMpi, BackendKind::kNccl}) {
    const Trace trace = MakeTrace(backend);
    ImportOptions options;
    options.source = "written.json";
    options.topology = trace.run.topology;
    options.warmup_steps = 0;
    Trace imported;
    ImportSummary summary;
    const Status st =
        ParseHorovodTimeline(WriteHorovodTimeline(trace), options, &imported, &summary);
    ASSERT_TRUE(st.ok()) << st.message();
    testing::ExpectSameWorkloadAndCollectives(trace, imported);
    EXPECT_EQ(imported.run.backend, backend);
    EXPECT_EQ(summary.steps, 3);
    EXPECT_EQ(summary.tensors, 6);
    // 64*3*7*7 + 64 + 64 floats, 1000*2048 floats, 1000 halves, 4 int64s gathered from 4.
    EXPECT_EQ(summary.bytes_per_step, (9408 + 128) * 4 + 2048000 * 4 + 2000 + 4 * 32);
    EXPECT_FALSE(summary.truncated);
  }
}

}  // namespace
}  // namespace autotune
