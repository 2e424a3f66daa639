#include "formats/nccl_tuner_csv.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace autotune {
namespace {

NcclTunerRule Rule(const std::string& coll, int64_t lo, int64_t hi, const std::string& algo,
                   const std::string& proto, int channels = -1) {
  NcclTunerRule r;
  r.collective = coll;
  r.min_bytes = lo;
  r.max_bytes = hi;
  r.algorithm = algo;
  r.protocol = proto;
  r.channels = channels;
  return r;
}

TEST(NcclTunerCsv, FormatsOneLinePerRuleInThePluginsColumnOrder) {
  std::vector<NcclTunerRule> rules = {
      Rule("allreduce", 0, 65535, "tree", "ll", 4),
      Rule("allreduce", 65536, kNcclTunerAnyBytes, "ring", "simple")};
  rules[1].nodes = 2;
  rules[1].ranks = 16;
  rules[1].pipe_ops = 1;
  rules[1].reg_buff = 0;
  std::string csv;
  ASSERT_TRUE(FormatNcclTunerCsv(rules, "", &csv).ok());
  EXPECT_EQ(csv,
            "allreduce,0,65535,tree,ll,4,-1,-1,-1,-1\n"
            "allreduce,65536,9223372036854775807,ring,simple,-1,2,16,1,0\n");
}

TEST(NcclTunerCsv, CommentLinesComeFirstWithTheColumnHeader) {
  std::vector<NcclTunerRule> rules = {Rule("allgather", 0, 1023, "ring", "ll128")};
  std::string csv;
  ASSERT_TRUE(FormatNcclTunerCsv(rules, "autotune search\nrun 2", &csv).ok());
  std::istringstream lines(csv);
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(line, "# autotune search");
  std::getline(lines, line);
  EXPECT_EQ(line, "# run 2");
  std::getline(lines, line);
  EXPECT_EQ(line.rfind("# collective,min_bytes,max_bytes,algorithm,protocol,channels", 0), 0u);
  std::getline(lines, line);
  EXPECT_EQ(line, "allgather,0,1023,ring,ll128,-1,-1,-1,-1,-1");
  EXPECT_FALSE(std::getline(lines, line));
}

TEST(NcclTunerCsv, RoundTripsThroughTheParser) {
  std::vector<NcclTunerRule> rules = {Rule("allreduce", 0, 4095, "nvls_tree", "ll", 2),
                                      Rule("allreduce", 4096, 1 << 20, "collnet_chain", "ll128"),
                                      Rule("reducescatter", 0, 100, "pat", "simple", 64),
                                      Rule("broadcast", 7, 7, "collnet_direct", "simple")};
  rules[2].reg_buff = 1;
  std::string csv;
  ASSERT_TRUE(FormatNcclTunerCsv(rules, "x", &csv).ok());
  std::vector<NcclTunerRule> back;
  Status st = ParseNcclTunerCsv(csv, "t.csv", &back);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(back, rules);
}

TEST(NcclTunerCsv, ParsesTheExamplePluginsShortForms) {
  // 8 and 9 field lines (numPipeOps, regBuff optional), spaces around fields, comments.
  const std::string text =
      "# comment\n\n"
      "broadcast,0,32768,tree,simple,-1,1,-1\n"
      "allreduce, 65537 ,1048576,ring,simple,4,4,32,1\n";
  std::vector<NcclTunerRule> rules;
  Status st = ParseNcclTunerCsv(text, "t.csv", &rules);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(rules.size(), 2u);
  EXPECT_EQ(rules[0].collective, "broadcast");
  EXPECT_EQ(rules[0].max_bytes, 32768);
  EXPECT_EQ(rules[0].nodes, 1);
  EXPECT_EQ(rules[0].pipe_ops, -1);
  EXPECT_EQ(rules[0].reg_buff, -1);
  EXPECT_EQ(rules[1].min_bytes, 65537);
  EXPECT_EQ(rules[1].channels, 4);
  EXPECT_EQ(rules[1].ranks, 32);
  EXPECT_EQ(rules[1].pipe_ops, 1);
  EXPECT_EQ(rules[1].reg_buff, -1);
}

TEST(NcclTunerCsv, ParseErrorsNameFileAndLine) {
  std::vector<NcclTunerRule> rules;
  Status st = ParseNcclTunerCsv("# c\nallreduce,0,1,ring,simple,-1,-1\n", "t.csv", &rules);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("t.csv:2"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("got 7"), std::string::npos) << st.message();

  st = ParseNcclTunerCsv("allreduce,0,lots,ring,simple,-1,-1,-1\n", "t.csv", &rules);
  EXPECT_NE(st.message().find("max_bytes 'lots'"), std::string::npos) << st.message();

  // The plugin would silently read "Ring" as ring and "LL" as simple: refuse them.
  st = ParseNcclTunerCsv("allreduce,0,1,Ring,simple,-1,-1,-1\n", "t.csv", &rules);
  EXPECT_NE(st.message().find("algorithm 'Ring'"), std::string::npos) << st.message();
  st = ParseNcclTunerCsv("allreduce,0,1,ring,LL,-1,-1,-1\n", "t.csv", &rules);
  EXPECT_NE(st.message().find("protocol 'LL'"), std::string::npos) << st.message();

  const std::string long_line = "allreduce,0,1,ring,simple,-1,-1,-1" + std::string(250, ' ');
  st = ParseNcclTunerCsv(long_line + "\n", "t.csv", &rules);
  EXPECT_NE(st.message().find("longer than 255"), std::string::npos) << st.message();
}

TEST(NcclTunerCsv, RejectsRulesThePluginWouldMisread) {
  std::string csv;
  auto fails_with = [&](const NcclTunerRule& r, const std::string& text) {
    std::vector<NcclTunerRule> one = {r};
    Status st = FormatNcclTunerCsv(one, "", &csv);
    EXPECT_FALSE(st.ok()) << text;
    EXPECT_NE(st.message().find(text), std::string::npos) << st.message();
  };
  fails_with(Rule("alltoall", 0, 1, "ring", "simple"), "collective 'alltoall'");
  fails_with(Rule("allreduce", 0, 1, "collnet", "simple"), "algorithm 'collnet'");
  fails_with(Rule("allreduce", 0, 1, "ring", ""), "protocol ''");
  fails_with(Rule("allreduce", 5, 4, "ring", "simple"), "byte range [5, 4]");
  fails_with(Rule("allreduce", -1, 4, "ring", "simple"), "byte range [-1, 4]");
  fails_with(Rule("allreduce", 0, 1, "ring", "simple", 0), "channels '0'");
  fails_with(Rule("allreduce", 0, 1, "ring", "simple", 65), "channels '65'");
  NcclTunerRule r = Rule("allreduce", 0, 1, "ring", "simple");
  r.reg_buff = 2;
  fails_with(r, "regBuff '2'");
  r.reg_buff = -1;
  r.nodes = 0;
  fails_with(r, "nNodes '0'");
  EXPECT_TRUE(csv.empty());
}

TEST(NcclTunerCsv, OverlappingRangesOfOneTopologyAreRefused) {
  std::vector<NcclTunerRule> rules = {Rule("allreduce", 0, 100, "tree", "ll"),
                                      Rule("allgather", 0, 100, "ring", "ll"),
                                      Rule("allreduce", 100, 200, "ring", "simple")};
  std::string csv;
  Status st = FormatNcclTunerCsv(rules, "", &csv);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("rules 0 and 2"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("[100, 100]"), std::string::npos) << st.message();
  rules[2].min_bytes = 101;  // adjacent, not overlapping
  EXPECT_TRUE(FormatNcclTunerCsv(rules, "", &csv).ok());
  rules[2].min_bytes = 50;
  rules[2].nodes = 4;  // another topology: both can apply, each to its own communicators
  EXPECT_TRUE(FormatNcclTunerCsv(rules, "", &csv).ok());
}

TEST(NcclTunerCsv, WritesTheFileAndReportsUnwritablePaths) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "autotune_tuner_csv_test.conf").string();
  std::vector<NcclTunerRule> rules = {Rule("allreduce", 0, 10, "ring", "simple")};
  ASSERT_TRUE(WriteNcclTunerCsvFile(path, rules, "c").ok());
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::string expected;
  ASSERT_TRUE(FormatNcclTunerCsv(rules, "c", &expected).ok());
  EXPECT_EQ(text.str(), expected);
  std::remove(path.c_str());
  Status st = WriteNcclTunerCsvFile("/nonexistent-dir/x.conf", rules, "");
  EXPECT_EQ(st.code(), Status::Code::kIoError);
  EXPECT_NE(st.message().find("/nonexistent-dir/x.conf"), std::string::npos);
}

