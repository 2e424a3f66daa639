// RunKind and BackendKind: the spellings the database stores, both ways.
#include <gtest/gtest.h>

#include "traces/backend_kind.h"
#include "traces/trace.h"

namespace autotune {
namespace {

TEST(RunKindsTest, BackendNamesRoundTrip) {
  EXPECT_STREQ(BackendName(BackendKind::kMpi), "mpi");
  EXPECT_STREQ(BackendName(BackendKind::kNccl), "nccl");
  for (BackendKind b : {BackendKind::kMpi, BackendKind::kNccl}) {
    BackendKind back = b == BackendKind::kMpi ? BackendKind::kNccl : BackendKind::kMpi;
    ASSERT_TRUE(ParseBackend(BackendName(b), &back).ok());
    EXPECT_EQ(back, b);
  }
  BackendKind out;
  const Status st = ParseBackend("NCCL", &out);
  EXPECT_EQ(st.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(st.message().find("\"NCCL\""), std::string::npos) << st.message();
}

TEST(RunKindsTest, RunKindNamesRoundTrip) {
  EXPECT_STREQ(RunKindName(RunKind::kMeasured), "measured");
  EXPECT_STREQ(RunKindName(RunKind::kSimulated), "simulated");
  EXPECT_STREQ(RunKindName(RunKind::kImported), "imported");
  for (RunKind k : {RunKind::kMeasured, RunKind::kSimulated, RunKind::kImported}) {
    RunKind back = k == RunKind::kMeasured ? RunKind::kSimulated : RunKind::kMeasured;
    ASSERT_TRUE(ParseRunKind(RunKindName(k), &back).ok());
    EXPECT_EQ(back, k);
  }
  // Imported runs measured the real job; only simulated ones did not.
  EXPECT_TRUE(IsMeasuredKind(RunKind::kMeasured));
  EXPECT_TRUE(IsMeasuredKind(RunKind::kImported));
  EXPECT_FALSE(IsMeasuredKind(RunKind::kSimulated));
  RunKind out;
  const Status st = ParseRunKind("replayed", &out);
  EXPECT_EQ(st.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(st.message().find("\"replayed\""), std::string::npos) << st.message();
}

}  // namespace
}  // namespace autotune
