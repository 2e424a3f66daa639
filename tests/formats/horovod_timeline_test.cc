// The Horovod timeline importer: a small hand-made timeline whose every mapped value is worked
// out by hand below, and the real timelines of tests/fixtures/horovod checked against model
// facts, their README and an independent scan of the same file.
#include "formats/horovod_timeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace autotune {
namespace {

// Two ranks; tensors a (float32 [2, 3], 24 bytes) and b (float64 [4], 32 bytes) in three
// steps; a broadcast first and a one-off allgather; cycle marks at 100, 1100, 1230, 2100.
// Step 0 goes through the coordinator (rank ticks); steps 1 and 2 through the cache.
// Step 1 fuses a and b (b's ALLREDUCE begins 1 us after a's, as Horovod writes a response's
// tensors, before a's first activity); step 2 runs them apart (b's op begins after a's
// activity), a without copies.
constexpr const char* kTiny = R"([
{"name": "process_name", "ph": "M", "pid": 0, "args": {"start_time_since_epoch_in_micros": 1}},
{"name": "process_name", "ph": "M", "pid": 3, "args": {"name": "broadcast.w"}},
{"ph": "B", "name": "NEGOTIATE_BROADCAST", "ts": 10, "pid": 3},
{"ph": "E", "ts": 20, "pid": 3},
{"ph": "B", "name": "BROADCAST", "ts": 30, "pid": 3},
{"ph": "E", "ts": 50, "pid": 3},
{"ph": "i", "name": "CYCLE_START", "ts": 100, "s": "g"},
{"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "allreduce.a"}},
{"name": "process_name", "ph": "M", "pid": 2, "args": {"name": "allreduce.b"}},
{"ph": "B", "name": "NEGOTIATE_ALLREDUCE", "ts": 200, "pid": 1},
{"ph": "B", "name": "NEGOTIATE_ALLREDUCE", "ts": 205, "pid": 2},
{"ph": "X", "name": "0", "ts": 206, "pid": 2, "dur": 0},
{"ph": "X", "name": "1", "ts": 210, "pid": 1, "dur": 0},
{"ph": "X", "name": "0", "ts": 250, "pid": 1, "dur": 0},
{"ph": "X", "name": "1", "ts": 255, "pid": 2, "dur": 0},
{"ph": "E", "ts": 260, "pid": 1},
{"ph": "E", "ts": 262, "pid": 2},
{"ph": "B", "name": "ALLREDUCE", "ts": 300, "pid": 1},
{"ph": "B", "name": "ALLREDUCE", "ts": 300, "pid": 2},
{"ph": "B", "name": "MEMCPY_IN_FUSION_BUFFER", "ts": 301, "pid": 1},
{"ph": "B", "name": "MEMCPY_IN_FUSION_BUFFER", "ts": 301, "pid": 2},
{"ph": "E", "ts": 310, "pid": 1},
{"ph": "E", "ts": 310, "pid": 2},
{"ph": "B", "name": "MPI_ALLREDUCE", "ts": 311, "pid": 1},
{"ph": "B", "name": "MPI_ALLREDUCE", "ts": 311, "pid": 2},
{"ph": "E", "ts": 400, "pid": 1},
{"ph": "E", "ts": 400, "pid": 2},
{"ph": "E", "ts": 420, "pid": 1, "args": {"dtype": "float32", "shape": "[2, 3]"}},
{"ph": "E", "ts": 425, "pid": 2, "args": {"dtype": "float64", "shape": "[4]"}},
{"ph": "i", "name": "CYCLE_START", "ts": 1100, "s": "g"},
{"ph": "B", "name": "NEGOTIATE_ALLREDUCE", "ts": 1200, "pid": 1},
{"ph": "B", "name": "NEGOTIATE_ALLREDUCE", "ts": 1210, "pid": 2},
{"ph": "i", "name": "CYCLE_START", "ts": 1230, "s": "g"},
{"ph": "E", "ts": 1250, "pid": 1},
{"ph": "E", "ts": 1250, "pid": 2},
{"ph": "B", "name": "ALLREDUCE", "ts": 1300, "pid": 1},
{"ph": "B", "name": "ALLREDUCE", "ts": 1301, "pid": 2},
{"ph": "B", "name": "MEMCPY_IN_FUSION_BUFFER", "ts": 1301, "pid": 1},
{"ph": "B", "name": "MEMCPY_IN_FUSION_BUFFER", "ts": 1302, "pid": 2},
{"ph": "E", "ts": 1310, "pid": 1},
{"ph": "E", "ts": 1310, "pid": 2},
{"ph": "B", "name": "MPI_ALLREDUCE", "ts": 1312, "pid": 1},
{"ph": "B", "name": "MPI_ALLREDUCE", "ts": 1312, "pid": 2},
{"ph": "E", "ts": 1380, "pid": 1},
{"ph": "E", "ts": 1380, "pid": 2},
{"ph": "B", "name": "MEMCPY_OUT_FUSION_BUFFER", "ts": 1381, "pid": 1},
{"ph": "E", "ts": 1395, "pid": 1},
{"ph": "E", "ts": 1400, "pid": 1, "args": {"dtype": "float32", "shape": "[2, 3]"}},
{"ph": "E", "ts": 1405, "pid": 2, "args": {"dtype": "float64", "shape": "[4]"}},
{"ph": "i", "name": "CYCLE_START", "ts": 2100, "s": "g"},
{"ph": "B", "name": "NEGOTIATE_ALLREDUCE", "ts": 2200, "pid": 1},
{"ph": "E", "ts": 2240, "pid": 1},
{"ph": "B", "name": "NEGOTIATE_ALLREDUCE", "ts": 2250, "pid": 2},
{"ph": "E", "ts": 2260, "pid": 2},
{"ph": "B", "name": "ALLREDUCE", "ts": 2300, "pid": 1},
{"ph": "B", "name": "MPI_ALLREDUCE", "ts": 2301, "pid": 1},
{"ph": "E", "ts": 2340, "pid": 1},
{"ph": "E", "ts": 2350, "pid": 1, "args": {"dtype": "float32", "shape": "[2, 3]"}},
{"ph": "B", "name": "ALLREDUCE", "ts": 2310, "pid": 2},
{"ph": "E", "ts": 2390, "pid": 2, "args": {"dtype": "float64", "shape": "[4]"}},
{"name": "process_name", "ph": "M", "pid": 4, "args": {"name": "allgather.t"}},
{"ph": "B", "name": "NEGOTIATE_ALLGATHER", "ts": 2400, "pid": 4},
{"ph": "E", "ts": 2410, "pid": 4},
{"ph": "B", "name": "ALLGATHER", "ts": 2420, "pid": 4}
])";

