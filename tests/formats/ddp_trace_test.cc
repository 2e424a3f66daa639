// The DDP trace import (formats/ddp_trace.h) on hand-made rank files of two ranks.
#include "formats/ddp_trace.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
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
  // With clock_ns >= 0 the file is a version 2 one: its steps start at clock_ns and
  // clock_ns + 20 ms on boot_id's CLOCK_MONOTONIC; with offset_error_ns >= 0 its clock's
  // offset from rank 0's was measured as offset_ns.
  void WriteRank(int rank, const std::vector<double>& t, int64_t clock_ns = -1,
                 const std::string& boot_id = "b00t", int64_t offset_ns = 0,
                 int64_t offset_error_ns = -1) {
    const auto step_at = [&](int64_t start_ns) {
      return "{" + (clock_ns < 0 ? "" : "\"start_ns\": " + std::to_string(start_ns) + ", ") +
             StepBody(t);
    };
    std::ofstream(dir_ / ("rank" + std::to_string(rank) + ".json"))
        << "{\"format\": \"autotune-ddp-trace\", \"version\": " << (clock_ns < 0 ? 1 : 2)
        << ", \"rank\": " << rank
        << (clock_ns < 0 ? ""
                         : ", \"clock\": {\"name\": \"CLOCK_MONOTONIC\", \"boot_id\": \"" +
                               boot_id + "\"" +
                               (offset_error_ns < 0
                                    ? std::string()
                                    : ", \"offset_to_rank0_ns\": " + std::to_string(offset_ns) +
                                          ", \"offset_error_ns\": " +
                                          std::to_string(offset_error_ns)) +
                               "}")
        << ", \"world_size\": " << world_ << ", \"hostname\": \"node0\", \"backend\": \"gloo\", "
        << "\"device\": \"cpu\", \"bucket_cap_mb\": 25, \"first_bucket_mb\": 1, "
        << "\"gradient_as_bucket_view\": false, \"parameters\": ["
        << "{\"name\": \"p0\", \"shape\": [1000], \"dtype\": \"float32\"}, "
        << "{\"name\": \"p1\", \"shape\": [2000], \"dtype\": \"float32\"}], \"steps\": ["
        << step_at(clock_ns) << ", " << step_at(clock_ns + 20000000) << "]}";
  }

  static std::string StepBody(const std::vector<double>& t) {
    return "\"forward_end_us\": " + std::to_string(t[0]) + ", \"end_us\": " +
        std::to_string(t[7]) + ", \"ready_us\": [" + std::to_string(t[2]) + ", " +
        std::to_string(t[1]) + "], \"buckets\": [{\"index\": 0, \"parameters\": [1], " +
        "\"start_us\": " + std::to_string(t[3]) + ", \"end_us\": " + std::to_string(t[4]) +
        "}, {\"index\": 1, \"parameters\": [0], \"start_us\": " + std::to_string(t[5]) +
        ", \"end_us\": " + std::to_string(t[6]) + "}]}";
  }

 public:
  // Rank 1's ready and done times by tensor (ready order) in step 0 of t (below).
  static void RankOneTimes(const Trace& t, std::vector<double>* ready, std::vector<double>* done);

 protected:
  Status TryImport(Trace* trace, ImportSummary* summary) {
    ImportOptions options;
    options.source = dir_.string();
    options.warmup_steps = 1;
    options.topology.nodes = 1;
    options.topology.ranks_per_node = world_;
    return LoadDdpTrace(options, trace, summary);
  }

  Trace Import(RankClocks* clocks = nullptr) {
    Trace trace;
    ImportSummary summary;
    const Status s = TryImport(&trace, &summary);
    EXPECT_TRUE(s.ok()) << s.message();
    if (clocks != nullptr) *clocks = summary.clocks;
    return trace;
  }

  // The files written from now on name `world` ranks (one node).
  void WriteWorld(int world) { world_ = world; }

  fs::path dir_;
  int world_ = 2;
};

void DdpTraceTest::RankOneTimes(const Trace& t, std::vector<double>* ready,
                                std::vector<double>* done) {
  ready->assign(2, -1.0);
  done->assign(2, -1.0);
  for (const TensorEvent& e : t.steps[0].tensors) {
    if (e.rank != 1) continue;
    (*ready)[e.tensor] = e.ready_us;
    (*done)[e.tensor] = e.done_us;
  }
}

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

