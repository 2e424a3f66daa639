// `autotune timeline` end to end on a temporary store: a measured run and a simulated one
// (stored with its steps, or without them and replayed again) become a Horovod timeline whose
// processes and collective spans match the stored trace; bad input gives one line, a non-zero
// exit and leaves the output file as it was.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "store/store.h"
#include "tests/support/cli.h"
#include "tests/support/sim_fixtures.h"
#include "tests/support/synthetic.h"

namespace autotune::testing {
namespace {

using nlohmann::json;
using sim::testing::Topo;

class TimelineCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = dir_.File("runs.db");
    ASSERT_TRUE(Store::Open(db_, Store::Mode::kReadWrite, &store_).ok());
  }

  // Stores a synthetic measured run of scaled resnet50 on 2x2 (3 steps); returns its id.
  int64_t AddRun() {
    Workload w;
    EXPECT_TRUE(BuiltinWorkload("resnet50", &w).ok());
    EXPECT_TRUE(ScaleWorkload(0.02, &w).ok());
    const sim::NetworkModel net = Network();
    Trace trace;
    sim::SyntheticTraceOptions so;
    so.steps = 3;
    Knobs knobs;
    knobs.fusion_threshold_mb = 0.05;  // several fused collectives per step
    EXPECT_TRUE(
        sim::SynthesizeTrace(w, knobs, net, sim::NegotiationModel::Prior(net, 161), so, &trace)
            .ok());
    RunInfo run = trace.run;
    run.steps_planned = 3;
    EXPECT_TRUE(store_->CreateRun(&run).ok());
    for (const StepTrace& s : trace.steps) EXPECT_TRUE(store_->AppendStep(run.id, s).ok());
    EXPECT_TRUE(store_->FinishRun(run.id, true).ok());
    return run.id;
  }

  sim::NetworkModel Network() const {
    return sim::NetworkModel::FromParams(sim::NetworkParams::Uniform(40, 115), Topo(2, 2));
  }

  void AddCalibration() {
    Calibration cal = sim::SynthesizeCalibration(Network());
    ASSERT_TRUE(store_->SaveCalibration(&cal).ok());
  }

  Trace Load(int64_t run) {
    Trace trace;
    EXPECT_TRUE(store_->LoadTrace(run, &trace).ok());
    return trace;
  }

  // Runs `timeline` on run into out; returns the parsed file.
  json Timeline(int64_t run, const std::string& out) {
    const CommandResult r =
        RunAutotune("timeline --db " + db_ + " --run " + std::to_string(run) + " --out " + out);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(LineCount(r.out), 1) << r.out;
    EXPECT_NE(r.out.find(out), std::string::npos) << r.out;
    return json::parse(ReadFile(out));
  }

  // No temporary file of an atomic write is left in the directory.
  void ExpectNoTemporaryFiles() {
    for (const auto& entry : std::filesystem::directory_iterator(dir_.path())) {
      EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << entry.path();
    }
  }

  void ExpectOneLineFailure(const std::string& args, const std::string& needle) {
    const CommandResult r = RunAutotune("timeline " + args);
    EXPECT_NE(r.exit_code, 0) << r.out << r.err;
    EXPECT_EQ(LineCount(r.err), 1) << "stderr was:\n" << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << "stderr was:\n" << r.err;
  }

  TempDir dir_;
  std::string db_;
  std::unique_ptr<Store> store_;
};

// The file against the trace: a process "allreduce.NAME" per tensor, and per tensor as many
// MPI_ALLREDUCE spans as the trace has collectives holding it (over all steps).
void ExpectMatchesTrace(const json& events, const Trace& trace) {
  std::map<int, std::string> names;
  std::map<int, int> comm_spans;
  for (const json& e : events) {
    if (e.value("name", "") == "process_name" && e["args"].contains("name")) {
      names[e["pid"]] = e["args"]["name"];
    }
    if (e["ph"] == "B" && e["name"] == "MPI_ALLREDUCE") ++comm_spans[e["pid"]];
  }
  std::map<std::string, int> spans_by_name;
  for (const auto& [pid, name] : names) spans_by_name[name] = comm_spans[pid];
  ASSERT_EQ(names.size(), trace.run.workload.tensors.size());
  std::map<std::string, int> expected;
  for (const TensorSpec& t : trace.run.workload.tensors) expected["allreduce." + t.name] = 0;
  for (const StepTrace& s : trace.steps) {
    for (const CollectiveRecord& c : s.collectives) {
      for (int t : c.tensors) ++expected["allreduce." + trace.run.workload.tensors[t].name];
    }
  }
  EXPECT_EQ(spans_by_name, expected);
}

