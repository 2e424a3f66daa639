// `record` and `calibrate` with `--backend nccl` end to end on a GPU (the autotune binary,
// one rank): the run is complete and verified and says nccl and the GPU;
// the calibration has every curve of one rank plus the copy kernel's. Without a CUDA
// device it prints the one line "SKIP: no CUDA device" and passes (ctest: skipped).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "executor/calibrate.h"
#include "executor/nccl/nccl_factory.h"
#include "tests/support/cli.h"

namespace autotune {
namespace {

namespace fs = std::filesystem;
using testing::AutotuneBinary;
using testing::CommandResult;
using testing::QueryInt;
using testing::QueryText;
using testing::RunCommand;
using testing::TempDir;

class NcclCliGpuTest : public ::testing::Test {
 protected:
  TempDir temp_;
  const fs::path dir_ = temp_.path();
  const fs::path db_ = dir_ / "runs.db";
};

std::string GpuName() {
  cudaDeviceProp p{};
  return cudaGetDeviceProperties(&p, 0) == cudaSuccess ? p.name : "";
}

TEST_F(NcclCliGpuTest, RecordIsCompleteVerifiedAndSaysNcclAndTheGpu) {
  const CommandResult r =
      RunCommand({AutotuneBinary(), "record", "--np", "1", "--backend", "nccl", "--workload",
                  "resnet50", "--scale", "0.05", "--steps", "3", "--json", "--db", db_.string()},
                 dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["complete"], true);
  EXPECT_EQ(j["verified"], true);
  EXPECT_EQ(j["steps"], 3);
  EXPECT_EQ(j["backend"], "nccl");
  EXPECT_GT(j["score_bytes_per_s"].get<double>(), 0.0);
  const std::string run = std::to_string(j["run"].get<int64_t>());
  EXPECT_EQ(QueryText(db_, "SELECT backend FROM runs WHERE id=" + run), "nccl");
  const std::string hardware = QueryText(db_, "SELECT hardware FROM runs WHERE id=" + run);
  const std::string gpu = GpuName();
  ASSERT_FALSE(gpu.empty());
  EXPECT_NE(hardware.find(gpu), std::string::npos) << hardware;
  EXPECT_NE(hardware.find("NCCL"), std::string::npos) << hardware;
  EXPECT_EQ(QueryInt(db_, "SELECT complete FROM runs WHERE id=" + run), 1);
  EXPECT_EQ(QueryInt(db_, "SELECT COUNT(*) FROM tensor_events WHERE run_id=" + run), 3 * 161);
  EXPECT_EQ(QueryInt(db_, "SELECT COUNT(*) FROM tensor_events WHERE run_id=" + run +
                              " AND done_us < ready_us"),
            0);
  EXPECT_EQ(QueryInt(db_, "SELECT COUNT(DISTINCT step) FROM collectives WHERE run_id=" + run), 3);
}

TEST_F(NcclCliGpuTest, CalibrateStoresEveryCurveOfOneRankAndTheCopyKernel) {
  const CommandResult r = RunCommand({AutotuneBinary(), "calibrate", "--np", "1", "--backend",
                                      "nccl", "--json", "--db", db_.string()},
                                     dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["backend"], "nccl");
  const executor::CalibrateOptions defaults;
  const size_t sizes = executor::CalibrationSizes(defaults.min_bytes, defaults.max_bytes).size();
  std::map<std::pair<std::string, std::string>, size_t> count;  // (scope, op) -> points
  for (const nlohmann::json& p : j["points"]) {
    ++count[{p["scope"].get<std::string>(), p["op"].get<std::string>()}];
    EXPECT_GT(p["median_us"].get<double>(), 0.0) << p.dump();
    EXPECT_LE(p["min_us"].get<double>(), p["median_us"].get<double>()) << p.dump();
    EXPECT_LE(p["median_us"].get<double>(), p["max_us"].get<double>()) << p.dump();
  }
  for (const char* op : {"allreduce", "allgather"}) {
    EXPECT_EQ((count[{"world", op}]), sizes) << op;
    EXPECT_EQ((count[{"hierarchical", op}]), sizes) << op;
  }
  EXPECT_EQ((count[{"copy", "allreduce"}]), sizes);
  const std::string id = std::to_string(j["calibration"].get<int64_t>());
  EXPECT_EQ(QueryText(db_, "SELECT backend FROM calibrations WHERE id=" + id), "nccl");
  EXPECT_NE(QueryText(db_, "SELECT hardware FROM calibrations WHERE id=" + id).find(GpuName()),
            std::string::npos);
  EXPECT_EQ(QueryInt(db_, "SELECT COUNT(*) FROM calibration_points WHERE calibration_id=" + id +
                              " AND scope='copy'"),
            static_cast<int64_t>(sizes));
}

}  // namespace
}  // namespace autotune

int main(int argc, char** argv) {
  if (autotune::executor::CudaDeviceCount() == 0) {
    std::printf("SKIP: no CUDA device\n");
    return 0;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
