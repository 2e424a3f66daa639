// `autotune apply` on a REAL PyTorch DDP job (Debian's torch, gloo, 4 ranks under mpirun on
// this host): the tuned bucket cap reaches DistributedDataParallel without the script being
// edited, as DDP itself reports it (model._get_ddp_logging_data()); an explicit argument in
// the script wins and says so; the step log; --print-env. Skipped, with one line, where
// /usr/bin/python3 cannot import torch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/cli.h"
#include "traces/ddp_buckets.h"

namespace {

namespace fs = std::filesystem;
using autotune::testing::AutotuneBinary;
using autotune::testing::CommandResult;
using autotune::testing::FreeTcpPort;
using autotune::testing::ReadFile;
using autotune::testing::RunCommand;
using autotune::testing::TempDir;
using autotune::testing::WriteFile;

const char* const kPython = "/usr/bin/python3";

bool TorchAvailable() {
  return RunCommand({kPython, "-c", "import torch.distributed"}, fs::temp_directory_path())
             .exit_code == 0;
}

class DdpApplyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!TorchAvailable()) GTEST_SKIP() << kPython << " cannot import torch (python3-torch)";
    WriteFile((dir_ / "best.yaml").string(), "ddp:\n  bucket_cap_mb: 1\n");
  }

  // The probe under `autotune apply --config-file best.yaml -- mpirun ... -np 4`.
  CommandResult RunProbe(std::vector<std::string> probe_args,
                         std::vector<std::string> env = {}) {
    const int free_port = FreeTcpPort();
    EXPECT_GT(free_port, 0);
    const std::string port = std::to_string(free_port);
    std::vector<std::string> argv = {"env", "MASTER_ADDR=127.0.0.1", "MASTER_PORT=" + port,
                                      "OMP_NUM_THREADS=1", "OMPI_ALLOW_RUN_AS_ROOT=1",
                                      "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"};
    argv.insert(argv.end(), env.begin(), env.end());
    for (const std::string& a :
         {AutotuneBinary(), std::string("apply"), std::string("--config-file"),
          (dir_ / "best.yaml").string(), std::string("--"), std::string("mpirun"),
          std::string("--oversubscribe"), std::string("--bind-to"), std::string("none"),
          std::string("--mca"), std::string("mpi_yield_when_idle"), std::string("1"),
          std::string("-np"), std::string("4"), std::string(kPython),
          std::string(AUTOTUNE_SOURCE_DIR "/tests/torch/ddp_probe.py")}) {
      argv.push_back(a);
    }
    argv.insert(argv.end(), probe_args.begin(), probe_args.end());
    return RunCommand(argv, dir_);
  }

  static nlohmann::json LastJsonLine(const std::string& out) {
    const size_t start = out.rfind("\n{");
    return nlohmann::json::parse(out.substr(start == std::string::npos ? 0 : start + 1));
  }

  TempDir temp_;
  const fs::path dir_ = temp_.path();
};

// The probe's parameters, bytes (float32): Linear(in, out) has a weight of in * out and a
// bias of out elements. DDP's rebuilt buckets follow the order the gradients became ready:
// the last layer first, each layer's bias before its weight (addmm's inputs), closing a
// bucket once it reaches its limit (1 MiB for the first, then the cap).
TEST_F(DdpApplyTest, TheConfigsBucketCapReachesDdpWithoutEditingTheScript) {
  const CommandResult r = RunProbe({});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json ddp = LastJsonLine(r.out);
  EXPECT_EQ(ddp["bucket_cap_bytes"], 1 << 20) << r.out;
  const int64_t w3 = 1024 * 10 * 4, b3 = 10 * 4, w2 = 512 * 1024 * 4, b2 = 1024 * 4;
  const int64_t w1 = 512 * 512 * 4, b1 = 512 * 4, w0 = 256 * 512 * 4, b0 = 512 * 4;
  // b3 + w3 + b2 + w2 = 2,142,248 >= 1 MiB closes the first; b1 + w1 = 1,050,624 >= 1 MiB
  // closes the second; b0 + w0 is left over.
  const std::vector<int64_t> expected = {b3 + w3 + b2 + w2, b1 + w1, b0 + w0};
  EXPECT_EQ(ddp["bucket_sizes"].get<std::vector<int64_t>>(), expected) << r.out;
  // autotune's own bucket policy, which its executor and simulator run, agrees with DDP.
  autotune::Workload w;
  for (int64_t bytes : {b3, w3, b2, w2, b1, w1, b0, w0}) {
    autotune::TensorSpec t;
    t.shape = {bytes / 4};
    w.tensors.push_back(t);
  }
  std::vector<int64_t> ours;
  for (const std::vector<int>& bucket :
       autotune::AssignDdpBuckets(w, std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}, 1 << 20, 1 << 20)) {
    int64_t bytes = 0;
    for (int t : bucket) bytes += w.tensors[t].bytes();
    ours.push_back(bytes);
  }
  EXPECT_EQ(ours, expected);
  EXPECT_NE(r.err.find("DDPStrategy(bucket_cap_mb=1"), std::string::npos) << r.err;
}