ImportOptions Options(int warmup_steps, const std::string& source = "tiny.json") {
  ImportOptions o;
  o.source = source;
  o.topology.nodes = 0;  // from the rank ticks
  o.topology.ranks_per_node = 0;
  o.warmup_steps = warmup_steps;
  o.command = "autotune import --horovod-timeline " + source;
  return o;
}

const TensorEvent* EventOf(const StepTrace& st, int rank, int tensor) {
  for (const TensorEvent& e : st.tensors) {
    if (e.rank == rank && e.tensor == tensor) return &e;
  }
  return nullptr;
}

TEST(HorovodTimelineTest, TinyTimelineMapsAsTheContractSays) {
  Trace trace;
  ImportSummary summary;
  ASSERT_TRUE(ParseHorovodTimeline(kTiny, Options(1), &trace, &summary).ok());
  const RunInfo& run = trace.run;
  EXPECT_EQ(run.kind, RunKind::kImported);
  EXPECT_EQ(run.workload.name, "tiny");
  EXPECT_EQ(run.topology.world_size(), 2);  // ticks "0" and "1"
  EXPECT_EQ(run.backend, BackendKind::kMpi);
  EXPECT_EQ(run.hardware, "horovod timeline tiny.json");
  // Broadcast and the one-off allgather left out; a (rank 0 ready 1200) before b (1210).
  ASSERT_EQ(run.workload.tensors.size(), 2u);
  EXPECT_EQ(run.workload.tensors[0].name, "a");
  EXPECT_EQ(run.workload.tensors[0].bytes(), 24);
  EXPECT_EQ(run.workload.tensors[1].dtype, DType::kFloat64);
  EXPECT_EQ(run.workload.tensors[1].bytes(), 32);
  EXPECT_DOUBLE_EQ(run.workload.tensors[0].ready_ms, (1200 - 425) / 1000.0);
  EXPECT_DOUBLE_EQ(run.workload.tensors[1].ready_ms, (1210 - 425) / 1000.0);
  ASSERT_EQ(trace.steps.size(), 2u);
  EXPECT_EQ(summary.steps, 2);
  EXPECT_EQ(summary.tensors, 2);
  EXPECT_EQ(summary.bytes_per_step, 56);
  EXPECT_FALSE(summary.truncated);
  // Step 1 runs from step 0's last op end (425) to its own (1405).
  const StepTrace& s1 = trace.steps[0];
  EXPECT_EQ(s1.step, 0);
  EXPECT_DOUBLE_EQ(s1.step_ms, (1405 - 425) / 1000.0);
  EXPECT_EQ(s1.bytes, 56);
  // No ticks: rank 1 ready at the start of the cycle in which the negotiation ended (1230).
  EXPECT_DOUBLE_EQ(EventOf(s1, 0, 0)->ready_us, 1200 - 425);
  EXPECT_DOUBLE_EQ(EventOf(s1, 1, 0)->ready_us, 1230 - 425);
  EXPECT_DOUBLE_EQ(EventOf(s1, 1, 1)->ready_us, 1230 - 425);
  EXPECT_DOUBLE_EQ(EventOf(s1, 0, 1)->done_us, 1405 - 425);
  ASSERT_EQ(s1.collectives.size(), 1u);
  const CollectiveRecord& fused = s1.collectives[0];
  EXPECT_EQ(fused.tensors, (std::vector<int>{0, 1}));
  EXPECT_EQ(fused.bytes, 56);
  EXPECT_DOUBLE_EQ(fused.start_us, 1300 - 425);
  EXPECT_DOUBLE_EQ(fused.copy_in_end_us, 1312 - 425);
  EXPECT_DOUBLE_EQ(fused.comm_end_us, 1380 - 425);
  EXPECT_DOUBLE_EQ(fused.end_us, 1405 - 425);
  EXPECT_EQ(fused.cycle, 1);  // marks 1100 (cycle 0) and 1230 (cycle 1) in the step
  // Cycle 0 had the offers, cycle 1 the (cached) agreements and the collective.
  ASSERT_EQ(s1.cycles.size(), 2u);
  EXPECT_EQ(s1.cycles[0].submitted, 2);
  EXPECT_EQ(s1.cycles[0].responses, 0);
  EXPECT_DOUBLE_EQ(s1.cycles[0].start_us, 1100 - 425);
  EXPECT_EQ(s1.cycles[1].responses, 2);
  EXPECT_EQ(s1.cycles[1].cache_hits, 2);
  EXPECT_EQ(s1.cycles[1].collectives, 1);
  EXPECT_DOUBLE_EQ(s1.cycles[1].negotiate_end_us, 1250 - 425);
  // Step 2: two collectives; a without copies (comm from its MPI_ALLREDUCE).
  const StepTrace& s2 = trace.steps[1];
  EXPECT_DOUBLE_EQ(s2.step_ms, (2390 - 1405) / 1000.0);
  ASSERT_EQ(s2.collectives.size(), 2u);
  EXPECT_EQ(s2.collectives[0].tensors, std::vector<int>{0});
  EXPECT_DOUBLE_EQ(s2.collectives[0].copy_in_end_us, 2301 - 1405);
  EXPECT_DOUBLE_EQ(s2.collectives[0].comm_end_us, 2340 - 1405);
  EXPECT_EQ(s2.collectives[1].bytes, 32);
  EXPECT_EQ(summary.collectives_per_step, 2);  // median of 1 and 2, rounded
}

