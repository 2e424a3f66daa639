// Store::ListSamples with a SampleQuery: samples of one workload, topology, scale and backend.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "store/store.h"

namespace autotune {
namespace {

class StoreSamplesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("autotune_store_samples_test_" + std::to_string(getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    ASSERT_TRUE(Store::Open((dir_ / "t.db").string(), Store::Mode::kReadWrite, &store_).ok());
    topology_.nodes = 2;
    topology_.ranks_per_node = 2;
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  int64_t AddRun(double scale, BackendKind backend) {
    RunInfo run;
    run.command = "autotune record";
    run.workload.name = "w";
    TensorSpec tensor;
    tensor.name = "t";
    tensor.shape = {4};
    run.workload.tensors.push_back(tensor);
    run.scale = scale;
    run.backend = backend;
    run.topology = topology_;
    const Status created = store_->CreateRun(&run);
    EXPECT_TRUE(created.ok()) << created.message();
    return run.id;
  }

  void AddSample(Fidelity fidelity, int64_t run_id, double score) {
    std::vector<Sample> samples(1);
    samples[0].fidelity = fidelity;
    samples[0].run_id = run_id;
    samples[0].workload = "w";
    samples[0].topology = topology_;
    samples[0].score_bytes_per_s = score;
    ASSERT_TRUE(store_->AddSamples(&samples).ok());
  }

  // The scores of the samples `query` selects (each sample's score is unique).
  std::set<double> Scores(const SampleQuery& query) {
    std::vector<Sample> samples;
    Status s = store_->ListSamples(query, &samples);
    EXPECT_TRUE(s.ok()) << s.message();
    std::set<double> scores;
    for (const Sample& sample : samples) scores.insert(sample.score_bytes_per_s);
    return scores;
  }

  std::filesystem::path dir_;
  std::unique_ptr<Store> store_;
  Topology topology_;
};

TEST_F(StoreSamplesTest, QueryFiltersByFidelityScaleAndBackend) {
  const int64_t a = AddRun(0.5, BackendKind::kMpi), b = AddRun(1.0, BackendKind::kMpi),
                c = AddRun(0.5, BackendKind::kNccl);
  AddSample(Fidelity::kMeasured, a, 1);
  AddSample(Fidelity::kMeasured, b, 2);
  AddSample(Fidelity::kMeasured, c, 3);
  AddSample(Fidelity::kSimulated, 0, 4);  // a replay without a simulated run row
  AddSample(Fidelity::kMeasured, a, 5);
  SampleQuery query;
  query.workload = "w";
  query.topology = topology_;
  EXPECT_EQ(Scores(query), (std::set<double>{1, 2, 3, 4, 5}));
  query.fidelity = Fidelity::kSimulated;
  EXPECT_EQ(Scores(query), (std::set<double>{4}));
  query.fidelity = Fidelity::kMeasured;
  EXPECT_EQ(Scores(query), (std::set<double>{1, 2, 3, 5}));
  query.scale = 0.5;
  EXPECT_EQ(Scores(query), (std::set<double>{1, 3, 5}));
  query.backend = BackendKind::kMpi;
  EXPECT_EQ(Scores(query), (std::set<double>{1, 5}));
  // A sample without a run has no scale: a scale query leaves it out.
  query.fidelity.reset();
  query.backend.reset();
  EXPECT_EQ(Scores(query), (std::set<double>{1, 3, 5}));
  // Another topology or workload: nothing.
  query.topology.nodes = 4;
  EXPECT_TRUE(Scores(query).empty());
  // Oldest first, and the fidelity read back as written.
  std::vector<Sample> samples;
  SampleQuery all;
  all.workload = "w";
  all.topology = topology_;
  ASSERT_TRUE(store_->ListSamples(all, &samples).ok());
  ASSERT_EQ(samples.size(), 5u);
  EXPECT_EQ(samples[0].score_bytes_per_s, 1);
  EXPECT_EQ(samples[0].fidelity, Fidelity::kMeasured);
  EXPECT_EQ(samples[3].fidelity, Fidelity::kSimulated);
  EXPECT_EQ(samples[3].run_id, 0);
  EXPECT_EQ(samples[4].run_id, a);
}

TEST(FidelityTest, NamesAreTheDatabaseTexts) {
  EXPECT_STREQ(FidelityName(Fidelity::kMeasured), "measured");
  EXPECT_STREQ(FidelityName(Fidelity::kSimulated), "simulated");
  Fidelity f = Fidelity::kMeasured;
  ASSERT_TRUE(ParseFidelity("simulated", &f).ok());
  EXPECT_EQ(f, Fidelity::kSimulated);
  ASSERT_TRUE(ParseFidelity("measured", &f).ok());
  EXPECT_EQ(f, Fidelity::kMeasured);
  const Status bad = ParseFidelity("bogus", &f);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("\"bogus\""), std::string::npos) << bad.message();
}

}  // namespace
}  // namespace autotune
