// The DDP trace import (formats/ddp_trace.h) on hand-made rank files of two ranks.
#include "formats/ddp_trace.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "formats/import_options.h"

namespace autotune {
namespace {

namespace fs = std::filesystem;

class DdpTraceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("autotune_ddp_trace_test_" + std::to_string(::testing::UnitTest::GetInstance()
                                                            ->random_seed()) +
            "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Rank r's file: two parameters (p0: 1000 floats, p1: 2000), the same step twice (the first
  // is the warm-up), p1 ready first and bucketed alone (DDP bucket 0), then p0 (bucket 1).
  // steps: forward end, p1 ready, p0 ready, bucket 0 start/end, bucket 1 start/end, step end.
  void WriteRank(int rank, const std::vector<double>& t) {
    const std::string step =
        "{\"forward_end_us\": " + std::to_string(t[0]) + ", \"end_us\": " +
        std::to_string(t[7]) + ", \"ready_us\": [" + std::to_string(t[2]) + ", " +
        std::to_string(t[1]) + "], \"buckets\": [{\"index\": 0, \"parameters\": [1], " +
        "\"start_us\": " + std::to_string(t[3]) + ", \"end_us\": " + std::to_string(t[4]) +
        "}, {\"index\": 1, \"parameters\": [0], \"start_us\": " + std::to_string(t[5]) +
        ", \"end_us\": " + std::to_string(t[6]) + "}]}";
    std::ofstream(dir_ / ("rank" + std::to_string(rank) + ".json"))
        << "{\"format\": \"autotune-ddp-trace\", \"version\": 1, \"rank\": " << rank
        << ", \"world_size\": 2, \"hostname\": \"node0\", \"backend\": \"gloo\", "
        << "\"device\": \"cpu\", \"bucket_cap_mb\": 25, \"first_bucket_mb\": 1, "
        << "\"gradient_as_bucket_view\": false, \"parameters\": ["
        << "{\"name\": \"p0\", \"shape\": [1000], \"dtype\": \"float32\"}, "
        << "{\"name\": \"p1\", \"shape\": [2000], \"dtype\": \"float32\"}], \"steps\": ["
        << step << ", " << step << "]}";
  }

  Trace Import() {
    ImportOptions options;
    options.source = dir_.string();
    options.warmup_steps = 1;
    options.topology.nodes = 1;
    options.topology.ranks_per_node = 2;
    Trace trace;
    ImportSummary summary;
    const Status s = LoadDdpTrace(options, &trace, &summary);
    EXPECT_TRUE(s.ok()) << s.message();
    return trace;
  }

  fs::path dir_;
};

TEST_F(DdpTraceTest, ABucketRunsForItsShortestTimeOverTheRanks) {
  // Rank 0: forward ends at 1000, p1 ready 2000, p0 3000; bucket 0 (p1) 2100-9000 (6900 us),
  // bucket 1 (p0) 3100-12000 (8900 us); the step ends at 13000.
  WriteRank(0, {1000, 2000, 3000, 2100, 9000, 3100, 12000, 13000});
  // Rank 1 (its own clock, 500 us behind rank 0's) launched bucket 0 late: 4000-8500 (4500 us:
  // rank 0 waited 2400 us of its 6900 for it), bucket 1 3000-11500 (8500 us).
  WriteRank(1, {600, 3900, 2900, 4000, 8500, 3000, 11500, 12600});
  const Trace t = Import();
  ASSERT_EQ(t.steps.size(), 1u);
  const StepTrace& s = t.steps[0];
  ASSERT_EQ(s.collectives.size(), 2u);
  // Each ends at rank 0's end and ran the shortest time over the ranks: bucket 0 4500 us
  // (from 4500), bucket 1 8500 us (from 3500).
  EXPECT_DOUBLE_EQ(s.collectives[0].start_us, 4500.0);
  EXPECT_DOUBLE_EQ(s.collectives[0].copy_in_end_us, 4500.0);
  EXPECT_DOUBLE_EQ(s.collectives[0].comm_end_us, 9000.0);
  EXPECT_DOUBLE_EQ(s.collectives[0].end_us, 9000.0);
  EXPECT_DOUBLE_EQ(s.collectives[1].start_us, 3500.0);
  EXPECT_DOUBLE_EQ(s.collectives[1].end_us, 12000.0);
  // Every rank's gradients keep their own times: rank 1's p1 (tensor 0 in ready order) ready
  // at 3900, done with its bucket at 8500; p0 at 2900, done at 11500.
  std::vector<double> ready(2, -1.0), done(2, -1.0);
  for (const TensorEvent& e : s.tensors) {
    if (e.rank != 1) continue;
    ready[e.tensor] = e.ready_us;
    done[e.tensor] = e.done_us;
  }
  EXPECT_DOUBLE_EQ(ready[0], 3900.0);
  EXPECT_DOUBLE_EQ(done[0], 8500.0);
  EXPECT_DOUBLE_EQ(ready[1], 2900.0);
  EXPECT_DOUBLE_EQ(done[1], 11500.0);
}

TEST_F(DdpTraceTest, RankZerosTimeStandsWhenItWasTheLastToLaunch) {
  // Rank 1 launched both buckets before rank 0 and so ran them longer (7100, 9200 us): rank
  // 0's own times (6900, 8900) are the shortest, its launches stand.
  WriteRank(0, {1000, 2000, 3000, 2100, 9000, 3100, 12000, 13000});
  WriteRank(1, {1000, 1800, 2700, 1900, 9000, 2800, 12000, 13000});
  const Trace t = Import();
  ASSERT_EQ(t.steps[0].collectives.size(), 2u);
  EXPECT_DOUBLE_EQ(t.steps[0].collectives[0].start_us, 2100.0);
  EXPECT_DOUBLE_EQ(t.steps[0].collectives[1].start_us, 3100.0);
}

}  // namespace
}  // namespace autotune
