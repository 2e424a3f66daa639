// `autotune apply`: the exported environment, exactly, and bad config files.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "formats/nccl_tuner_csv.h"
#include "tests/support/cli.h"

namespace autotune::testing {
namespace {

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

int CountLines(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

TEST(ApplyTest, PrintEnvExportsHorovodVariablesExactly) {
  TempDir dir;
  std::string config = dir.File("best.yaml",
                                "params:\n"
                                "  fusion_threshold_mb: 32\n"
                                "  cycle_time_ms: 3.5\n"
                                "  cache_capacity: 2048\n"
                                "  hierarchical_allreduce: true\n"
                                "  hierarchical_allgather: false\n");
  CommandResult r = RunAutotune("apply --config-file '" + config + "' --print-env");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "export HOROVOD_FUSION_THRESHOLD=33554432\n"
            "export HOROVOD_CYCLE_TIME=3.5\n"
            "export HOROVOD_CACHE_CAPACITY=2048\n"
            "export HOROVOD_HIERARCHICAL_ALLREDUCE=1\n"
            "export HOROVOD_HIERARCHICAL_ALLGATHER=0\n");
}

TEST(ApplyTest, BackendVariablesOnlyWhenSet) {
  TempDir dir;
  std::string config = dir.File("nccl.yaml",
                                "params:\n"
                                "  fusion_threshold_mb: 0.5\n"
                                "autotune_extra:\n"
                                "  nccl: {algo: ring, proto: ll128, max_nchannels: 8}\n"
                                "  mpi: {allreduce_algorithm: 4}\n");
  CommandResult r = RunAutotune("apply --config-file '" + config + "' --print-env");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "export HOROVOD_FUSION_THRESHOLD=524288\n"
            "export HOROVOD_CYCLE_TIME=1\n"
            "export HOROVOD_CACHE_CAPACITY=1024\n"
            "export HOROVOD_HIERARCHICAL_ALLREDUCE=0\n"
            "export HOROVOD_HIERARCHICAL_ALLGATHER=0\n"
            "export NCCL_ALGO=Ring\n"
            "export NCCL_PROTO=LL128\n"
            "export NCCL_MAX_NCHANNELS=8\n"
            "export OMPI_MCA_coll_tuned_use_dynamic_rules=1\n"
            "export OMPI_MCA_coll_tuned_allreduce_algorithm=4\n");
}

// apply exports NCCL's own spellings, the ones the executor sets for a run of the same knobs:
// NCCL rejects "collnet" and takes both CollNet algorithms by name.
TEST(ApplyTest, NcclAlgorithmInNcclsSpelling) {
  TempDir dir;
  std::string config = dir.File("collnet.yaml",
                                "autotune_extra:\n"
                                "  nccl: {algo: collnet, proto: simple}\n");
  CommandResult r = RunAutotune("apply --config-file '" + config + "' --print-env");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("export NCCL_ALGO=CollNetDirect,CollNetChain\n"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("export NCCL_PROTO=Simple\n"), std::string::npos) << r.out;
}

TEST(ApplyTest, WritesNcclTunerCsvAndExportsItsPath) {
  TempDir dir;
  std::string config = dir.File("nccl.yaml",
                                "autotune_extra:\n"
                                "  nccl: {algo: tree, proto: simple, max_nchannels: 4}\n");
  std::string csv = dir.File("tuner.csv");
  CommandResult r = RunAutotune(
      "apply --config-file '" + config + "' --nccl-tuner-csv '" + csv + "' --print-env");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("export NCCL_TUNER_CONFIG_FILE=" + csv + "\n"), std::string::npos)
      << r.out;
  std::vector<NcclTunerRule> rules;
  Status parsed = ParseNcclTunerCsv(ReadText(csv), csv, &rules);
  ASSERT_TRUE(parsed.ok()) << parsed.message();
  ASSERT_EQ(rules.size(), 2u);

  // Without an algorithm and protocol there is nothing to write: one line, nothing written.
  std::string plain = dir.File("plain.yaml", "params:\n  cycle_time_ms: 2\n");
  std::string none = dir.File("none.csv");
  r = RunAutotune("apply --config-file '" + plain + "' --nccl-tuner-csv '" + none +
                           "' --print-env");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(CountLines(r.err), 1) << r.err;
  EXPECT_FALSE(std::filesystem::exists(none));
}