// Rank 1 started each step 500 us after rank 0 (one kernel's clock, version 2 files). On its
// own clock: forward end 500, p1 ready 3400, p0 2400; bucket 0 (p1) 3500-8300, bucket 1 (p0)
// 2500-11500; step end 12500. On rank 0's clock every one of those is 500 us later.
constexpr int64_t kStartNs = 7000000000;
const std::vector<double> kRankZero = {1000, 2000, 3000, 2100, 9000, 3100, 12000, 13000};
const std::vector<double> kRankOneOwnClock = {500, 3400, 2400, 3500, 8300, 2500, 11500, 12500};

// The expectations of the files above with rank 1's times moved 500 us onto rank 0's clock.
void ExpectOnRankZerosClock(const Trace& t) {
  ASSERT_EQ(t.steps.size(), 1u);
  const StepTrace& s = t.steps[0];
  ASSERT_EQ(s.collectives.size(), 2u);
  // Bucket 0: rank 1 launched it at 3500 + 500 = 4000, after rank 0's 2100; it ends at rank
  // 0's 9000. Bucket 1: rank 0's launch at 3100 is the later (rank 1's 2500 + 500 = 3000).
  EXPECT_DOUBLE_EQ(s.collectives[0].start_us, 4000.0);
  EXPECT_DOUBLE_EQ(s.collectives[0].end_us, 9000.0);
  EXPECT_DOUBLE_EQ(s.collectives[1].start_us, 3100.0);
  EXPECT_DOUBLE_EQ(s.collectives[1].end_us, 12000.0);
  std::vector<double> ready, done;
  DdpTraceTest::RankOneTimes(t, &ready, &done);
  EXPECT_DOUBLE_EQ(ready[0], 3900.0);  // p1: 3400 + 500
  EXPECT_DOUBLE_EQ(done[0], 8800.0);   // its bucket's end on rank 1, 8300 + 500
  EXPECT_DOUBLE_EQ(ready[1], 2900.0);  // p0: 2400 + 500
  EXPECT_DOUBLE_EQ(done[1], 12000.0);
}

TEST_F(DdpTraceTest, RanksOnOneClockAreMovedOntoRankZerosAndABucketStartsAtItsLastLaunch) {
  WriteRank(0, kRankZero, kStartNs);
  WriteRank(1, kRankOneOwnClock, kStartNs + 500000);
  RankClocks clocks;
  const Trace t = Import(&clocks);
  EXPECT_EQ(clocks.kind, RankClocks::kOneKernel);
  ExpectOnRankZerosClock(t);
}

TEST_F(DdpTraceTest, RanksOfSeveralKernelsAreMovedByTheirMeasuredOffsets) {
  // The same job on two machines: rank 1's clock reads 3 s more than rank 0's (as measured at
  // the job's start, within 40 us), so its step starts at kStartNs + 3 s + 500 us there. Each
  // rank's clock is its own kernel's; rank 0's offset is 0.
  WriteRank(0, kRankZero, kStartNs, "machine-a", 0, 0);
  WriteRank(1, kRankOneOwnClock, kStartNs + 3000000000 + 500000, "machine-b", 3000000000, 40000);
  RankClocks clocks;
  const Trace t = Import(&clocks);
  EXPECT_EQ(clocks.kind, RankClocks::kMeasuredOffsets);
  EXPECT_DOUBLE_EQ(clocks.offset_error_us, 40.0);
  ExpectOnRankZerosClock(t);
  // On one kernel a measured offset is not used (the clock is the same one).
  WriteRank(0, kRankZero, kStartNs, "b00t", 0, 0);
  WriteRank(1, kRankOneOwnClock, kStartNs + 500000, "b00t", 777000, 40000);
  ExpectOnRankZerosClock(Import(&clocks));
  EXPECT_EQ(clocks.kind, RankClocks::kOneKernel);
  // Nor for a rank on rank 0's kernel beside one on another: rank 1 shares rank 0's kernel
  // (its offset, 777 us, is ignored); a third rank on another machine is moved by its own.
  WriteWorld(3);  // rank files 0-2 of a 3-rank job
  WriteRank(0, kRankZero, kStartNs, "b00t", 0, 0);
  WriteRank(1, kRankOneOwnClock, kStartNs + 500000, "b00t", 777000, 40000);
  WriteRank(2, kRankOneOwnClock, kStartNs - 2000000000 + 500000, "machine-c", -2000000000, 60000);
  const Trace three = Import(&clocks);
  EXPECT_EQ(clocks.kind, RankClocks::kMeasuredOffsets);
  EXPECT_DOUBLE_EQ(clocks.offset_error_us, 60.0);
  ExpectOnRankZerosClock(three);
  for (const TensorEvent& e : three.steps[0].tensors) {
    if (e.rank == 2) EXPECT_DOUBLE_EQ(e.ready_us, e.tensor == 0 ? 3900.0 : 2900.0);
  }
}