TEST(HorovodTimelineTest, WithoutWarmupTheTicksGiveEveryRanksReadyTime) {
  Trace trace;
  ImportSummary summary;
  ASSERT_TRUE(ParseHorovodTimeline(kTiny, Options(0), &trace, &summary).ok());
  ASSERT_EQ(trace.steps.size(), 3u);
  // The first step starts where the broadcast ended (50).
  const StepTrace& s0 = trace.steps[0];
  EXPECT_DOUBLE_EQ(s0.step_ms, (425 - 50) / 1000.0);
  // Rank 0 of b ticked at 206, of a at 250: b comes first in the workload.
  EXPECT_EQ(trace.run.workload.tensors[0].name, "b");
  EXPECT_DOUBLE_EQ(EventOf(s0, 0, 0)->ready_us, 206 - 50);
  EXPECT_DOUBLE_EQ(EventOf(s0, 1, 0)->ready_us, 255 - 50);
  EXPECT_DOUBLE_EQ(EventOf(s0, 0, 1)->ready_us, 250 - 50);
  EXPECT_DOUBLE_EQ(EventOf(s0, 1, 1)->ready_us, 210 - 50);
  EXPECT_EQ(s0.cycles.size(), 1u);  // only mark 100 lies in the step
  EXPECT_EQ(s0.cycles[0].cache_hits, 0);
}