TEST_F(DdpApplyTest, AnExplicitArgumentInTheScriptWinsAndSaysSo) {
  const CommandResult r = RunProbe({"--explicit-cap", "25"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(LastJsonLine(r.out)["bucket_cap_bytes"], 25 << 20) << r.out;
  EXPECT_NE(r.err.find("autotune: DDP bucket_cap_mb=25.0 from the script wins over the config's "
                       "1.0"),
            std::string::npos)
      << r.err;
}

TEST_F(DdpApplyTest, TheStepLogHoldsTheTimeBetweenForwardCalls) {
  const std::string log = (dir_ / "steps.json").string();
  const CommandResult r = RunProbe({}, {"AUTOTUNE_DDP_STEP_LOG=" + log});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json steps = nlohmann::json::parse(ReadFile(log));
  EXPECT_EQ(steps["framework"], "ddp");
  EXPECT_EQ(steps["world_size"], 4);
  EXPECT_EQ(steps["bucket_cap_mb"], 1.0);
  ASSERT_EQ(steps["step_ms"].size(), 2u) << "3 forward calls";
  for (const auto& ms : steps["step_ms"]) EXPECT_GT(ms.get<double>(), 0.0);
}

TEST_F(DdpApplyTest, PrintEnvShowsTheDdpVariablesAndNoHorovods) {
  const CommandResult r = RunCommand({AutotuneBinary(), "apply", "--config-file",
                                      (dir_ / "best.yaml").string(), "--print-env"},
                                     dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("export AUTOTUNE_DDP_BUCKET_CAP_MB=1\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("export PYTHONPATH="), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("/python"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# the same in HF Trainer: --ddp_bucket_cap_mb 1 "), std::string::npos);
  EXPECT_EQ(r.out.find("HOROVOD_"), std::string::npos) << r.out;
}

TEST_F(DdpApplyTest, AMalformedVariableStopsTheJobWithOneLine) {
  const int port = FreeTcpPort();
  ASSERT_GT(port, 0);
  const CommandResult r =
      RunCommand({"env", "AUTOTUNE_DDP_BUCKET_CAP_MB=lots",
                  "PYTHONPATH=" AUTOTUNE_SOURCE_DIR "/python", kPython, "-c",
                  "import torch, torch.distributed as d; "
                  "d.init_process_group('gloo', init_method='tcp://127.0.0.1:" +
                      std::to_string(port) +
                      "', rank=0, world_size=1); "
                      "torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 2))"},
                 dir_);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("autotune: AUTOTUNE_DDP_BUCKET_CAP_MB='lots' is not a positive number"),
            std::string::npos)
      << r.err;
}

// A real job traced under apply (AUTOTUNE_DDP_TRACE) and imported: the run is DDP's, with
// the probe's 8 parameters in ready order, its knobs from the trace, and after the first
// step the buckets DDP itself formed (from its communication hook) are those of DDP's rule
// over the recorded ready order (autotune's policy, checked against DDP above); the
// simulator replays it. A missing or malformed rank file: one line, nothing stored.
TEST_F(DdpApplyTest, ATracedJobIsImportedAsADdpRun) {
  const std::string trace = (dir_ / "trace").string();
  const CommandResult job = RunProbe({}, {"AUTOTUNE_DDP_TRACE=" + trace});
  ASSERT_EQ(job.exit_code, 0) << job.err;
  const std::string db = (dir_ / "runs.db").string();
  CommandResult r = RunCommand({AutotuneBinary(), "import", "--ddp-trace", trace, "--db", db,
                                "--warmup-steps", "1", "--workload", "probe", "--json"},
                               dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["framework"], "ddp");
  EXPECT_EQ(j["backend"], "mpi");  // gloo on the host's CPUs
  EXPECT_EQ(j["tensors"], 8);
  EXPECT_EQ(j["steps"], 1) << "3 forward calls: 2 complete steps, 1 of them warm-up";
  EXPECT_EQ(j["knobs"]["ddp_bucket_cap_mb"], 1.0);
  // The four ranks ran on this machine's kernel: the recorder names its monotonic clock and
  // boot id, and the import puts every rank on rank 0's clock.
  EXPECT_EQ(j["rank_clocks"], "one kernel") << r.out;
  EXPECT_EQ(j["bytes_per_step"], (256 * 512 + 512 + 512 * 512 + 512 + 512 * 1024 + 1024 +
                                  1024 * 10 + 10) * 4);
  // Rank 0's buckets in the stored step: DDP's rule over the stored ready order (tensor
  // index = ready position) with 1 MiB limits.
  autotune::Workload w;
  std::vector<int> order;
  for (int t = 0; t < 8; ++t) {
    autotune::TensorSpec spec;
    spec.shape = {autotune::testing::QueryInt(
        db, "SELECT elements FROM tensors WHERE run_id = 1 AND tensor = " + std::to_string(t))};
    w.tensors.push_back(spec);
    order.push_back(t);
  }
  std::string expected;
  for (const std::vector<int>& bucket : autotune::AssignDdpBuckets(w, order, 1 << 20, 1 << 20)) {
    std::string members;
    for (int t : bucket) members += (members.empty() ? "" : ",") + std::to_string(t);
    expected += members + ";";
  }
  std::string stored;
  for (int seq = 0;; ++seq) {
    const std::string members = autotune::testing::QueryText(
        db, "SELECT tensors FROM collectives WHERE run_id = 1 AND step = 0 AND rank = 0 AND "
            "seq = " + std::to_string(seq));
    if (members.empty()) break;
    stored += members + ";";
  }
  EXPECT_EQ(stored, expected);
  r = RunCommand({AutotuneBinary(), "calibrate", "--np", "4", "--db", db, "--quiet",
                  "--max-bytes", "4194304", "--repetitions", "2"},
                 dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = RunCommand({AutotuneBinary(), "simulate", "--db", db, "--run", "1", "--grid"}, dir_);
  EXPECT_NE(r.out.find("bucket_cap="), std::string::npos) << r.out << r.err;
  EXPECT_EQ(r.out.find("threshold="), std::string::npos) << r.out;

  // The same files saying NCCL's process group: a GPU job (backend nccl); one rank saying
  // another backend than rank 0 is another job's file.
  const std::string gpu = (dir_ / "gpu").string();
  fs::create_directories(gpu);
  for (int rank = 0; rank < 4; ++rank) {
    const std::string name = "/rank" + std::to_string(rank) + ".json";
    nlohmann::json f = nlohmann::json::parse(ReadFile(trace + name));
    EXPECT_EQ(f["backend"], "gloo");
    EXPECT_EQ(f["device"], "cpu");
    EXPECT_EQ(f["clock"]["boot_id"], ReadFile("/proc/sys/kernel/random/boot_id").substr(0, 36));
    // Each clock's offset from rank 0's, measured at the start: on one kernel the true offset
    // is 0, and the estimate (the rank's reading less the middle of rank 0's round trip) lies
    // within its stated bound (half the trip) whatever the trip took.
    const int64_t offset = f["clock"]["offset_to_rank0_ns"].get<int64_t>();
    const int64_t error = f["clock"]["offset_error_ns"].get<int64_t>();
    EXPECT_LE(std::llabs(offset), error) << name;
    if (rank == 0) {
      EXPECT_EQ(error, 0);
    } else {
      EXPECT_GT(error, 0) << name;
    }
    f["backend"] = rank == 3 ? "gloo" : "nccl";
    WriteFile(gpu + name, f.dump());
  }
  r = RunCommand({AutotuneBinary(), "import", "--ddp-trace", gpu, "--db", db}, dir_);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find(gpu + "/rank3.json: another job's file (world size, backend"),
            std::string::npos)
      << r.err;
  nlohmann::json three = nlohmann::json::parse(ReadFile(gpu + "/rank3.json"));
  three["backend"] = "nccl";
  WriteFile(gpu + "/rank3.json", three.dump());
  r = RunCommand({AutotuneBinary(), "import", "--ddp-trace", gpu, "--db", db, "--warmup-steps",
                  "1", "--json"},
                 dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["backend"], "nccl");

  WriteFile(trace + "/rank2.json", "{\"format\": \"autotune-ddp-trace\", \"rank\": 2");
  const std::string other = (dir_ / "other.db").string();
  r = RunCommand({AutotuneBinary(), "import", "--ddp-trace", trace, "--db", other}, dir_);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(autotune::testing::LineCount(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("rank2.json"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(other));
  fs::remove(trace + "/rank2.json");
  r = RunCommand({AutotuneBinary(), "import", "--ddp-trace", trace, "--db", other}, dir_);
  EXPECT_NE(r.err.find("(rank 2) " + trace + "/rank2.json: No such file"), std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(other));
}

class FromTorchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!TorchAvailable()) GTEST_SKIP() << kPython << " cannot import torch (python3-torch)";
  }
  CommandResult FromTorch(const std::string& model, const std::string& input) {
    // The user's PYTHONPATH stays behind autotune's own folder: tiny_model is found there.
    return RunCommand({"env", "OMP_NUM_THREADS=1", "PYTHONPATH=" AUTOTUNE_SOURCE_DIR "/tests/torch",
                       AutotuneBinary(), "workloads", "--from-torch", model, "--batch", "2",
                       "--input", input, "--steps", "2"},
                      fs::temp_directory_path());
  }
};

