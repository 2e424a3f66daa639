// `autotune record --like-run N` and `--compute` end to end (the binary launching 4 local
// ranks with --np 4): a run replaying a recorded run plays the same tensors in the same
// ready order, the compute mode is stored with each run, and bad input is one line.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "store/store.h"
#include "tests/support/cli.h"

namespace {

namespace fs = std::filesystem;
using autotune::Store;
using autotune::Trace;
using autotune::testing::AutotuneBinary;
using autotune::testing::CommandResult;
using autotune::testing::LineCount;
using autotune::testing::ReadFile;
using autotune::testing::RunCommand;
using autotune::testing::TempDir;

class RecordLikeRunTest : public ::testing::Test {
 protected:
  // `record --np 4` of 5 measured steps with extra flags.
  CommandResult Record(std::vector<std::string> extra) {
    std::vector<std::string> argv = {AutotuneBinary(), "record",     "--np",           "4",
                                     "--steps",        "5",          "--warmup-steps", "1",
                                     "--db",           db_.string(), "--json"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return RunCommand(argv, dir_);
  }
  Trace Load(int64_t run) {
    std::unique_ptr<Store> store;
    Trace trace;
    EXPECT_TRUE(Store::Open(db_.string(), Store::Mode::kReadOnly, &store).ok());
    if (store) {
      EXPECT_TRUE(store->LoadTrace(run, &trace).ok());
    }
    return trace;
  }
  TempDir temp_;
  const fs::path dir_ = temp_.path();
  const fs::path db_ = dir_ / "runs.db";
};

TEST_F(RecordLikeRunTest, ReplaysTheRunsTensorsInItsReadyOrderAndStoresTheComputeMode) {
  CommandResult first = Record({"--workload", "resnet50", "--scale", "0.02"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  CommandResult second = Record({"--like-run", "1"});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  const Trace a = Load(1), b = Load(2);

  // The workload: the same tensors, under the same name and scale.
  EXPECT_EQ(b.run.workload.name, "resnet50");
  EXPECT_DOUBLE_EQ(b.run.scale, 0.02);
  ASSERT_EQ(b.run.workload.tensors.size(), a.run.workload.tensors.size());
  ASSERT_EQ(b.run.workload.tensors.size(), 161u);
  for (size_t t = 0; t < a.run.workload.tensors.size(); ++t) {
    const auto& x = a.run.workload.tensors[t];
    const auto& y = b.run.workload.tensors[t];
    EXPECT_EQ(y.name, x.name);
    EXPECT_EQ(y.shape, x.shape);
    EXPECT_EQ(y.dtype, x.dtype);
    EXPECT_EQ(y.op, x.op);
  }
  // Ready order: the replayed ready times start at 0 and never decrease (run 1's ranks
  // readied the gradients in tensor order).
  EXPECT_DOUBLE_EQ(b.run.workload.tensors.front().ready_ms, 0.0);
  for (size_t t = 1; t < b.run.workload.tensors.size(); ++t) {
    EXPECT_LE(b.run.workload.tensors[t - 1].ready_ms, b.run.workload.tensors[t].ready_ms) << t;
  }
  EXPECT_DOUBLE_EQ(b.run.workload.backward_ms, b.run.workload.tensors.back().ready_ms);
  // Run 1's first gradient cannot be ready before its forward pass and first ready time.
  EXPECT_GE(b.run.workload.forward_ms,
            a.run.workload.forward_ms + a.run.workload.tensors.front().ready_ms);
  ASSERT_EQ(b.steps.size(), 5u);
  // The step time: the replayed compute lies inside each step; the same work in the same
  // mode gives the same order of magnitude (a generous factor: others may load the machine).
  const autotune::Workload& w = b.run.workload;
  EXPECT_GE(b.run.step_ms_median, w.backward_ms + w.optimizer_ms);
  EXPECT_GT(b.run.step_ms_median, a.run.step_ms_median / 10.0);
  EXPECT_LT(b.run.step_ms_median, a.run.step_ms_median * 10.0);

  // The compute mode is in the stored command and hardware, given or defaulted.
  EXPECT_NE(a.run.command.find("--compute spin"), std::string::npos) << a.run.command;
  EXPECT_NE(a.run.hardware.find("compute spin"), std::string::npos) << a.run.hardware;
  EXPECT_NE(b.run.command.find("--like-run 1"), std::string::npos) << b.run.command;
  EXPECT_NE(b.run.command.find("--compute spin"), std::string::npos) << b.run.command;
  EXPECT_EQ(b.run.hardware, a.run.hardware);
}

TEST_F(RecordLikeRunTest, SleepIsStoredWithTheRunAndCompareTellsTheModesApart) {
  ASSERT_EQ(Record({"--workload", "resnet50", "--scale", "0.02"}).exit_code, 0);
  CommandResult sleep = Record({"--workload", "resnet50", "--scale", "0.02", "--compute", "sleep"});
  ASSERT_EQ(sleep.exit_code, 0) << sleep.err;
  const Trace a = Load(1), b = Load(2);
  // A given --compute is stored once, as given.
  const size_t at = b.run.command.find("--compute sleep");
  EXPECT_NE(at, std::string::npos) << b.run.command;
  EXPECT_EQ(b.run.command.find("--compute", at + 1), std::string::npos) << b.run.command;
  EXPECT_NE(b.run.hardware.find("compute sleep"), std::string::npos) << b.run.hardware;

  // compare tells the two apart: both hardware strings, and a warning.
  CommandResult compare = RunCommand(
      {AutotuneBinary(), "compare", "--db", db_.string(), "--json", "1", "2"}, dir_.string());
  ASSERT_EQ(compare.exit_code, 0) << compare.err;
  const nlohmann::json j = nlohmann::json::parse(compare.out);
  EXPECT_EQ(j["a"]["hardware"], a.run.hardware);
  EXPECT_EQ(j["b"]["hardware"], b.run.hardware);
  bool warned = false;
  for (const auto& w : j["warnings"]) {
    warned |= w.get<std::string>().find("compute") != std::string::npos;
  }
  EXPECT_TRUE(warned) << j["warnings"].dump();
}

TEST_F(RecordLikeRunTest, BadInputGivesOneLineAndLeavesTheDatabaseUnchanged) {
  ASSERT_EQ(Record({"--workload", "resnet50", "--scale", "0.02"}).exit_code, 0);
  const std::string before = ReadFile(db_.string());
  const std::vector<std::vector<std::string>> cases = {
      {"--like-run", "9"},                         // no such run
      {"--like-run", "1", "--workload", "vgg16"},  // one or the other
      {"--like-run", "0"},                         // not a run id
      {"--workload", "resnet50", "--compute", "busy"},
  };
  for (const auto& c : cases) {
    CommandResult r = Record(c);
    EXPECT_NE(r.exit_code, 0) << c[0] << " " << c[1];
    EXPECT_EQ(LineCount(r.err), 1) << c[0] << " " << c[1] << ":\n" << r.err;
    EXPECT_NE(r.err.find(c[c.size() == 2 ? 0 : 2]), std::string::npos) << r.err;
    EXPECT_EQ(ReadFile(db_.string()), before) << c[0] << " " << c[1];
  }
}

}  // namespace