TEST(HorovodTimelineTest, TopologyFromFlagsAndTicks) {
  Trace trace;
  ImportOptions o = Options(1);
  o.topology.nodes = 2;
  o.topology.ranks_per_node = 0;
  ASSERT_TRUE(ParseHorovodTimeline(kTiny, o, &trace, nullptr).ok());
  EXPECT_EQ(trace.run.topology.key(), "2x1");
  o.topology.nodes = 1;
  o.topology.ranks_per_node = 1;  // the ticks name rank 1: outside
  const Status s = ParseHorovodTimeline(kTiny, o, &trace, nullptr);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "tiny.json: event 12: rank tick 1 outside the 1x1 topology");
  o.workload_name = "mine";
  o.topology.ranks_per_node = 2;
  ASSERT_TRUE(ParseHorovodTimeline(kTiny, o, &trace, nullptr).ok());
  EXPECT_EQ(trace.run.workload.name, "mine");
}

// Replaces the first occurrence of `from` after `after` in text.
std::string Edit(std::string text, const std::string& after, const std::string& from,
                 const std::string& to) {
  const size_t at = text.find(from, text.find(after));
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST(HorovodTimelineTest, MalformedEventsNameTheEvent) {
  // Event 0 is the first line after "["; the E at ts 310 on pid 1 is event 21, the op ends
  // at ts 420 and 1400 (with args) events 27 and 47.
  const std::string e21 = R"({"ph": "E", "ts": 310, "pid": 1})";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {Edit(kTiny, "", e21, "42"), "tiny.json: event 21: not an object"},
      {Edit(kTiny, "", e21, R"({"ph": "E", "ts": "310", "pid": 1})"),
       "tiny.json: event 21: \"ts\" is not a number"},
      {Edit(kTiny, "", e21, R"({"ph": "E", "ts": 310, "pid": 9})"),
       "tiny.json: event 21: \"E\" without a matching \"B\" on pid 9"},
      {Edit(kTiny, "", e21, R"({"ph": "E", "ts": 310, "pid": 1.5})"),
       "tiny.json: event 21: \"pid\" is not an integer"},
      {Edit(kTiny, "\"ts\": 1400", "[2, 3]", "[2, x]"),
       "tiny.json: event 47: args.shape \"[2, x]\" is not a list of positive dimensions"},
      // Text from the file is quoted as JSON, so the error stays one line.
      {Edit(kTiny, "\"ts\": 1400", "[2, 3]", "[2, x\\n]"),
       "tiny.json: event 47: args.shape \"[2, x\\n]\" is not a list of positive dimensions"},
      {Edit(kTiny, "\"ts\": 1301", "MEMCPY_IN_FUSION_BUFFER", "NEGOTIATE_\\n"),
       "tiny.json: event 37: \"NEGOTIATE_\\n\" begins inside an open event of its tensor"},
      {Edit(kTiny, "\"ts\": 1400", "float32", "complex64"), ""},  // not the first: unread
      {Edit(kTiny, "", e21, R"({"ph": "E" "ts": 310, "pid": 1})"), "tiny.json: event 21: "},
      {"{}", "tiny.json: not a Horovod timeline"},
      {"[]", "tiny.json: no recurring allreduce/allgather tensors"},
  };
  for (const auto& [text, expected] : cases) {
    Trace trace;
    trace.run.command = "untouched";
    const Status s = ParseHorovodTimeline(text, Options(1), &trace, nullptr);
    if (expected.empty()) {  // the dtype and shape are read from a tensor's first op end
      EXPECT_TRUE(s.ok()) << s.message();
      continue;
    }
    ASSERT_FALSE(s.ok()) << expected;
    EXPECT_EQ(s.message().rfind(expected, 0), 0u) << s.message();
    EXPECT_EQ(s.message().find('\n'), std::string::npos) << s.message();
    EXPECT_EQ(trace.run.command, "untouched");
  }
  Trace trace;
  const Status dtype = ParseHorovodTimeline(Edit(kTiny, "\"ts\": 420", "float32", "complex64"),
                                            Options(1), &trace, nullptr);
  EXPECT_EQ(dtype.message().rfind("tiny.json: event 27: unknown dtype \"complex64\"", 0), 0u)
      << dtype.message();
}

