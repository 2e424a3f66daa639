// WriteHorovodTimeline on hand-made traces: valid Chrome-trace JSON in Horovod's vocabulary,
// spans balanced per process, one process per tensor, the fused collectives' phases on
// every member, steps laid end to end, and time never going back within a process.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "formats/horovod_timeline.h"

namespace autotune {
namespace {

using nlohmann::json;

TensorSpec Spec(const std::string& name, std::vector<int64_t> shape, Op op, DType dtype) {
  TensorSpec t;
  t.name = name;
  t.shape = std::move(shape);
  t.op = op;
  t.dtype = dtype;
  return t;
}

CollectiveRecord Collective(int seq, int cycle, Op op, std::vector<int> tensors, int64_t bytes,
                            double start, double copy_in_end, double comm_end, double end) {
  CollectiveRecord c;
  c.seq = seq;
  c.cycle = cycle;
  c.op = op;
  c.tensors = std::move(tensors);
  c.bytes = bytes;
  c.start_us = start;
  c.copy_in_end_us = copy_in_end;
  c.comm_end_us = comm_end;
  c.end_us = end;
  return c;
}

CycleRecord Cycle(int cycle, double start, double negotiate_end) {
  CycleRecord c;
  c.cycle = cycle;
  c.start_us = start;
  c.negotiate_end_us = negotiate_end;
  return c;
}

// Three tensors (two allreduced, one allgathered) on 3 ranks, two steps of 10 and 12 ms.
// Step 0: fc.weight and fc.bias fused in one allreduce (cycle 0), counts gathered alone
// (cycle 1). Step 1: three one-tensor collectives, all in cycle 0.
Trace MakeTrace() {
  Trace trace;
  trace.run.created_at = "2026-01-01T00:00:01Z";
  trace.run.topology.nodes = 1;
  trace.run.topology.ranks_per_node = 3;
  trace.run.workload.name = "toy";
  trace.run.workload.tensors = {Spec("fc.weight", {1000, 2048}, Op::kAllreduce, DType::kFloat32),
                                Spec("fc.bias", {1000}, Op::kAllreduce, DType::kFloat32),
                                Spec("counts", {4}, Op::kAllgather, DType::kInt32)};
  StepTrace s0;
  s0.step = 0;
  s0.step_ms = 10.0;
  // ready: rank r of tensor t at 1000 + 100 t + 10 r.
  for (int t = 0; t < 3; ++t) {
    for (int r = 0; r < 3; ++r) s0.tensors.push_back({r, t, 1000.0 + 100 * t + 10 * r, 9000.0});
  }
  s0.cycles = {Cycle(0, 1100, 1150), Cycle(1, 1300, 1320)};
  s0.collectives = {Collective(0, 0, Op::kAllreduce, {0, 1}, 8196000, 1200, 1300, 5000, 5200),
                    Collective(1, 1, Op::kAllgather, {2}, 48, 5200, 5200, 5400, 5400)};
  StepTrace s1;
  s1.step = 1;
  s1.step_ms = 12.0;
  for (int t = 0; t < 3; ++t) {
    for (int r = 0; r < 3; ++r) s1.tensors.push_back({r, t, 2000.0 + 10 * r, 11000.0});
  }
  s1.cycles = {Cycle(0, 2100, 2150)};
  s1.collectives = {Collective(0, 0, Op::kAllreduce, {0}, 8192000, 2200, 2200, 6000, 6000),
                    Collective(1, 0, Op::kAllreduce, {1}, 4000, 6000, 6000, 6100, 6100),
                    Collective(2, 0, Op::kAllgather, {2}, 48, 6100, 6100, 6200, 6200)};
  trace.steps = {s0, s1};
  return trace;
}

json Parse(const std::string& text) {
  json events = json::parse(text);  // throws, failing the test, when not JSON
  EXPECT_TRUE(events.is_array());
  return events;
}

// pid -> process name.
std::map<int, std::string> ProcessNames(const json& events) {
  std::map<int, std::string> names;
  for (const json& e : events) {
    if (e.value("name", "") == "process_name" && e["args"].contains("name")) {
      names[e["pid"].get<int>()] = e["args"]["name"].get<std::string>();
    }
  }
  return names;
}

int PidOf(const json& events, const std::string& process) {
  for (const auto& [pid, name] : ProcessNames(events)) {
    if (name == process) return pid;
  }
  ADD_FAILURE() << "no process " << process;
  return -1;
}

// The timed events of one process, in file order.
std::vector<json> EventsOf(const json& events, int pid) {
  std::vector<json> out;
  for (const json& e : events) {
    if (e.value("pid", -1) == pid && e["ph"] != "M") out.push_back(e);
  }
  return out;
}

// Begin events named `name` whose ts lies in [from, to).
int CountSpans(const json& events, const std::string& name, int64_t from, int64_t to) {
  int n = 0;
  for (const json& e : events) {
    if (e["ph"] == "B" && e["name"] == name && e["ts"] >= from && e["ts"] < to) ++n;
  }
  return n;
}

TEST(HorovodTimelineWriter, ValidJsonWithBalancedSpansAndMonotoneTimePerProcess) {
  for (BackendKind backend : {BackendKind::kMpi, BackendKind::kNccl}) {
    Trace trace = MakeTrace();
    trace.run.backend = backend;
    const json events = Parse(WriteHorovodTimeline(trace));
    std::map<int, std::vector<json>> open;  // pid -> stack of open B events
    std::map<int, int64_t> last;
    for (const json& e : events) {
      const std::string ph = e["ph"];
      if (ph == "M" || ph == "i") continue;
      const int pid = e["pid"];
      const int64_t ts = e["ts"];
      EXPECT_GE(ts, last[pid]) << e.dump();
      last[pid] = ts;
      if (ph == "B") open[pid].push_back(e);
      if (ph == "E") {
        ASSERT_FALSE(open[pid].empty()) << "E without B: " << e.dump();
        EXPECT_GE(ts, open[pid].back()["ts"].get<int64_t>());
        open[pid].pop_back();
      }
      if (ph == "X") {
        EXPECT_EQ(e["dur"], 0);
        ASSERT_FALSE(open[pid].empty());
        EXPECT_TRUE(open[pid].back()["name"].get<std::string>().starts_with("NEGOTIATE_"));
      }
    }
    for (const auto& [pid, stack] : open) EXPECT_TRUE(stack.empty()) << "pid " << pid;
  }
}

TEST(HorovodTimelineWriter, OneProcessPerTensorNamedAfterItsOp) {
  const json events = Parse(WriteHorovodTimeline(MakeTrace()));
  const std::map<int, std::string> names = ProcessNames(events);
  EXPECT_EQ(names,
            (std::map<int, std::string>{
                {1, "allreduce.fc.weight"}, {2, "allreduce.fc.bias"}, {3, "allgather.counts"}}));
  // Metadata as Horovod writes it: pid 0 holds the start time, sort index = pid, and a
  // process's name comes before its first event.
  EXPECT_EQ(events[0]["args"]["start_time_since_epoch_in_micros"], 1767225601000000);
  for (const auto& [pid, name] : names) {
    int name_at = -1, sort_at = -1, first_event_at = -1;
    for (int i = 0; i < static_cast<int>(events.size()); ++i) {
      const json& e = events[i];
      if (e.value("pid", -1) != pid) continue;
      if (e.value("name", "") == "process_name") name_at = i;
      if (e.value("name", "") == "process_sort_index") {
        sort_at = i;
        EXPECT_EQ(e["args"]["sort_index"], pid);
      }
      if (e["ph"] != "M" && first_event_at < 0) first_event_at = i;
    }
    EXPECT_GE(name_at, 0);
    EXPECT_EQ(sort_at, name_at + 1);
    EXPECT_EQ(first_event_at, sort_at + 1) << name;
  }
}

TEST(HorovodTimelineWriter, CollectiveSpansPerStepAreCollectivesTimesMembers) {
  const json events = Parse(WriteHorovodTimeline(MakeTrace()));
  // Step 0 covers [0, 10000) us, step 1 [10000, 22000).
  EXPECT_EQ(CountSpans(events, "MPI_ALLREDUCE", 0, 10000), 2);      // one fused pair
  EXPECT_EQ(CountSpans(events, "MPI_ALLREDUCE", 10000, 22000), 2);  // two singles
  EXPECT_EQ(CountSpans(events, "MPI_ALLGATHER", 0, 10000), 1);
  EXPECT_EQ(CountSpans(events, "MPI_ALLGATHER", 10000, 22000), 1);
  EXPECT_EQ(CountSpans(events, "ALLREDUCE", 0, 22000), 4);
  EXPECT_EQ(CountSpans(events, "NEGOTIATE_ALLREDUCE", 0, 22000), 4);
  EXPECT_EQ(CountSpans(events, "NEGOTIATE_ALLGATHER", 0, 22000), 2);
  // Fusion-buffer copies only where the collective was fused (or its copies took time).
  EXPECT_EQ(CountSpans(events, "MEMCPY_IN_FUSION_BUFFER", 0, 10000), 2);
  EXPECT_EQ(CountSpans(events, "MEMCPY_OUT_FUSION_BUFFER", 0, 10000), 2);
  EXPECT_EQ(CountSpans(events, "MEMCPY_IN_FUSION_BUFFER", 10000, 22000), 0);
  int cycles = 0;
  for (const json& e : events) {
    if (e["ph"] == "i") {
      EXPECT_EQ(e["name"], "CYCLE_START");
      EXPECT_EQ(e["s"], "g");
      ++cycles;
    }
  }
  EXPECT_EQ(cycles, 3);
}

// The fused allreduce of step 0 as fc.bias's process shows it, event by event.
TEST(HorovodTimelineWriter, FusedMemberShowsNegotiationTicksAndTheWholeFusedOp) {
  const json events = Parse(WriteHorovodTimeline(MakeTrace()));
  const std::vector<json> bias = EventsOf(events, PidOf(events, "allreduce.fc.bias"));
  ASSERT_GE(bias.size(), 12u);
  auto expect = [&](size_t i, const std::string& ph, const std::string& name, int64_t ts) {
    EXPECT_EQ(bias[i]["ph"], ph) << i;
    if (!name.empty()) EXPECT_EQ(bias[i]["name"], name) << i;
    EXPECT_EQ(bias[i]["ts"], ts) << i;
  };
  // Ready on rank r at 1100 + 10 r; the cycle's negotiation ended at 1150.
  expect(0, "B", "NEGOTIATE_ALLREDUCE", 1100);
  expect(1, "X", "0", 1100);
  expect(2, "X", "1", 1110);
  expect(3, "X", "2", 1120);
  expect(4, "E", "", 1150);
  expect(5, "B", "ALLREDUCE", 1200);
  expect(6, "B", "MEMCPY_IN_FUSION_BUFFER", 1200);
  expect(7, "E", "", 1300);
  expect(8, "B", "MPI_ALLREDUCE", 1300);
  expect(9, "E", "", 5000);
  expect(10, "B", "MEMCPY_OUT_FUSION_BUFFER", 5000);
  expect(11, "E", "", 5200);
  expect(12, "E", "", 5200);
  EXPECT_EQ(bias[12]["args"], (json{{"dtype", "float32"}, {"shape", "[1000]"}}));
  // Step 1 starts at 10 ms: its negotiation at 10000 + 2000, then a one-tensor allreduce
  // without fusion-buffer copies.
  expect(13, "B", "NEGOTIATE_ALLREDUCE", 12000);
  expect(18, "B", "ALLREDUCE", 16000);
  expect(19, "B", "MPI_ALLREDUCE", 16000);
  // The other member of the fused allreduce has the same op span.
  const std::vector<json> weight = EventsOf(events, PidOf(events, "allreduce.fc.weight"));
  EXPECT_EQ(weight[5]["name"], "ALLREDUCE");
  EXPECT_EQ(weight[5]["ts"], 1200);
  EXPECT_EQ(weight[12]["args"]["shape"], "[1000, 2048]");
  const std::vector<json> counts = EventsOf(events, PidOf(events, "allgather.counts"));
  EXPECT_EQ(counts[0]["name"], "NEGOTIATE_ALLGATHER");
  EXPECT_EQ(counts[5]["name"], "ALLGATHER");
  EXPECT_EQ(counts[6]["name"], "MPI_ALLGATHER");
  EXPECT_EQ(counts[8]["args"], (json{{"dtype", "int32"}, {"shape", "[4]"}}));
}

TEST(HorovodTimelineWriter, NcclRunsShowNcclActivities) {
  Trace trace = MakeTrace();
  trace.run.backend = BackendKind::kNccl;
  const json events = Parse(WriteHorovodTimeline(trace));
  EXPECT_EQ(CountSpans(events, "NCCL_ALLREDUCE", 0, 22000), 4);
  EXPECT_EQ(CountSpans(events, "NCCL_ALLGATHER", 0, 22000), 2);
  EXPECT_EQ(CountSpans(events, "MPI_ALLREDUCE", 0, 22000), 0);
}

// Times a reader could not read back as recorded: two collectives in the same microsecond,
// another rank ready after the op started, a step shorter than its own events, sub-
// microsecond phases, a tensor in no collective.
TEST(HorovodTimelineWriter, AwkwardTimesStayOrderedAndCollectivesStayApart) {
  Trace trace = MakeTrace();
  StepTrace& s1 = trace.steps[1];
  s1.step_ms = 1.0;  // shorter than its last collective (6.2 ms)
  s1.collectives[1].start_us = s1.collectives[0].start_us + 0.2;
  s1.collectives[1].copy_in_end_us = s1.collectives[1].start_us + 0.1;
  s1.tensors[2 * 3 + 2].ready_us = 50000.0;  // counts on rank 2, after everything
  s1.collectives.pop_back();                 // counts takes part in no collective in step 1
  StepTrace s2 = trace.steps[0];
  s2.step = 2;
  trace.steps.push_back(s2);
  const json events = Parse(WriteHorovodTimeline(trace));
  std::map<int, int64_t> last;
  std::vector<int64_t> allreduce_starts;
  for (const json& e : events) {
    if (e["ph"] == "M" || e["ph"] == "i") continue;
    EXPECT_GE(e["ts"].get<int64_t>(), last[e["pid"].get<int>()]) << e.dump();
    last[e["pid"].get<int>()] = e["ts"];
    if (e["ph"] == "B" && e["name"] == "ALLREDUCE") allreduce_starts.push_back(e["ts"]);
  }
  // Step 1's two one-tensor allreduces start apart; step 2 starts after step 1's last event.
  ASSERT_EQ(allreduce_starts.size(), 6u);
  EXPECT_EQ(allreduce_starts[2], 10000 + 2200);
  EXPECT_EQ(allreduce_starts[3], 10000 + 2201);
  EXPECT_GE(allreduce_starts[4], 10000 + 6100);
  // counts still has its negotiation in step 1, but no op.
  EXPECT_EQ(CountSpans(events, "NEGOTIATE_ALLGATHER", 0, 1 << 30), 3);
  EXPECT_EQ(CountSpans(events, "ALLGATHER", 0, 1 << 30), 2);
}

TEST(HorovodTimelineWriter, TensorsWithoutEventsStillHaveTheirProcess) {
  Trace trace = MakeTrace();
  trace.steps.clear();
  const json events = Parse(WriteHorovodTimeline(trace));
  EXPECT_EQ(ProcessNames(events).size(), 3u);
}

}  // namespace
}  // namespace autotune