TEST(ApplyTest, RunsTheCommandWithTheEnvironmentAndItsExitCode) {
  TempDir dir;
  std::string config =
      dir.File("best.yaml", "params: {fusion_threshold_mb: 32, cycle_time_ms: 2}\n");
  CommandResult r =
      RunAutotune("apply --config-file '" + config +
                           "' -- sh -c 'echo $HOROVOD_FUSION_THRESHOLD $HOROVOD_CYCLE_TIME "
                           "${NCCL_ALGO-unset}; exit 3'");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(r.out, "33554432 2 unset\n");
  CommandResult ok = RunAutotune("apply --config-file '" + config + "' -- true");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

// What no variable carries is said, one line each: num_groups (a training-script argument)
// and the executor's own nccl_cross away from its default; the exports stay as they were.
TEST(ApplyTest, KnobsWithoutAVariableAreNamedNotSilentlyDropped) {
  TempDir dir;
  std::string config = dir.File("groups.yaml",
                                "params: {cycle_time_ms: 2}\n"
                                "autotune_extra:\n"
                                "  num_groups: 4\n"
                                "  nccl: {cross: mpi}\n");
  CommandResult r = RunAutotune("apply --config-file '" + config + "' --print-env");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\n# num_groups=4 must be passed to hvd.DistributedOptimizer(num_groups=4) "
                       "in the training script; apply cannot set it\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\n# nccl_cross=mpi is a setting of autotune's executor"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("NUM_GROUPS"), std::string::npos) << r.out;
  r = RunAutotune("apply --config-file '" + config + "' -- true");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(CountLines(r.err), 2) << r.err;
  EXPECT_NE(r.err.find("autotune: note: num_groups=4 must be passed to "
                       "hvd.DistributedOptimizer(num_groups=4)"),
            std::string::npos)
      << r.err;
  // At their defaults nothing is left to set: no note.
  std::string plain = dir.File("plain.yaml", "autotune_extra: {num_groups: 0}\n");
  r = RunAutotune("apply --config-file '" + plain + "' -- true");
  EXPECT_EQ(r.err, "");
}

TEST(ApplyTest, MissingCommandIsAnError) {
  TempDir dir;
  std::string config = dir.File("best.yaml", "params: {cycle_time_ms: 2}\n");
  CommandResult r = RunAutotune("apply --config-file '" + config + "'");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("no command"), std::string::npos) << r.err;
  CommandResult missing =
      RunAutotune("apply --config-file '" + config + "' -- /nonexistent/program");
  EXPECT_EQ(missing.exit_code, 127);
  EXPECT_NE(missing.err.find("/nonexistent/program"), std::string::npos) << missing.err;
}

struct BadConfig {
  const char* name;
  const char* yaml;
  const char* must_mention;  // the key or value the one error line names
};

class ApplyBadConfigTest : public ::testing::TestWithParam<BadConfig> {};

TEST_P(ApplyBadConfigTest, OneClearLineAndTheCommandNeverRuns) {
  TempDir dir;
  std::string config = dir.File("bad.yaml", GetParam().yaml);
  std::string marker = dir.path() + "/ran";
  CommandResult r =
      RunAutotune("apply --config-file '" + config + "' -- touch '" + marker + "'");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_FALSE(std::filesystem::exists(marker)) << "the command ran despite a bad config";
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(CountLines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("bad.yaml"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(GetParam().must_mention), std::string::npos) << r.err;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ApplyBadConfigTest,
    ::testing::Values(
        BadConfig{"UnknownKey", "params:\n  fusion_treshold_mb: 32\n", "fusion_treshold_mb"},
        BadConfig{"NegativeValue", "params:\n  fusion_threshold_mb: -4\n", "fusion_threshold_mb"},
        BadConfig{"WrongType", "params:\n  cache_capacity: lots\n", "cache_capacity"},
        BadConfig{"OutOfRange", "params:\n  cycle_time_ms: 1000\n", "cycle_time_ms"},
        BadConfig{"Malformed", "params: [fusion_threshold_mb: 32\n", "bad.yaml"}),
    [](const ::testing::TestParamInfo<BadConfig>& info) { return info.param.name; });

TEST(ApplyTest, UnreadableFileIsNamed) {
  TempDir dir;
  CommandResult r =
      RunAutotune("apply --config-file '" + dir.path() + "/missing.yaml' -- true");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("missing.yaml"), std::string::npos) << r.err;
}

// A DDP config's variables reach the job through autotune's Python side, which the build copies
// beside the binary (build/python). A binary copied where no python/ is beside it refuses with
// one line instead of exporting a PYTHONPATH without the sitecustomize.
TEST(ApplyTest, DdpConfigFindsThePythonSideBesideTheBinaryOrSaysItIsMissing) {
  TempDir dir;
  const std::string config = dir.File("ddp.yaml", "ddp:\n  bucket_cap_mb: 1\n");
  CommandResult r = RunCommand({"env", "-u", "AUTOTUNE_TORCH_DIR", AutotuneBinary(), "apply",
                                "--config-file", config, "--print-env"},
                               dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string site =
      std::filesystem::canonical(std::filesystem::path(AutotuneBinary()).parent_path() /
                                 "python")
          .string();
  EXPECT_NE(r.out.find("export PYTHONPATH=" + site), std::string::npos) << r.out;
  EXPECT_TRUE(std::filesystem::is_regular_file(site + "/sitecustomize.py"));

  const std::filesystem::path bin = std::filesystem::path(dir.path()) / "bin";
  std::filesystem::create_directories(bin);
  std::filesystem::copy_file(AutotuneBinary(), bin / "autotune");
  r = RunCommand({"env", "-u", "AUTOTUNE_TORCH_DIR", (bin / "autotune").string(), "apply",
                  "--config-file", config, "--print-env"},
                 dir.path());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(CountLines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("sitecustomize.py"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("AUTOTUNE_TORCH_DIR"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace autotune::testing