TEST(HorovodTimelineTest, TooFewStepsForTheWarmup) {
  Trace trace;
  const Status s = ParseHorovodTimeline(kTiny, Options(3), &trace, nullptr);
  EXPECT_EQ(s.message(), "tiny.json: 3 complete steps, none left after 3 warm-up steps");
}

TEST(HorovodTimelineTest, CutAnywhereImportsTheCompleteStepsOrSaysWhyNot) {
  const std::string text = kTiny;
  Trace full;
  ASSERT_TRUE(ParseHorovodTimeline(text, Options(0), &full, nullptr).ok());
  for (size_t cut = 0; cut + 1 < text.size(); ++cut) {
    Trace trace;
    ImportSummary summary;
    const Status s = ParseHorovodTimeline(text.substr(0, cut), Options(0), &trace, &summary);
    if (!s.ok()) {
      EXPECT_EQ(s.message().find("event"), std::string::npos) << cut << ": " << s.message();
      continue;
    }
    EXPECT_TRUE(summary.truncated) << cut;
    ASSERT_LE(trace.steps.size(), full.steps.size()) << cut;
    for (size_t i = 0; i + 1 < trace.steps.size(); ++i) {
      EXPECT_DOUBLE_EQ(trace.steps[i].step_ms, full.steps[i].step_ms) << cut;
    }
  }
}


