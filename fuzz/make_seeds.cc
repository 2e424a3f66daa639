// Writes small valid seed inputs for every fuzz target into OUT/<target>/ (tools/fuzz.sh
// --seeds): the built-in workloads and a hand-sized one as JSON, config files as the README
// and the tests write them, tuner CSVs, a small database of one run, calibration and samples,
// and a Horovod timeline of a small trace. A cut-down real timeline is added by the script.
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "formats/config_file.h"
#include "formats/horovod_timeline.h"
#include "formats/nccl_tuner_csv.h"
#include "store/store.h"
#include "tests/support/sim_fixtures.h"
#include "traces/workload.h"

namespace autotune {
namespace {

namespace fs = std::filesystem;
using sim::testing::MakeTrace;
using sim::testing::MakeWorkload;
using sim::testing::Topo;

bool Write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  return static_cast<bool>(out);
}

Workload SmallWorkload() {
  Workload w = MakeWorkload({4096, 1 << 20, 64}, {0.5, 1.0, 2.0}, 3.0, 4.0, 1.0);
  w.name = "small";
  w.tensors[1].op = Op::kAllgather;
  w.tensors[2].dtype = DType::kFloat16;
  w.tensors[2].group = 1;
  return w;
}

bool WorkloadSeeds(const fs::path& dir) {
  bool ok = Write(dir / "small.json", WorkloadToJson(SmallWorkload()).dump(1));
  for (const std::string& name : BuiltinWorkloadNames()) {
    Workload w;
    ok = ok && BuiltinWorkload(name, &w).ok() && Write(dir / (name + ".json"),
                                                       WorkloadToJson(w).dump(1));
  }
  return ok;
}

bool ConfigSeeds(const fs::path& dir) {
  const std::string horovodrun =
      "params:\n  fusion_threshold_mb: 32\n  cycle_time_ms: 3.5\n  cache_capacity: 2048\n"
      "  hierarchical_allreduce: true\n  hierarchical_allgather: false\nautotune:\n"
      "  enabled: true\n  log_file: at.csv\n  warmup_samples: 2\n  steps_per_sample: 5\n"
      "  bayes_opt_max_samples: 30\n  gaussian_process_noise: 0.5\ntimeline:\n"
      "  filename: tl.json\n  mark_cycles: true\nstall_check:\n  enabled: true\n";
  ConfigFile c;
  c.knobs.fusion_threshold_mb = 16;
  c.knobs.num_groups = 2;
  c.knobs.nccl_algo = "tree";
  c.knobs.nccl_proto = "ll128";
  c.knobs.nccl_max_nchannels = 8;
  c.knobs.mpi_allreduce_algorithm = 3;
  c.set_knobs = {"fusion_threshold_mb", "num_groups", "nccl_algo"};
  c.provenance_json = R"({"db":"runs.db","run":2,"predicted_score":1.9e9})";
  return Write(dir / "horovodrun.yaml", horovodrun) &&
         Write(dir / "autotune_out.yaml", ConfigToYaml(c)) &&
         Write(dir / "empty.yaml", "params: {}\n");
}

bool TunerCsvSeeds(const fs::path& dir) {
  Knobs k;
  k.nccl_algo = "nvlstree";
  k.nccl_proto = "simple";
  k.nccl_max_nchannels = 16;
  std::vector<std::string> collectives = {"allreduce", "allgather", "reducescatter"};
  std::vector<NcclTunerRule> rules;
  std::string csv;
  if (!NcclTunerRulesFromKnobs(k, collectives, 2, 16, &rules).ok() ||
      !FormatNcclTunerCsv(rules, "written by autotune\nfor 2 nodes", &csv).ok()) {
    return false;
  }
  const std::string example =
      "# NCCL example tuner format\n"
      "allreduce,0,65536,tree,ll,-1,-1,-1\n"
      "allreduce,65537,4294967295,ring,simple,8,4,32,-1,1\n"
      "\n"
      "broadcast, 0, 1024, ring, ll128, 2, 1, 8, 2, 0\n";
  return Write(dir / "from_knobs.csv", csv) && Write(dir / "example.csv", example);
}

// A database with one finished recorded run, a calibration and a simulated sample, rewritten
// with 512-byte pages and no WAL so that the seed stays a few KB.
bool DatabaseSeed(const fs::path& dir) {
  const fs::path path = fs::temp_directory_path() / "autotune_fuzz_seed.db";
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path.string() + suffix);
  {
    std::unique_ptr<Store> store;
    if (!Store::Open(path, Store::Mode::kReadWrite, &store).ok()) return false;
    Trace trace = MakeTrace(SmallWorkload(), Topo(2, 2), Knobs(), 3000.0, 5.0, 2);
    trace.run.kind = RunKind::kMeasured;
    for (StepTrace& st : trace.steps) {  // one cycle and two collectives, one hierarchical
      st.cycles.push_back({0, 0, 10.0, 40.0, 3, 1, 3, 2});
      st.collectives.push_back(
          {0, 0, 0, Op::kAllreduce, Algorithm::kFlat, 4160, {0, 2}, 50.0, 60.0, 900.0, 950.0});
      st.collectives.push_back(
          {0, 1, 0, Op::kAllgather, Algorithm::kHierarchical, 1 << 22, {1}, 60.0, 70.0, 2000.0,
           2500.0});
    }
    if (!store->CreateRun(&trace.run).ok()) return false;
    for (const StepTrace& st : trace.steps) {
      if (!store->AppendStep(trace.run.id, st).ok()) return false;
    }
    if (!store->FinishRun(trace.run.id, true).ok()) return false;
    Calibration cal;
    cal.topology = Topo(2, 2);
    cal.points.push_back({Op::kAllreduce, Scope::kWorld, 4, 4096, 5, 20.0, 18.0, 25.0});
    if (!store->SaveCalibration(&cal).ok()) return false;
    std::vector<Sample> samples(1);
    samples[0].workload = "small";
    samples[0].topology = Topo(2, 2);
    samples[0].trace_run_id = trace.run.id;
    samples[0].score_bytes_per_s = 1e9;
    samples[0].step_ms = 4.5;
    if (!store->AddSamples(&samples).ok()) return false;
  }
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) return false;
  const int rc = sqlite3_exec(
      db, "PRAGMA journal_mode = DELETE; PRAGMA page_size = 512; VACUUM;", nullptr, nullptr,
      nullptr);
  sqlite3_close(db);
  if (rc != SQLITE_OK) return false;
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  fs::remove(path);
  return Write(dir / "one_run.db", bytes);
}

bool TimelineSeed(const fs::path& dir) {
  Trace trace = MakeTrace(SmallWorkload(), Topo(1, 2), Knobs(), 3000.0, 5.0, 3);
  return Write(dir / "written_small.json", WriteHorovodTimeline(trace));
}

}  // namespace
}  // namespace autotune

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: fuzz_make_seeds OUT_DIR\n";
    return 2;
  }
  const std::filesystem::path out(argv[1]);
  const bool ok = autotune::WorkloadSeeds(out / "workload_json") &&
                  autotune::ConfigSeeds(out / "config_yaml") &&
                  autotune::TunerCsvSeeds(out / "tuner_csv") &&
                  autotune::DatabaseSeed(out / "store_db") &&
                  autotune::TimelineSeed(out / "horovod_timeline");
  if (!ok) std::cerr << "fuzz_make_seeds: could not write every seed\n";
  return ok ? 0 : 1;
}
