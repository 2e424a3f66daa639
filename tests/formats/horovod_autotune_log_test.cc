// Horovod's autotune log, out and in. The expected text is written by hand from Horovod 0.28.1's
// horovod/common/parameter_manager.cc:
//   line 82: the header, "hierarchical_allreduce,hierarchical_allgather,torus_allreduce,
//            cache_enabled,cycle_time_ms,tensor_fusion_threshold,score";
//   lines 279-285 (LogParameters) and 302-308 (LogBestParameters): each row, booleans through
//            operator<< (0/1), "," between cells except ", " after torus_allreduce, the cycle
//            time in ms and the threshold in MB as a stream writes a double (6 significant
//            digits), then the score;
//   lines 161-162: the score is the sample's bytes / its duration in microseconds.
#include "formats/horovod_autotune_log.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "traces/knobs.h"

namespace autotune {
namespace {

namespace fs = std::filesystem;

class HorovodAutotuneLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("hvdlog_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& text) {
    const std::string path = (dir_ / "autotune_log.csv").string();
    std::ofstream(path) << text;
    return path;
  }
  // The one-line error of reading `text`.
  std::string Error(const std::string& text) {
    HorovodLog log;
    const Status s = ReadHorovodAutotuneLog(Write(text), Knobs{}, &log);
    EXPECT_FALSE(s.ok()) << text;
    EXPECT_EQ(s.message().find('\n'), std::string::npos) << s.message();
    return s.message();
  }
  fs::path dir_;
};

constexpr const char* kHeader =
    "hierarchical_allreduce,hierarchical_allgather,torus_allreduce,cache_enabled,cycle_time_ms,"
    "tensor_fusion_threshold,score";

TEST(HorovodAutotuneLog, HeaderIsHorovodsInItsOrder) { EXPECT_EQ(HorovodLogHeader(), kHeader); }

TEST(HorovodAutotuneLog, RowIsWrittenAsHorovodWritesIt) {
  Knobs k;
  k.hierarchical_allreduce = false;
  k.hierarchical_allgather = true;
  k.cache_capacity = 512;  // enabled: 1
  k.cycle_time_ms = 3.5;
  k.fusion_threshold_mb = 23.123456789;  // 6 significant digits: 23.1235
  // 123,456,789 bytes/s = 123.456789 bytes/us, written 123.457.
  EXPECT_EQ(HorovodLogRow(k, 123456789.0), "0,1,0, 1,3.5,23.1235,123.457");
  k.cache_capacity = 0;
  k.hierarchical_allreduce = true;
  k.hierarchical_allgather = false;
  k.cycle_time_ms = 25;
  k.fusion_threshold_mb = 0;
  EXPECT_EQ(HorovodLogRow(k, 2e6), "1,0,0, 0,25,0,2");
}

// A log as Horovod 0.28.1 writes it on CPU (hierarchical allreduce and torus held at 0): its first
// test points (4 MB, 5 ms), (32 MB, 50 ms), ..., then a final best row repeating the best score.
TEST_F(HorovodAutotuneLogTest, ReadsHorovodsRowsAsSamplesAndItsLastRowAsTheBest) {
  const std::string path = Write(std::string(kHeader) +
                                 "\n"
                                 "0,0,0, 1,5,4,310.5\n"
                                 "0,0,0, 1,50,32,402.25\n"
                                 "0,1,0, 0,25,16,377\n"
                                 "0,0,0, 1,50,32,402.25\n");
  Knobs base;
  base.cache_capacity = 2048;
  base.num_groups = 3;  // the log does not hold it: the base's stays
  HorovodLog log;
  ASSERT_TRUE(ReadHorovodAutotuneLog(path, base, &log).ok());
  ASSERT_EQ(log.samples.size(), 3u);
  EXPECT_EQ(log.samples[0].line, 2);
  EXPECT_EQ(log.samples[0].knobs.cycle_time_ms, 5.0);
  EXPECT_EQ(log.samples[0].knobs.fusion_threshold_mb, 4.0);
  EXPECT_EQ(log.samples[0].knobs.cache_capacity, 2048);
  EXPECT_EQ(log.samples[0].knobs.num_groups, 3);
  EXPECT_FALSE(log.samples[0].knobs.hierarchical_allgather);
  EXPECT_DOUBLE_EQ(log.samples[0].score_bytes_per_s, 310.5e6);
  EXPECT_EQ(log.samples[2].line, 4);
  EXPECT_TRUE(log.samples[2].knobs.hierarchical_allgather);
  EXPECT_EQ(log.samples[2].knobs.cache_capacity, 0);
  EXPECT_EQ(log.samples[2].knobs.fusion_threshold_mb, 16.0);
  ASSERT_TRUE(log.best.has_value());
  EXPECT_EQ(log.best->line, 5);
  EXPECT_EQ(log.best->knobs.fusion_threshold_mb, 32.0);
  EXPECT_EQ(log.best->knobs.cycle_time_ms, 50.0);
  EXPECT_TRUE(log.torus_lines.empty());
}

// A job stopped before Horovod's tuning ended: no best row, every row a sample. A row with torus
// allreduce on is left out (no such knob here); a cache enabled without a capacity in the base
// takes Knobs' default, 1024.
TEST_F(HorovodAutotuneLogTest, UnfinishedTuningHasNoBestRowAndTorusRowsAreLeftOut) {
  const std::string path = Write(std::string(kHeader) +
                                 "\n"
                                 "0,0,0, 1,5,4,310.5\n"
                                 "0,0,1, 1,5,4,500\n"
                                 "0,0,0, 1,50,32,300\n"
                                 "\n");
  Knobs base;
  base.cache_capacity = 0;
  HorovodLog log;
  ASSERT_TRUE(ReadHorovodAutotuneLog(path, base, &log).ok());
  ASSERT_EQ(log.samples.size(), 2u);
  EXPECT_FALSE(log.best.has_value());
  EXPECT_EQ(log.torus_lines, std::vector<int>{3});
  EXPECT_EQ(log.samples[1].line, 4);
  EXPECT_EQ(log.samples[1].knobs.cache_capacity, 1024);
  EXPECT_DOUBLE_EQ(log.samples[1].score_bytes_per_s, 300e6);
}

// An older Horovod (no torus_allreduce) and autotune's own log (more columns after Horovod's,
// columns found by name) read too; a simulated row of autotune's log is refused.
TEST_F(HorovodAutotuneLogTest, ColumnsAreFoundByName) {
  HorovodLog log;
  ASSERT_TRUE(
      ReadHorovodAutotuneLog(Write("hierarchical_allreduce,hierarchical_allgather,cache_enabled,"
                                   "cycle_time_ms,tensor_fusion_threshold,score\n"
                                   "0,0,1,2.5,64,120\n"),
                             Knobs{}, &log)
          .ok());
  ASSERT_EQ(log.samples.size(), 1u);
  EXPECT_EQ(log.samples[0].knobs.cycle_time_ms, 2.5);
  EXPECT_EQ(log.samples[0].knobs.fusion_threshold_mb, 64.0);
  ASSERT_TRUE(
      ReadHorovodAutotuneLog(Write(std::string(kHeader) + ",num_groups,fidelity,score_bytes_per_s\n"
                                                          "0,0,0, 1,2,8,50,0,measured,5e+07\n"),
                             Knobs{}, &log)
          .ok());
  ASSERT_EQ(log.samples.size(), 1u);
  EXPECT_DOUBLE_EQ(log.samples[0].score_bytes_per_s, 50e6);
  EXPECT_EQ(Error(std::string(kHeader) +
                  ",fidelity\n0,0,0, 1,2,8,50,measured\n0,0,0, 1,2,8,50,simulated\n"),
            (dir_ / "autotune_log.csv").string() +
                " line 3: a simulated sample (its fidelity column): only measured samples are "
                "imported");
}

// autotune's own log ends with its decision, marked "best" in the fidelity column: the best row,
// not a sample, even though its score (the written setting's measured mean, 40) repeats no row's.
// A row after it, or a best row alone, is refused.
TEST_F(HorovodAutotuneLogTest, AutotunesBestRowIsTheBestNotASample) {
  const std::string h = std::string(kHeader) + ",fidelity,score_bytes_per_s\n";
  HorovodLog log;
  ASSERT_TRUE(ReadHorovodAutotuneLog(Write(h + "0,0,0, 1,1,128,38,measured,3.8e+07\n"
                                               "0,0,0, 0,25,0,45,measured,4.5e+07\n"
                                               "0,0,0, 1,1,128,42,measured,4.2e+07\n"
                                               "0,0,0, 1,1,128,40,best,4e+07\n"),
                                     Knobs{}, &log)
                  .ok());
  ASSERT_EQ(log.samples.size(), 3u);
  ASSERT_TRUE(log.best.has_value());
  EXPECT_EQ(log.best->line, 5);
  EXPECT_EQ(log.best->knobs.fusion_threshold_mb, 128.0);
  EXPECT_DOUBLE_EQ(log.best->score_bytes_per_s, 40e6);
  const std::string file = (dir_ / "autotune_log.csv").string();
  EXPECT_EQ(Error(h + "0,0,0, 1,1,128,40,best,4e+07\n0,0,0, 1,1,128,38,measured,3.8e+07\n"),
            file + " line 3: a row after the best row (line 2, fidelity \"best\"), which ends "
                   "the log");
  EXPECT_EQ(Error(h + "0,0,0, 1,1,128,40,best,4e+07\n"),
            file + ": a best row (fidelity \"best\") without the samples it was decided from");
  // In autotune's log a last sample that ties the best score is a sample, not Horovod's best row.
  ASSERT_TRUE(ReadHorovodAutotuneLog(Write(h + "0,0,0, 1,1,128,45,measured,4.5e+07\n"
                                               "0,0,0, 0,25,0,45,measured,4.5e+07\n"),
                                     Knobs{}, &log)
                  .ok());
  EXPECT_EQ(log.samples.size(), 2u);
  EXPECT_FALSE(log.best.has_value());
}

TEST_F(HorovodAutotuneLogTest, BadInputIsOneLineNamingTheFileAndLine) {
  const std::string file = (dir_ / "autotune_log.csv").string();
  const std::string h = std::string(kHeader) + "\n";
  EXPECT_EQ(Error(h + "0,0,0, 1,5,4,310.5\n0,0,0, 1,five,4,310.5\n"),
            file + " line 3: cycle_time_ms \"five\" is not a number");
  EXPECT_EQ(Error(h + "0,0,0, 1,5,4\n"), file + " line 2: 6 cells, but the header has 7");
  EXPECT_EQ(Error(h + "2,0,0, 1,5,4,1\n"),
            file + " line 2: hierarchical_allreduce \"2\" is not 0 or 1");
  EXPECT_EQ(Error(h + "0,0,0, 1,5,4,0\n"), file + " line 2: score \"0\" is not above 0");
  EXPECT_EQ(Error(h + "0,0,0, 1,5,4,nan\n"), file + " line 2: score \"nan\" is not a number");
  EXPECT_NE(
      Error(h + "0,0,0, 1,5,-4,10\n").find(file + " line 2: tensor_fusion_threshold \"-4\": "),
      std::string::npos);
  EXPECT_NE(Error("").find(file + ": not a Horovod autotune log"), std::string::npos);
  EXPECT_NE(Error(h).find(file + ": a Horovod autotune log without rows"), std::string::npos);
  EXPECT_NE(Error("a,b,c\n1,2,3\n").find("line 1 has no column hierarchical_allreduce"),
            std::string::npos);
}

// Logs written by real Horovod 0.28.1 (CPU, MPI) on this project's machine: bench/horovod/train.py
// --model mlp --warmup 1 --seconds 25 under `mpirun -np 2` with HOROVOD_AUTOTUNE=1,
// HOROVOD_AUTOTUNE_STEPS_PER_SAMPLE=1, HOROVOD_AUTOTUNE_WARMUP_SAMPLES=0 and
// HOROVOD_AUTOTUNE_BAYES_OPT_MAX_SAMPLES=1, so that its tuning ends within seconds: 2 test points
// for each of hierarchical allgather and the cache off/on, then the best row (the last, repeating
// line 5's setting and score). The second ran --seconds 8 with 2 max samples and a warm-up sample:
// stopped mid-tuning, no best row.
constexpr const char* kRealEndedLog =
    "hierarchical_allreduce,hierarchical_allgather,torus_allreduce,cache_enabled,cycle_time_ms,"
    "tensor_fusion_threshold,score\n"
    "0,0,0, 0,5,4,52.5803\n"
    "0,0,0, 0,50,32,68.513\n"
    "0,1,0, 0,5,4,70.6302\n"
    "0,1,0, 0,50,32,71.1341\n"
    "0,0,0, 1,5,4,61.9904\n"
    "0,0,0, 1,50,32,58.1355\n"
    "0,1,0, 1,5,4,61.8987\n"
    "0,1,0, 1,50,32,55.9186\n"
    "0,1,0, 0,50,32,71.1341\n";
constexpr const char* kRealStoppedLog =
    "hierarchical_allreduce,hierarchical_allgather,torus_allreduce,cache_enabled,cycle_time_ms,"
    "tensor_fusion_threshold,score\n"
    "0,0,0, 0,5,4,69.1249\n"
    "0,0,0, 0,50,32,68.3758\n"
    "0,0,0, 0,25,16,76.087\n";

TEST_F(HorovodAutotuneLogTest, ReadsRealHorovodLogs) {
  HorovodLog log;
  ASSERT_TRUE(ReadHorovodAutotuneLog(Write(kRealEndedLog), Knobs{}, &log).ok());
  ASSERT_EQ(log.samples.size(), 8u);
  ASSERT_TRUE(log.best.has_value());
  EXPECT_EQ(log.best->line, 10);
  EXPECT_TRUE(log.best->knobs.hierarchical_allgather);
  EXPECT_EQ(log.best->knobs.cache_capacity, 0);
  EXPECT_EQ(log.best->knobs.cycle_time_ms, 50.0);
  EXPECT_EQ(log.best->knobs.fusion_threshold_mb, 32.0);
  EXPECT_DOUBLE_EQ(log.best->score_bytes_per_s, 71.1341e6);
  EXPECT_EQ(log.samples[4].knobs.cache_capacity, Knobs{}.cache_capacity);  // line 6: enabled
  // Written back, the best row is the text Horovod wrote.
  EXPECT_EQ(HorovodLogRow(log.best->knobs, log.best->score_bytes_per_s), "0,1,0, 0,50,32,71.1341");
  ASSERT_TRUE(ReadHorovodAutotuneLog(Write(kRealStoppedLog), Knobs{}, &log).ok());
  EXPECT_EQ(log.samples.size(), 3u);
  EXPECT_FALSE(log.best.has_value());
  EXPECT_EQ(log.samples[2].knobs.fusion_threshold_mb, 16.0);
  EXPECT_EQ(log.samples[2].knobs.cycle_time_ms, 25.0);
}

}  // namespace
}  // namespace autotune