// A ready log of kTiny's job: every rank's gradient-ready times, given as
// timeline[rank][step][tensor] in the timeline's microseconds (its epoch is 1 us), each step
// starting (on the recorder's wall clock) 10 ms before the timeline's ts 0, so that every
// logged time is after its step's start, as a recorder writes them.
HorovodReadyLog TinyReadyLog(const std::vector<std::vector<std::vector<double>>>& timeline,
                             const std::vector<std::string>& tensors = {"allreduce.a",
                                                                        "allreduce.b"}) {
  const double epoch_us = 1.0;
  const std::vector<double> step_starts = {-10000, -10000, -10000};  // timeline us
  HorovodReadyLog log;
  log.tensors = tensors;
  for (const auto& steps : timeline) {
    std::vector<double> starts;
    std::vector<std::vector<double>> ready;
    for (size_t k = 0; k < steps.size(); ++k) {
      starts.push_back(epoch_us + step_starts[k]);
      std::vector<double> r;
      for (double t : steps[k]) r.push_back(t - step_starts[k]);
      ready.push_back(r);
    }
    log.step_start_epoch_us.push_back(starts);
    log.ready_us.push_back(ready);
  }
  log.content_hash = "tiny-log";
  return log;
}

// Rank 0's and rank 1's a and b, per step; each before its negotiation's end (260/262, 1250,
// 2240/2260).
const std::vector<std::vector<std::vector<double>>> kTinyReady = {
    {{240, 200}, {1150, 1190}, {2200, 2250}},   // rank 0
    {{205, 250}, {1215, 1220}, {2100, 2100}}};  // rank 1

TEST(HorovodTimelineTest, AReadyLogGivesEveryRanksOwnReadyTimes) {
  Trace trace;
  ImportSummary summary;
  const HorovodReadyLog log = TinyReadyLog(kTinyReady);
  ASSERT_TRUE(ParseHorovodTimeline(kTiny, Options(1), &trace, &summary, &log).ok());
  // Step 1 starts at 425. The timeline reads rank 1's a and b at 1230 (the cycle in which their
  // cached negotiation ended) and rank 0's at 1200 and 1210 (the negotiations' starts).
  const StepTrace& s1 = trace.steps[0];
  EXPECT_DOUBLE_EQ(EventOf(s1, 0, 0)->ready_us, 1150 - 425);
  EXPECT_DOUBLE_EQ(EventOf(s1, 0, 1)->ready_us, 1190 - 425);
  EXPECT_DOUBLE_EQ(EventOf(s1, 1, 0)->ready_us, 1215 - 425);
  EXPECT_DOUBLE_EQ(EventOf(s1, 1, 1)->ready_us, 1220 - 425);
  EXPECT_DOUBLE_EQ(trace.run.workload.tensors[0].ready_ms, (1150 - 425) / 1000.0);
  EXPECT_DOUBLE_EQ(trace.run.workload.tensors[1].ready_ms, (1190 - 425) / 1000.0);
  // The collectives are the timeline's still.
  EXPECT_DOUBLE_EQ(s1.collectives[0].start_us, 1300 - 425);
  EXPECT_EQ(summary.ready_logged_tensors, 2);
  // Earlier than the timeline's reading, over steps 1 and 2 (rank 1 of step 2: the cycle at
  // 2100 already): 50, 20, 15, 10 and four zeros, in us.
  EXPECT_NEAR(summary.ready_log_mean_earlier_ms, (50 + 20 + 15 + 10) / 8.0 / 1000.0, 1e-12);
  EXPECT_NEAR(summary.ready_log_max_earlier_ms, 0.050, 1e-12);
  // Another source: the log is part of what the run was imported from.
  Trace without;
  ASSERT_TRUE(ParseHorovodTimeline(kTiny, Options(1), &without, nullptr).ok());
  EXPECT_NE(trace.run.source_hash, without.run.source_hash);
  EXPECT_DOUBLE_EQ(EventOf(without.steps[0], 1, 0)->ready_us, 1230 - 425);
}

