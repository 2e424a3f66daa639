// `autotune timeline` on a run the executor recorded (`record --np 2`): every tensor of the
// workload has its process, every collective the executor ran shows on each of its members,
// every negotiation has one tick per rank, spans are balanced and time never goes back per
// process; and the timeline imported back gives the run's workload and collectives.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "formats/horovod_timeline.h"
#include "store/store.h"
#include "tests/support/cli.h"
#include "tests/support/timeline_roundtrip.h"

namespace {

using autotune::CollectiveRecord;
using autotune::StepTrace;
using autotune::Store;
using autotune::TensorSpec;
using autotune::Trace;
using autotune::testing::AutotuneBinary;
using autotune::testing::CommandResult;
using autotune::testing::ReadFile;
using autotune::testing::RunCommand;
using autotune::testing::TempDir;
using nlohmann::json;

TEST(TimelineRecordedRun, EveryTensorAndCollectiveOfTheRecordedRunIsThere) {
  TempDir temp;
  const std::string db = temp.File("runs.db");
  const std::string out = temp.File("t.json");
  const CommandResult rec = RunCommand(
      {AutotuneBinary(), "record", "--np", "2", "--workload", "resnet50", "--scale", "0.02",
       "--steps", "2", "--warmup-steps", "1", "--fusion-threshold-mb", "0.25", "--db", db},
      temp.path());
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  const CommandResult r = RunCommand(
      {AutotuneBinary(), "timeline", "--db", db, "--run", "1", "--out", out}, temp.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;

  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(db, Store::Mode::kReadOnly, &store).ok());
  Trace trace;
  ASSERT_TRUE(store->LoadTrace(1, &trace).ok());
  ASSERT_EQ(trace.steps.size(), 2u);
  std::map<std::string, int> expected_spans;  // process name -> MPI_ALLREDUCE spans
  int negotiations = 0;
  for (const TensorSpec& t : trace.run.workload.tensors) expected_spans["allreduce." + t.name];
  for (const StepTrace& s : trace.steps) {
    for (const CollectiveRecord& c : s.collectives) {
      for (int t : c.tensors) ++expected_spans["allreduce." + trace.run.workload.tensors[t].name];
    }
    negotiations += static_cast<int>(trace.run.workload.tensors.size());
  }
  ASSERT_EQ(expected_spans.size(), 161u);

  const json events = json::parse(ReadFile(out));
  std::map<int, std::string> names;
  std::map<int, int> spans;
  std::map<int, std::vector<std::string>> open;
  std::map<int, int64_t> last;
  int ticks = 0, negotiation_spans = 0;
  for (const json& e : events) {
    if (e.value("name", "") == "process_name" && e["args"].contains("name")) {
      names[e["pid"]] = e["args"]["name"];
    }
    if (e["ph"] == "M" || e["ph"] == "i") continue;
    const int pid = e["pid"];
    EXPECT_GE(e["ts"].get<int64_t>(), last[pid]) << e.dump();
    last[pid] = e["ts"];
    if (e["ph"] == "B") {
      open[pid].push_back(e["name"]);
      if (e["name"] == "MPI_ALLREDUCE") ++spans[pid];
      if (e["name"] == "NEGOTIATE_ALLREDUCE") ++negotiation_spans;
    } else if (e["ph"] == "E") {
      ASSERT_FALSE(open[pid].empty()) << e.dump();
      open[pid].pop_back();
    } else if (e["ph"] == "X") {
      ++ticks;
    }
  }
  for (const auto& [pid, stack] : open) EXPECT_TRUE(stack.empty()) << names[pid];
  std::map<std::string, int> spans_by_name;
  for (const auto& [pid, name] : names) spans_by_name[name] = spans[pid];
  EXPECT_EQ(spans_by_name, expected_spans);
  EXPECT_EQ(negotiation_spans, negotiations);
  EXPECT_EQ(ticks, 2 * negotiations);  // ranks "0" and "1"
}

// The round trip on a recorded run: the timeline imported back (no warm-up steps) has the
// run's workload and, step by step, its collectives.
TEST(TimelineRecordedRun, ImportOfTheTimelineGivesBackWorkloadAndCollectives) {
  TempDir temp;
  const std::string db = temp.File("runs.db");
  const std::string out = temp.File("t.json");
  const CommandResult rec = RunCommand(
      {AutotuneBinary(), "record", "--np", "2", "--workload", "resnet50", "--scale", "0.02",
       "--steps", "2", "--warmup-steps", "1", "--fusion-threshold-mb", "0.25", "--db", db},
      temp.path());
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  const CommandResult r = RunCommand(
      {AutotuneBinary(), "timeline", "--db", db, "--run", "1", "--out", out}, temp.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(db, Store::Mode::kReadOnly, &store).ok());
  Trace trace;
  ASSERT_TRUE(store->LoadTrace(1, &trace).ok());

  autotune::ImportOptions options;
  options.source = out;
  options.topology = trace.run.topology;
  options.knobs = trace.run.knobs;
  options.warmup_steps = 0;
  Trace imported;
  autotune::ImportSummary summary;
  const autotune::Status st =
      autotune::ParseHorovodTimeline(ReadFile(out), options, &imported, &summary);
  ASSERT_TRUE(st.ok()) << st.message();
  autotune::testing::ExpectSameWorkloadAndCollectives(trace, imported);
  EXPECT_EQ(summary.tensors, 161);
  int64_t recorded_bytes = 0;
  for (const CollectiveRecord& c : trace.steps[0].collectives) recorded_bytes += c.bytes;
  EXPECT_EQ(summary.bytes_per_step, recorded_bytes);
}

}  // namespace
