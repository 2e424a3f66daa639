// tools/mpirun_output: Open MPI 4.1's own notices are taken out of mpirun's stderr and the
// dead rank is read from them; the ranks' own lines pass unchanged. The texts below are
// mpirun's, as it printed them here after `kill -9` of rank 3 of a 4-rank job.
#include "tools/mpirun_output.h"

#include <gtest/gtest.h>

#include <string>

namespace autotune::cli {
namespace {

const char* const kFrame =
    "--------------------------------------------------------------------------\n";

std::string KilledRankOutput() {
  return std::string("[vm:15921] Read -1, expected 1266612, errno = 3\n") + kFrame +
         "Primary job  terminated normally, but 1 process returned\n"
         "a non-zero exit code. Per user-direction, the job has been aborted.\n" +
         kFrame + kFrame +
         "mpirun noticed that process rank 3 with PID 0 on node node1 exited on signal 9 "
         "(Killed).\n" +
         kFrame;
}

TEST(MpirunOutputTest, ReadsTheDeadRankAndDropsTheNotices) {
  MpirunOutputFilter filter;
  std::string out;
  filter.Feed("autotune: warning: a rank's own line\n", &out);
  filter.Feed(KilledRankOutput(), &out);
  filter.Finish(&out);
  EXPECT_EQ(out, "autotune: warning: a rank's own line\n");
  ASSERT_TRUE(filter.dead().has_value());
  EXPECT_EQ(filter.dead()->rank, 3);
  EXPECT_EQ(filter.dead()->host, "node1");
  EXPECT_EQ(filter.dead()->signal, 9);
  EXPECT_EQ(filter.dead()->signal_name, "Killed");
}

TEST(MpirunOutputTest, LinesSplitAcrossReadsAreJoined) {
  const std::string all = "first line\n" + KilledRankOutput() + "last line without newline";
  MpirunOutputFilter filter;
  std::string out;
  for (char c : all) filter.Feed(std::string(1, c), &out);  // one byte per read
  filter.Finish(&out);
  EXPECT_EQ(out, "first line\nlast line without newline\n");
  ASSERT_TRUE(filter.dead().has_value());
  EXPECT_EQ(filter.dead()->rank, 3);
}

TEST(MpirunOutputTest, ANonZeroExitIsNoDeathAndANoticeNeverClosedIsPassedOn) {
  MpirunOutputFilter filter;
  std::string out;
  filter.Feed(std::string(kFrame) +
                  "mpirun detected that one or more processes exited with non-zero status, "
                  "thus causing\nthe job to be terminated.\n" + kFrame,
              &out);
  EXPECT_EQ(out, "");
  EXPECT_FALSE(filter.dead().has_value());
  EXPECT_EQ(filter.passed_lines(), 0);
  EXPECT_NE(filter.dropped().find("exited with non-zero status"), std::string::npos);
  filter.Feed(std::string(kFrame) + "cut off\n", &out);
  filter.Finish(&out);
  EXPECT_EQ(out, std::string(kFrame) + "cut off\n");
}

}  // namespace
}  // namespace autotune::cli
