// The ready log end to end: autotune_torch.horovod_ready's Recorder on a REAL
// torch model (Debian's torch; no Horovod needed: rank and size are given)
// writes each rank's gradient- ready times, and the import's reader
// (formats/horovod_ready_log.h) reads them back; a malformed or foreign file is
// refused in one line. Skipped, with one line, where /usr/bin/python3 cannot
// import torch.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "formats/horovod_ready_log.h"
#include "tests/support/cli.h"

namespace autotune {
namespace {

namespace fs = std::filesystem;
using testing::CommandResult;
using testing::ReadFile;
using testing::RunCommand;
using testing::TempDir;
using testing::WriteFile;

const char* const kPython = "/usr/bin/python3";

// tests/torch/tiny_model.py's model through 3 steps on "rank" R of 2.
CommandResult Record(const fs::path& dir, int rank) {
  const std::string script =
      "import sys, torch\n"
      "sys.path[:0] = ['" AUTOTUNE_SOURCE_DIR "/python', '" AUTOTUNE_SOURCE_DIR
      "/tests/torch']\n"
      "import tiny_model\n"
      "from autotune_torch import horovod_ready\n"
      "torch.manual_seed(0)\n"
      "m = tiny_model.build()\n"
      "ready = horovod_ready.Recorder(m.named_parameters(), sys.argv[1], "
      "rank=int(sys.argv[2]),"
      " size=2)\n"
      "for _ in range(3):\n"
      "    ready.step()\n"
      "    m(torch.randn(2, 3, 4, 4)).sum().backward()\n";
  return RunCommand({"env", "OMP_NUM_THREADS=1", kPython, "-c", script, (dir / "ready").string(),
                     std::to_string(rank)},
                    dir);
}

TEST(HorovodReadyLogTest, TheRecordersFilesReadBackInBackwardOrder) {
  if (RunCommand({kPython, "-c", "import torch"}, fs::temp_directory_path()).exit_code != 0) {
    GTEST_SKIP() << kPython << " cannot import torch (python3-torch)";
  }
  TempDir temp;
  const fs::path root = temp.path();
  for (int rank : {0, 1}) {
    const CommandResult r = Record(root, rank);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  HorovodReadyLog log;
  const Status s = ReadHorovodReadyLog((root / "ready").string(), &log);
  ASSERT_TRUE(s.ok()) << s.message();
  // Horovod's names for DistributedOptimizer's parameters, in
  // named_parameters() order (the module's own parameter first); "unused" never
  // gets a gradient.
  EXPECT_EQ(log.tensors, (std::vector<std::string>{
                             "allreduce.unused", "allreduce.body.1.weight", "allreduce.body.1.bias",
                             "allreduce.body.3.weight", "allreduce.body.3.bias"}));
  ASSERT_EQ(log.ranks(), 2);
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(log.ready_us[r].size(), 3u);
    for (size_t k = 0; k < 3; ++k) {
      const std::vector<double>& t = log.ready_us[r][k];
      EXPECT_LT(t[0], 0.0);  // no gradient
      for (int i = 1; i < 5; ++i) EXPECT_GT(t[i], 0.0) << r << " " << k << " " << i;
      // The backward pass reaches the last layer first.
      EXPECT_LT(t[4], t[2]);
      EXPECT_LT(t[3], t[1]);
      if (k > 0) {  // steps follow on the wall clock, each past the last one's
                    // gradients
        EXPECT_GT(log.step_start_epoch_us[r][k],
                  log.step_start_epoch_us[r][k - 1] + log.ready_us[r][k - 1][1]);
      }
    }
  }
  // Rank 1's file of another size, another clock, its tensors renamed; rank 1
  // missing.
  const std::string one = ReadFile((root / "ready" / "rank1.json").string());
  const auto with = [&](const std::string& from, const std::string& to) {
    std::string text = one;
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    WriteFile((root / "ready" / "rank1.json").string(), text.replace(at, from.size(), to));
    return ReadHorovodReadyLog((root / "ready").string(), &log).message();
  };
  const std::string file = (root / "ready" / "rank1.json").string();
  EXPECT_EQ(with("\"size\": 2", "\"size\": 3"), file + ": \"size\" must be 2, rank 0's");
  EXPECT_EQ(with("CLOCK_REALTIME", "CLOCK_MONOTONIC"),
            file +
                ": \"clock\" must be \"CLOCK_REALTIME\" (the clock of the timeline's "
                "start_time_since_epoch_in_micros)");
  EXPECT_EQ(with("body.3.bias", "body.3.beta"),
            file + ": another job's file (its tensors differ from rank 0's)");
  EXPECT_EQ(with("\"ready_us\": [", "\"ready_us\": [-1, "),
            file + ": step 0: \"ready_us\" must list one time per tensor (5)");
  EXPECT_EQ(with("autotune-horovod-ready", "autotune-ddp-trace"),
            file + ": not an autotune Horovod ready log (\"format\")");
  fs::remove(file);
  EXPECT_EQ(ReadHorovodReadyLog((root / "ready").string(), &log)
                .message()
                .rfind("cannot read ready log " + file, 0),
            0u);
  EXPECT_EQ(ReadHorovodReadyLog((root / "nowhere").string(), &log).message(),
            "cannot read ready log " + (root / "nowhere").string() + ": no such folder");
}

}  // namespace
}  // namespace autotune