TEST_F(TimelineCliTest, MeasuredRunBecomesAHorovodTimeline) {
  const int64_t run = AddRun();
  const Trace trace = Load(run);
  const json events = Timeline(run, dir_.File("t.json"));
  ExpectMatchesTrace(events, trace);
  size_t collectives = 0;
  for (const StepTrace& s : trace.steps) collectives += s.collectives.size();
  EXPECT_GT(collectives, 3 * 2u);  // fused: fewer collectives than tensors, more than one
  std::set<std::string> ticks;
  for (const json& e : events) {
    if (e["ph"] == "X") ticks.insert(e["name"].get<std::string>());
  }
  EXPECT_EQ(ticks, (std::set<std::string>{"0", "1", "2", "3"}));
  ExpectNoTemporaryFiles();
}

TEST_F(TimelineCliTest, SimulatedRunWithAndWithoutStoredSteps) {
  AddCalibration();
  const int64_t run = AddRun();
  const CommandResult sim = RunAutotune("simulate --json --db " + db_ + " --run " +
                                        std::to_string(run) + " --fusion-threshold-mb 1");
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  const int64_t simulated = json::parse(sim.out).at("run").get<int64_t>();
  const Trace stored = Load(simulated);
  ASSERT_EQ(stored.steps.size(), 3u);
  const json from_stored = Timeline(simulated, dir_.File("stored.json"));
  ExpectMatchesTrace(from_stored, stored);

  // The same simulated run without its steps: replayed again, the same timeline.
  RunInfo empty = stored.run;
  ASSERT_TRUE(store_->CreateRun(&empty).ok());
  ASSERT_TRUE(store_->FinishRun(empty.id, true).ok());
  ASSERT_TRUE(Load(empty.id).steps.empty());
  json replayed = Timeline(empty.id, dir_.File("replayed.json"));
  json expected = from_stored;
  // pid 0's start time is the run's creation time: the one event allowed to differ.
  replayed[0]["args"].clear();
  expected[0]["args"].clear();
  EXPECT_EQ(replayed, expected);
}

TEST_F(TimelineCliTest, BadInputGivesOneLineAndLeavesTheOutputAsItWas) {
  const int64_t run = AddRun();
  RunInfo stepless = Load(run).run;
  ASSERT_TRUE(store_->CreateRun(&stepless).ok());
  ASSERT_TRUE(store_->FinishRun(stepless.id, false).ok());
  // Simulated runs stored without steps: one whose source cannot be replayed (no
  // calibration in the database), one that names no source.
  RunInfo unreplayable = stepless;
  unreplayable.kind = RunKind::kSimulated;
  unreplayable.source_run = run;
  ASSERT_TRUE(store_->CreateRun(&unreplayable).ok());
  RunInfo sourceless = unreplayable;
  sourceless.source_run = 0;
  ASSERT_TRUE(store_->CreateRun(&sourceless).ok());
  const std::string out = dir_.File("t.json", "old contents\n");
  auto at = [&](int64_t id) { return "--db " + db_ + " --run " + std::to_string(id) + " --out "; };
  ExpectOneLineFailure(at(99) + out, "run 99 not found");
  ExpectOneLineFailure(at(stepless.id) + out, "has no recorded steps");
  ExpectOneLineFailure(
      at(unreplayable.id) + out,
      "cannot be replayed from run " + std::to_string(run) + ": no calibration for topology 2x2");
  ExpectOneLineFailure(at(sourceless.id) + out, "names no source run");
  ExpectOneLineFailure("--db " + dir_.File("none.db") + " --run 1 --out " + out, "none.db");
  ExpectOneLineFailure("--db " + db_ + " --run 1 --out " + dir_.path() + "/no/such/dir/t.json",
                       "cannot write " + dir_.path() + "/no/such/dir/t.json");
  ExpectOneLineFailure("--db " + db_ + " --run 1 --out " + dir_.path(),
                       "cannot write " + dir_.path());
  ExpectOneLineFailure("--db " + db_ + " --run 1", "--out");
  EXPECT_EQ(ReadFile(out), "old contents\n");
  EXPECT_FALSE(std::filesystem::exists(dir_.File("none.db")));
  ExpectNoTemporaryFiles();
}

}  // namespace
}  // namespace autotune::testing
