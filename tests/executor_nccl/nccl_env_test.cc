// The per-launch NCCL knobs reach the process environment before NCCL starts.
#include "executor/nccl/nccl_env.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace autotune::executor {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "<unset>" : v;
}

TEST(NcclEnv, KnobsSetNcclsVariables) {
  Knobs k;
  k.nccl_algo = "tree";
  k.nccl_proto = "ll";
  k.nccl_max_nchannels = 4;
  ASSERT_TRUE(ApplyNcclKnobEnvironment(k).ok());
  EXPECT_EQ(Env("NCCL_ALGO"), "Tree");
  EXPECT_EQ(Env("NCCL_PROTO"), "LL");
  EXPECT_EQ(Env("NCCL_MAX_NCHANNELS"), "4");
}

TEST(NcclEnv, DefaultKnobsUnsetWhatTheShellExported) {
  setenv("NCCL_ALGO", "Ring", 1);
  setenv("NCCL_PROTO", "Simple", 1);
  setenv("NCCL_MAX_NCHANNELS", "2", 1);
  ASSERT_TRUE(ApplyNcclKnobEnvironment(Knobs()).ok());
  EXPECT_EQ(Env("NCCL_ALGO"), "<unset>");
  EXPECT_EQ(Env("NCCL_PROTO"), "<unset>");
  EXPECT_EQ(Env("NCCL_MAX_NCHANNELS"), "<unset>");
}

TEST(NcclEnv, OtherVariablesAreLeftAlone) {
  setenv("NCCL_DEBUG", "INFO", 1);
  ASSERT_TRUE(ApplyNcclKnobEnvironment(Knobs()).ok());
  EXPECT_EQ(Env("NCCL_DEBUG"), "INFO");
  unsetenv("NCCL_DEBUG");
}

TEST(NcclEnv, FailuresNameTheVariable) {
  Status st = ApplyEnvironment({{"BAD=NAME", "1"}});
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("setenv(BAD=NAME=1)"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace autotune::executor