// resnet18: 62 parameter tensors, 11,689,512 parameters (torchvision's documented count);
// the classifier is the last layer, so its gradients are ready first.
TEST_F(FromTorchTest, Resnet18IsMeasuredInGradientReadyOrder) {
  const CommandResult r = FromTorch("torchvision:resnet18", "3,32,32");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json w = nlohmann::json::parse(r.out);
  ASSERT_EQ(w["tensors"].size(), 62u);
  int64_t parameters = 0;
  double previous = 0.0;
  std::vector<bool> registered(62, false);
  for (const auto& t : w["tensors"]) {
    int64_t n = 1;
    for (const auto& d : t["shape"]) n *= d.get<int64_t>();
    parameters += n;
    EXPECT_GE(t["ready_ms"].get<double>(), previous) << t["name"];
    previous = t["ready_ms"].get<double>();
    registered.at(t["registration"].get<size_t>()) = true;
  }
  EXPECT_EQ(parameters, 11689512);
  EXPECT_EQ(w["tensors"][0]["name"].get<std::string>().rfind("fc.", 0), 0u) << r.out;
  EXPECT_EQ(w["tensors"][61]["name"], "conv1.weight");
  EXPECT_EQ(std::count(registered.begin(), registered.end(), true), 62);
  EXPECT_GT(w["backward_ms"].get<double>(), 0.0);
  EXPECT_LE(previous, w["backward_ms"].get<double>());
}

TEST_F(FromTorchTest, AnyModuleFromACallableAndParametersWithoutGradientsLeftOut) {
  const CommandResult r = FromTorch("tiny_model:build", "3,4,4");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json w = nlohmann::json::parse(r.out);
  ASSERT_EQ(w["tensors"].size(), 4u);  // body.1 and body.3 weight and bias; not `unused`
  EXPECT_EQ(w["tensors"][0]["name"].get<std::string>().rfind("body.3.", 0), 0u) << r.out;
  EXPECT_NE(r.err.find("1 parameters got no gradient and are left out: unused"),
            std::string::npos)
      << r.err;
}

TEST_F(FromTorchTest, ABadModelGivesOneLine) {
  for (const char* model : {"torchvision:no_such_net", "tiny_model:not_a_model", "resnet18",
                            "no_such_module:build"}) {
    const CommandResult r = FromTorch(model, "3,4,4");
    EXPECT_NE(r.exit_code, 0) << model;
    EXPECT_EQ(autotune::testing::LineCount(r.err), 1) << model << ": " << r.err;
    EXPECT_EQ(r.err.rfind("autotune: error: --from-torch ", 0), 0u) << r.err;
    EXPECT_TRUE(r.out.empty()) << model;
  }
}

}  // namespace
