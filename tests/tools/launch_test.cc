// tools/launch: the mpirun command line that --np N builds.
#include "tools/launch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

namespace autotune::cli {
namespace {

bool Has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(LaunchTest, MpirunArgvDropsNpAndRunsThisExecutable) {
  unsetenv("AUTOTUNE_MPIRUN_ARGS");
  const std::vector<std::string> self = {"autotune", "record", "--np",    "4", "--workload",
                                         "vgg16",    "--np=2", "--steps", "5"};
  const std::vector<std::string> argv = MpirunArgv(4, self, "/opt/bin/autotune");
  ASSERT_GE(argv.size(), 4u);
  EXPECT_EQ(argv[1], "-np");
  EXPECT_EQ(argv[2], "4");
  for (const char* flag : {"--oversubscribe", "--allow-run-as-root", "--bind-to", "none",
                           "mpi_yield_when_idle", "--stdin", "AUTOTUNE_LAUNCH_STATUS",
                           "AUTOTUNE_PROGRESS_TTY"}) {
    EXPECT_TRUE(Has(argv, flag)) << flag;
  }
  const auto exe = std::find(argv.begin(), argv.end(), "/opt/bin/autotune");
  ASSERT_NE(exe, argv.end());
  EXPECT_EQ(std::vector<std::string>(exe + 1, argv.end()),
            (std::vector<std::string>{"record", "--workload", "vgg16", "--steps", "5"}));
}

TEST(LaunchTest, ExtraMpirunArgumentsGoBeforeTheProgram) {
  setenv("AUTOTUNE_MPIRUN_ARGS", "--hostfile  hosts --map-by node", 1);
  const std::vector<std::string> argv = MpirunArgv(2, {"autotune", "calibrate"}, "/x/autotune");
  unsetenv("AUTOTUNE_MPIRUN_ARGS");
  const auto hostfile = std::find(argv.begin(), argv.end(), "--hostfile");
  const auto exe = std::find(argv.begin(), argv.end(), "/x/autotune");
  ASSERT_NE(hostfile, argv.end());
  EXPECT_LT(hostfile, exe);
  EXPECT_EQ(*(hostfile + 1), "hosts");
  EXPECT_EQ(argv.back(), "calibrate");
}

TEST(LaunchTest, JoinCommandLineQuotesWhatTheShellWouldSplit) {
  EXPECT_EQ(JoinCommandLine({"autotune", "record", "--db", "my runs.db", ""}),
            "autotune record --db 'my runs.db' ''");
  // A quote inside a word survives the shell; plain words stay bare.
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(ShellQuote("--np=4"), "--np=4");
  EXPECT_EQ(ShellQuote("a$b"), "'a$b'");
}

TEST(LaunchTest, LaunchedByMpiReadsTheLauncherEnvironment) {
  unsetenv("OMPI_COMM_WORLD_SIZE");
  unsetenv("PMIX_RANK");
  unsetenv("PMI_SIZE");
  EXPECT_FALSE(LaunchedByMpi());
  setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
  EXPECT_TRUE(LaunchedByMpi());
  unsetenv("OMPI_COMM_WORLD_SIZE");
}

}  // namespace
}  // namespace autotune::cli