TEST_F(DdpTraceTest, RanksOfTwoKernelsKeepTheirOwnClocks) {
  // The same files, rank 1's clock another machine's (another boot id): its start says nothing
  // about rank 0's, so each rank's times stay its own and a bucket runs its shortest time:
  // bucket 0 min(6900, 8300 - 3500 = 4800) before 9000, bucket 1 min(8900, 9000) before 12000.
  WriteRank(0, kRankZero, kStartNs);
  WriteRank(1, kRankOneOwnClock, kStartNs + 500000, "another-machine");
  RankClocks clocks;
  clocks.kind = RankClocks::kOneKernel;
  const Trace t = Import(&clocks);
  EXPECT_EQ(clocks.kind, RankClocks::kOwn);
  ASSERT_EQ(t.steps[0].collectives.size(), 2u);
  EXPECT_DOUBLE_EQ(t.steps[0].collectives[0].start_us, 4200.0);
  EXPECT_DOUBLE_EQ(t.steps[0].collectives[1].start_us, 3100.0);
  std::vector<double> ready, done;
  RankOneTimes(t, &ready, &done);
  EXPECT_DOUBLE_EQ(ready[0], 3400.0);
  EXPECT_DOUBLE_EQ(ready[1], 2400.0);
  // One rank's file without the clock (version 1) beside a version 2 one: the same.
  WriteRank(1, kRankOneOwnClock);
  const Trace mixed = Import(&clocks);
  EXPECT_EQ(clocks.kind, RankClocks::kOwn);
  EXPECT_DOUBLE_EQ(mixed.steps[0].collectives[0].start_us, 4200.0);
}

TEST_F(DdpTraceTest, StepsThatDoNotLineUpAreRefused) {
  // Rank 1's kept step began 20 ms after rank 0's, which lasts 13 ms: not the same step.
  WriteRank(0, kRankZero, kStartNs);
  WriteRank(1, kRankOneOwnClock, kStartNs + 20000000);
  Trace t;
  t.run.id = 42;
  ImportSummary summary;
  const Status s = TryImport(&t, &summary);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("rank1.json: step 1 starts 20 ms from rank 0's, which lasts 13 ms: "
                             "the ranks' steps do not line up"),
            std::string::npos)
      << s.message();
  EXPECT_EQ(t.run.id, 42) << "the trace is left as it was";
}

TEST_F(DdpTraceTest, AMalformedClockIsNamed) {
  WriteRank(0, kRankZero, kStartNs);
  WriteRank(1, kRankOneOwnClock, kStartNs);
  std::ifstream in(dir_ / "rank1.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  in.close();
  const std::string negative = "\"start_ns\": -5";
  text.replace(text.find("\"start_ns\": "), std::string("\"start_ns\": ").size() +
                                                 std::to_string(kStartNs).size(),
               negative);
  std::ofstream(dir_ / "rank1.json") << text;
  Trace t;
  ImportSummary summary;
  Status s = TryImport(&t, &summary);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("rank1.json: step 0: \"start_ns\" must not be negative"),
            std::string::npos)
      << s.message();
  WriteRank(1, kRankOneOwnClock, kStartNs);
  std::ofstream(dir_ / "rank0.json") << "{\"format\": \"autotune-ddp-trace\", \"rank\": 0, "
                                        "\"world_size\": 2, \"clock\": \"monotonic\"}";
  s = TryImport(&t, &summary);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("rank0.json: \"clock\" must give \"name\" and \"boot_id\""),
            std::string::npos)
      << s.message();
  // An offset without the bound on its error.
  std::ofstream(dir_ / "rank0.json")
      << "{\"format\": \"autotune-ddp-trace\", \"rank\": 0, \"world_size\": 2, \"clock\": "
         "{\"name\": \"CLOCK_MONOTONIC\", \"boot_id\": \"b\", \"offset_to_rank0_ns\": 0}}";
  s = TryImport(&t, &summary);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("rank0.json: \"clock\": \"offset_error_ns\" must be an integer"),
            std::string::npos)
      << s.message();
}

}  // namespace
}  // namespace autotune