TEST(HorovodTimelineTest, AReadyLogOfSomeTensorsLeavesTheOthersToTheTimeline) {
  Trace trace;
  ImportSummary summary;
  const HorovodReadyLog log =
      TinyReadyLog({{{240}, {1150}, {2200}}, {{205}, {1215}, {2100}}}, {"allreduce.a"});
  ASSERT_TRUE(ParseHorovodTimeline(kTiny, Options(1), &trace, &summary, &log).ok());
  EXPECT_EQ(summary.ready_logged_tensors, 1);
  EXPECT_DOUBLE_EQ(EventOf(trace.steps[0], 1, 0)->ready_us, 1215 - 425);
  EXPECT_DOUBLE_EQ(EventOf(trace.steps[0], 1, 1)->ready_us, 1230 - 425);
}

TEST(HorovodTimelineTest, AReadyLogThatDoesNotFitIsRefused) {
  std::vector<std::vector<std::vector<double>>> late = kTinyReady;
  late[1][1][0] = 1250 + 2001;  // rank 1's a of step 1, 2.001 ms after its negotiation ended
  std::vector<std::vector<std::vector<double>>> early = kTinyReady;
  early[0][2][1] = 1301 - 2001;  // rank 0's b of step 2, 2.001 ms before step 1's b began
  std::vector<std::vector<std::vector<double>>> before = kTinyReady;
  before[1][0][0] = -2001;  // rank 1's a of step 0, before the timeline's ts 0
  std::vector<std::vector<std::vector<double>>> short_log = kTinyReady;
  short_log[0].pop_back();
  ImportOptions o = Options(1);
  o.ready_log = "ready";
  const std::vector<std::pair<HorovodReadyLog, std::string>> cases = {
      {TinyReadyLog(late),
       "ready: rank 1 logs tensor allreduce.a of step 1 ready 2.0 ms after the timeline's ranks "
       "had all offered it: the log's clock does not line up with the timeline's (another "
       "run's log, or ranks on machines whose clocks differ)"},
      {TinyReadyLog(early),
       "ready: rank 0 logs tensor allreduce.b of step 2 ready 2.0 ms before its previous step's "
       "allreduce began: the log's clock does not line up with the timeline's (another run's "
       "log, or ranks on machines whose clocks differ)"},
      {TinyReadyLog(before),
       "ready: rank 1 logs tensor allreduce.a of step 0 ready 2.0 ms before the timeline began: "
       "the log's clock does not line up with the timeline's (another run's log, or ranks on "
       "machines whose clocks differ)"},
      {TinyReadyLog(short_log), "ready: rank 0 logs 2 steps, fewer than the timeline's 3"},
      {TinyReadyLog({kTinyReady[0]}), "ready: 1 ranks, where the timeline's job has 2"},
      {TinyReadyLog(kTinyReady, {"allreduce.x", "allreduce.y"}),
       "ready: names none of the timeline's recurring tensors"},
  };
  for (const auto& [log, expected] : cases) {
    Trace trace;
    trace.run.command = "untouched";
    const Status s = ParseHorovodTimeline(kTiny, o, &trace, nullptr, &log);
    EXPECT_EQ(s.message(), expected);
    EXPECT_EQ(trace.run.command, "untouched");
  }
  // Within 2 ms of the negotiation's end: the clocks of one machine, a hook run before
  // Horovod's own.
  late[1][1][0] = 1250 + 1999;
  Trace trace;
  const HorovodReadyLog near = TinyReadyLog(late);
  EXPECT_TRUE(ParseHorovodTimeline(kTiny, o, &trace, nullptr, &near).ok());
  // A timeline without its wall-clock start cannot take a log.
  const HorovodReadyLog log = TinyReadyLog(kTinyReady);
  const Status s = ParseHorovodTimeline(
      Edit(kTiny, "", R"({"start_time_since_epoch_in_micros": 1})", "{}"), o, &trace, nullptr,
      &log);
  EXPECT_EQ(s.message(),
            "tiny.json: no start_time_since_epoch_in_micros (pid 0's metadata) to put the ready "
            "log on the timeline's clock");
}

}  // namespace
}  // namespace autotune