TEST(NcclTunerCsv, KnobAlgorithmNames) {
  std::string name;
  ASSERT_TRUE(NcclTunerAlgorithm("nvlstree", &name).ok());
  EXPECT_EQ(name, "nvls_tree");
  ASSERT_TRUE(NcclTunerAlgorithm("collnetchain", &name).ok());
  EXPECT_EQ(name, "collnet_chain");
  Status st = NcclTunerAlgorithm("collnet", &name);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("collnetdirect or collnetchain"), std::string::npos);
}

TEST(NcclTunerCsv, RulesFromKnobsCoverEverySize) {
  Knobs k;
  k.nccl_algo = "tree";
  k.nccl_proto = "ll128";
  k.nccl_max_nchannels = 8;
  const std::vector<std::string> colls = {"allreduce", "allgather"};
  std::vector<NcclTunerRule> rules;
  ASSERT_TRUE(NcclTunerRulesFromKnobs(k, colls, 2, 16, &rules).ok());
  ASSERT_EQ(rules.size(), 2u);
  EXPECT_EQ(rules[1].collective, "allgather");
  EXPECT_EQ(rules[1].algorithm, "tree");
  EXPECT_EQ(rules[1].protocol, "ll128");
  EXPECT_EQ(rules[1].channels, 8);
  EXPECT_EQ(rules[1].min_bytes, 0);
  EXPECT_EQ(rules[1].max_bytes, kNcclTunerAnyBytes);
  EXPECT_EQ(rules[1].nodes, 2);
  EXPECT_EQ(rules[1].ranks, 16);
  k.nccl_max_nchannels = 0;
  ASSERT_TRUE(NcclTunerRulesFromKnobs(k, colls, -1, -1, &rules).ok());
  EXPECT_EQ(rules[0].channels, -1);
  k.nccl_proto.clear();
  EXPECT_FALSE(NcclTunerRulesFromKnobs(k, colls, -1, -1, &rules).ok());
}

}  // namespace
}  // namespace autotune
