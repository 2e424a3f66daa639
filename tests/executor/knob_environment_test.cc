// The per-launch knobs reach the process environment, in the libraries' own spellings,
// before the libraries start.
#include "executor/knob_environment.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>
#include <string>

#include "tests/support/cli.h"

namespace autotune::executor {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "<unset>" : v;
}

TEST(KnobEnvironment, NcclKnobsSetNcclsVariablesInNcclsSpelling) {
  Knobs k;
  k.nccl_algo = "tree";
  k.nccl_proto = "ll";
  k.nccl_max_nchannels = 4;
  ASSERT_TRUE(ApplyKnobEnvironment(k, KnobLibrary::kNccl).ok());
  EXPECT_EQ(Env("NCCL_ALGO"), "Tree");
  EXPECT_EQ(Env("NCCL_PROTO"), "LL");
  EXPECT_EQ(Env("NCCL_MAX_NCHANNELS"), "4");
  k.nccl_algo = "collnet";  // both CollNet algorithms; NCCL rejects the bare word
  k.nccl_proto = "ll128";
  ASSERT_TRUE(ApplyKnobEnvironment(k, KnobLibrary::kNccl).ok());
  EXPECT_EQ(Env("NCCL_ALGO"), "CollNetDirect,CollNetChain");
  EXPECT_EQ(Env("NCCL_PROTO"), "LL128");
  k.nccl_algo = "nvlstree";
  ASSERT_TRUE(ApplyKnobEnvironment(k, KnobLibrary::kNccl).ok());
  EXPECT_EQ(Env("NCCL_ALGO"), "NVLSTree");
}

TEST(KnobEnvironment, DefaultKnobsUnsetWhatTheShellExported) {
  setenv("NCCL_ALGO", "Ring", 1);
  setenv("NCCL_PROTO", "Simple", 1);
  setenv("NCCL_MAX_NCHANNELS", "2", 1);
  ASSERT_TRUE(ApplyKnobEnvironment(Knobs(), KnobLibrary::kNccl).ok());
  EXPECT_EQ(Env("NCCL_ALGO"), "<unset>");
  EXPECT_EQ(Env("NCCL_PROTO"), "<unset>");
  EXPECT_EQ(Env("NCCL_MAX_NCHANNELS"), "<unset>");
}

TEST(KnobEnvironment, OpenMpiAlgorithmNeedsDynamicRules) {
  Knobs k;
  k.mpi_allreduce_algorithm = 4;
  ASSERT_TRUE(ApplyKnobEnvironment(k, KnobLibrary::kOpenMpi).ok());
  EXPECT_EQ(Env("OMPI_MCA_coll_tuned_use_dynamic_rules"), "1");
  EXPECT_EQ(Env("OMPI_MCA_coll_tuned_allreduce_algorithm"), "4");
  ASSERT_TRUE(ApplyKnobEnvironment(Knobs(), KnobLibrary::kOpenMpi).ok());
  EXPECT_EQ(Env("OMPI_MCA_coll_tuned_use_dynamic_rules"), "<unset>");
  EXPECT_EQ(Env("OMPI_MCA_coll_tuned_allreduce_algorithm"), "<unset>");
}

// What Open MPI itself reads from this process's environment: `ompi_info --parsable`'s
// "mca:FRAMEWORK:COMPONENT:param:NAME:value:" and ":source:" lines for `param`.
struct McaParam {
  std::string value = "<none>";
  std::string source = "<none>";
};
McaParam OmpiInfo(const std::string& framework, const std::string& component,
                  const std::string& param) {
  testing::TempDir dir;
  const testing::CommandResult r = testing::RunCommand(
      {"ompi_info", "--param", framework, component, "--level", "9", "--parsable"}, dir.path());
  McaParam out;
  std::istringstream lines(r.out);
  const std::string key = ":param:" + param + ":";
  for (std::string line; std::getline(lines, line);) {
    const size_t at = line.find(key);
    if (at == std::string::npos) continue;
    const std::string rest = line.substr(at + key.size());
    if (rest.rfind("value:", 0) == 0) out.value = rest.substr(6);
    if (rest.rfind("source:", 0) == 0) out.source = rest.substr(7);
  }
  return out;
}

TEST(KnobEnvironment, OpenMpiReadsTheVariablesAsItsOwnParameters) {
  Knobs k;
  k.mpi_tcp_eager_limit = 131072;
  k.mpi_allreduce_algorithm = 4;
  ASSERT_TRUE(ApplyKnobEnvironment(k, KnobLibrary::kOpenMpi).ok());
  EXPECT_EQ(Env("OMPI_MCA_btl_tcp_eager_limit"), "131072");
  const McaParam eager = OmpiInfo("btl", "tcp", "btl_tcp_eager_limit");
  EXPECT_EQ(eager.value, "131072");
  EXPECT_EQ(eager.source, "environment");
  const McaParam algorithm = OmpiInfo("coll", "tuned", "coll_tuned_allreduce_algorithm");
  EXPECT_EQ(algorithm.value, "ring");  // Open MPI's id 4
  EXPECT_EQ(algorithm.source, "environment");
  // At the default, the variables are unset and Open MPI is back on its own value.
  ASSERT_TRUE(ApplyKnobEnvironment(Knobs(), KnobLibrary::kOpenMpi).ok());
  EXPECT_EQ(Env("OMPI_MCA_btl_tcp_eager_limit"), "<unset>");
  EXPECT_EQ(OmpiInfo("btl", "tcp", "btl_tcp_eager_limit").source, "default");
}

TEST(KnobEnvironment, OneLibrarysVariablesLeaveTheOthersAlone) {
  setenv("NCCL_DEBUG", "INFO", 1);
  setenv("HOROVOD_CYCLE_TIME", "7", 1);
  ASSERT_TRUE(ApplyKnobEnvironment(Knobs(), KnobLibrary::kNccl).ok());
  EXPECT_EQ(Env("NCCL_DEBUG"), "INFO");
  EXPECT_EQ(Env("HOROVOD_CYCLE_TIME"), "7");
  unsetenv("NCCL_DEBUG");
  unsetenv("HOROVOD_CYCLE_TIME");
}

TEST(KnobEnvironment, FailuresNameTheVariable) {
  Status st = ApplyEnvironment({{"BAD=NAME", "1"}});
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("setenv(BAD=NAME=1)"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace autotune::executor
