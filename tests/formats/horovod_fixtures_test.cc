// The importer on the real Horovod timelines of tests/fixtures/horovod (README there): every
// expected value comes from the models themselves (parameter counts), the README (measured
// step times), or a small independent scan of the same file below, never from the importer.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "formats/horovod_timeline.h"

namespace autotune {
namespace {

struct Fixture {
  const char* file;
  int tensors;            // the model's parameter tensors
  int64_t parameters;     // the model's parameters (float32)
  double readme_step_ms;  // median step time the README reports (its last 8 steps)
};

// resnet50: torchvision's 161 tensors, 25,557,032 parameters. The MLP: Linear(3072,256) +
// 100 x [Linear(256,256), LayerNorm(256)] + Linear(256,1000): 2 + 400 + 2 tensors and
// 3072*256+256 + 100*(256*256+256+2*256) + 256*1000+1000 parameters.
const Fixture kFixtures[] = {
    {"resnet50_default.json", 161, 25557032, 2524},
    {"resnet50_f4_c10.json", 161, 25557032, 2410},
    {"mlp_default.json", 404,
     3072 * 256 + 256 + 100 * (256 * 256 + 256 + 2 * 256) + 256 * 1000 + 1000, 620},
};

std::string FixturePath(const std::string& file) {
  return std::string(AUTOTUNE_FIXTURES_DIR) + "/horovod/" + file;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The independent scan, from the file's order alone: Horovod begins the ops of one fused
// response's tensors in one loop, so each run of consecutive "B ALLREDUCE" events (of the
// allreduce processes) is one fused collective, in the step of its first tensor's
// occurrence (the k-th ALLREDUCE of a process is in step k). Per step, the collectives.
std::vector<int> FusedCollectivesPerStep(const nlohmann::json& events) {
  std::set<int64_t> allreduce_pids;
  for (const auto& e : events) {
    if (e.value("ph", "") == "M" && e.value("name", "") == "process_name" &&
        e["args"].value("name", "").rfind("allreduce.", 0) == 0) {
      allreduce_pids.insert(e["pid"].get<int64_t>());
    }
  }
  std::map<int64_t, int> seen;  // pid -> ALLREDUCE begins so far
  std::vector<int> counts;
  bool in_run = false;
  for (const auto& e : events) {
    const bool begins = e.value("ph", "") == "B" && e.value("name", "") == "ALLREDUCE" &&
                        allreduce_pids.count(e["pid"].get<int64_t>());
    if (begins) {
      const int k = seen[e["pid"].get<int64_t>()]++;
      if (static_cast<int>(counts.size()) <= k) counts.resize(k + 1, 0);
      if (!in_run) ++counts[k];
    }
    in_run = begins;
  }
  return counts;
}

Trace Import(const std::string& file, int warmup, ImportSummary* summary) {
  ImportOptions o;
  o.source = FixturePath(file);
  o.topology.nodes = 2;  // tools/cluster.sh --nodes 2 --ranks-per-node 2
  o.topology.ranks_per_node = 2;
  o.warmup_steps = warmup;
  Trace trace;
  const Status s = LoadHorovodTimeline(o, &trace, summary);
  EXPECT_TRUE(s.ok()) << s.message();
  return trace;
}

TEST(HorovodFixturesTest, EveryFixtureMatchesTheModelAndAnIndependentScan) {
  for (const Fixture& f : kFixtures) {
    SCOPED_TRACE(f.file);
    const nlohmann::json events = nlohmann::json::parse(ReadAll(FixturePath(f.file)));
    const std::vector<int> fused = FusedCollectivesPerStep(events);
    ImportSummary summary;
    const Trace trace = Import(f.file, 1, &summary);
    EXPECT_EQ(summary.tensors, f.tensors);
    EXPECT_EQ(static_cast<int>(trace.run.workload.tensors.size()), f.tensors);
    EXPECT_EQ(summary.bytes_per_step, f.parameters * 4);
    EXPECT_EQ(trace.run.workload.total_bytes(), f.parameters * 4);
    EXPECT_EQ(summary.steps, static_cast<int>(fused.size()) - 1);
    ASSERT_EQ(trace.steps.size(), fused.size() - 1);
    for (size_t i = 0; i < trace.steps.size(); ++i) {
      EXPECT_EQ(static_cast<int>(trace.steps[i].collectives.size()), fused[i + 1]) << "step " << i;
      EXPECT_EQ(trace.steps[i].tensors.size(), static_cast<size_t>(f.tensors) * 4);
      std::set<int> members;  // every tensor in exactly one collective
      for (const CollectiveRecord& c : trace.steps[i].collectives) {
        for (int t : c.tensors) EXPECT_TRUE(members.insert(t).second) << t;
      }
      EXPECT_EQ(static_cast<int>(members.size()), f.tensors);
      EXPECT_FALSE(trace.steps[i].cycles.empty());  // recorded with MARK_CYCLES
    }
    std::vector<int> kept(fused.begin() + 1, fused.end());
    std::sort(kept.begin(), kept.end());
    const size_t n = kept.size();
    const double median = n % 2 ? kept[n / 2] : 0.5 * (kept[n / 2 - 1] + kept[n / 2]);
    EXPECT_NEAR(summary.collectives_per_step, median, 0.5);
    EXPECT_EQ(trace.run.backend, BackendKind::kMpi);
    EXPECT_FALSE(summary.truncated);
    // The README's median step time is over the job's last 8 steps (those before were its
    // warm-up): the same steps' median within 3%.
    ImportSummary readme;
    Import(f.file, static_cast<int>(fused.size()) - 8, &readme);
    EXPECT_EQ(readme.steps, 8);
    EXPECT_NEAR(readme.step_ms_median, f.readme_step_ms, 0.03 * f.readme_step_ms);
  }
}

TEST(HorovodFixturesTest, ACutOffFileImportsItsCompleteSteps) {
  const std::string text = ReadAll(FixturePath("resnet50_default.json"));
  ImportSummary full_summary;
  const Trace full = Import("resnet50_default.json", 1, &full_summary);
  ImportOptions o;
  o.source = "cut.json";
  o.topology.nodes = 2;
  o.topology.ranks_per_node = 2;
  for (double fraction : {0.5, 0.7, 0.9}) {
    SCOPED_TRACE(fraction);
    Trace trace;
    ImportSummary summary;
    const std::string cut = text.substr(0, static_cast<size_t>(fraction * text.size()));
    const Status s = ParseHorovodTimeline(cut, o, &trace, &summary);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_TRUE(summary.truncated);
    EXPECT_EQ(summary.tensors, 161);
    EXPECT_LT(summary.steps, full_summary.steps);
    EXPECT_GE(summary.steps, 1);
    for (size_t i = 0; i < trace.steps.size(); ++i) {  // the same steps as in the whole file
      EXPECT_DOUBLE_EQ(trace.steps[i].step_ms, full.steps[i].step_ms);
      EXPECT_EQ(trace.steps[i].collectives.size(), full.steps[i].collectives.size());
    }
  }
}

TEST(HorovodFixturesTest, AnEditedEventInTheMiddleIsNamed) {
  nlohmann::json events = nlohmann::json::parse(ReadAll(FixturePath("mlp_default.json")));
  // The middle event's timestamp made a string; the file written back one event a line.
  size_t k = events.size() / 2;
  while (!events[k].contains("ts")) ++k;
  events[k]["ts"] = "late";
  std::string text = "[\n";
  for (size_t i = 0; i < events.size(); ++i) {
    text += events[i].dump() + (i + 1 < events.size() ? ",\n" : "\n]");
  }
  Trace trace;
  ImportOptions o;
  o.source = "edited.json";
  const Status s = ParseHorovodTimeline(text, o, &trace, nullptr);
  EXPECT_EQ(s.message(), "edited.json: event " + std::to_string(k) + ": \"ts\" is not a number");
}

}  // namespace
}  // namespace autotune
