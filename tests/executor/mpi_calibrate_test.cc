// RunCalibrate on 4 ranks: every scope the layout has, sane times, stored with the topology.
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine_harness.h"
#include "executor/backend_choice.h"
#include "executor/calibrate.h"
#include "executor/nccl/nccl_factory.h"
#include "store/store.h"

namespace autotune::executor {
namespace {

using test_support::AllRanksOk;

TEST(CalibrationSizesTest, DoublesFromMinAndEndsAtMax) {
  EXPECT_EQ(CalibrationSizes(1024, 8192), (std::vector<int64_t>{1024, 2048, 4096, 8192}));
  EXPECT_EQ(CalibrationSizes(1000, 5000), (std::vector<int64_t>{1000, 2000, 4000, 5000}));
  EXPECT_EQ(CalibrationSizes(6, 6), (std::vector<int64_t>{4}));  // multiples of 4
}

TEST(CalibrateTest, StoresEveryScopeOfTheLayout) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char dir[256] = {};
  if (rank == 0) {
    std::string tmpl = "/tmp/autotune_calib_XXXXXX";
    tmpl.copy(dir, sizeof(dir) - 1);
    if (mkdtemp(dir) == nullptr) dir[0] = '\0';
  }
  MPI_Bcast(dir, sizeof(dir), MPI_CHAR, 0, MPI_COMM_WORLD);
  CalibrateOptions options;
  options.min_bytes = 1024;
  options.max_bytes = 16384;
  options.repetitions = 3;
  options.db_path = std::string(dir) + "/calib.db";
  Calibration c;
  ASSERT_TRUE(AllRanksOk(RunCalibrate(options, &c)));
  EXPECT_GT(c.id, 0);
  EXPECT_EQ(c.topology.world_size(), size);

  std::map<std::pair<Scope, Op>, int> count;
  for (const CalibrationPoint& p : c.points) {
    ++count[{p.scope, p.op}];
    EXPECT_GT(p.median_us, 0.0);
    EXPECT_LE(p.min_us, p.median_us);
    EXPECT_LE(p.median_us, p.max_us);
    EXPECT_EQ(p.repetitions, 3);
  }
  const int sizes = 5;  // 1, 2, 4, 8, 16 KiB
  EXPECT_EQ((count[{Scope::kWorld, Op::kAllreduce}]), sizes);
  EXPECT_EQ((count[{Scope::kWorld, Op::kAllgather}]), sizes);
  EXPECT_EQ((count[{Scope::kHierarchical, Op::kAllreduce}]), sizes);
  EXPECT_EQ((count[{Scope::kHierarchical, Op::kAllgather}]), sizes);
  EXPECT_EQ((count[{Scope::kCopy, Op::kAllreduce}]), sizes);
  const int local = c.topology.ranks_per_node, nodes = c.topology.nodes;
  EXPECT_EQ((count[{Scope::kIntra, Op::kAllreduce}]), local > 1 ? sizes : 0);
  EXPECT_EQ((count[{Scope::kCross, Op::kAllreduce}]), nodes > 1 ? sizes : 0);
  EXPECT_EQ((count[{Scope::kCross, Op::kAllgather}]), nodes > 1 ? sizes : 0);

  if (rank == 0) {
    std::unique_ptr<Store> store;
    ASSERT_TRUE(Store::Open(options.db_path, Store::Mode::kReadOnly, &store).ok());
    Calibration stored;
    ASSERT_TRUE(store->GetCalibration(c.id, &stored).ok());
    EXPECT_EQ(stored.points.size(), c.points.size());
    EXPECT_TRUE(stored.topology.SameShape(c.topology));
    EXPECT_EQ(stored.backend, BackendKind::kMpi);
    store.reset();
    std::filesystem::remove_all(dir);
  }
}

TEST(CalibrateTest, UnusableBackendFailsOnEveryRankBeforeTheDatabase) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char dir[256] = {};
  if (rank == 0) {
    std::string tmpl = "/tmp/autotune_calib_XXXXXX";
    tmpl.copy(dir, sizeof(dir) - 1);
    if (mkdtemp(dir) == nullptr) dir[0] = '\0';
  }
  MPI_Bcast(dir, sizeof(dir), MPI_CHAR, 0, MPI_COMM_WORLD);
  ASSERT_NE(dir[0], '\0');
  std::vector<std::pair<std::string, std::string>> cases = {
      {"bogus", "--backend bogus: unknown backend"}};
  if (!NcclAvailable().ok()) cases.push_back({"nccl", "--backend nccl: "});
  for (const auto& [backend, expect] : cases) {
    CalibrateOptions options;
    options.db_path = std::string(dir) + "/never.db";
    Calibration c;
    // A name no backend has is refused where --backend is read.
    Status st = ParseBackendFlag(backend, &options.backend);
    if (st.ok()) st = RunCalibrate(options, &c);
    EXPECT_FALSE(st.ok()) << backend;
    EXPECT_NE(st.message().find(expect), std::string::npos) << st.message();
    EXPECT_EQ(st.message().find('\n'), std::string::npos) << "one line";
    EXPECT_FALSE(std::filesystem::exists(options.db_path)) << st.message();
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace autotune::executor
