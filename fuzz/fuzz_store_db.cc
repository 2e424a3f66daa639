// Fuzz target: the store reading a corrupted database file. The input bytes become a file
// under /dev/shm (/tmp without it), opened read-only with Store::Open; every run, its steps
// and trace, its samples and every calibration are then read through the public Store API.
// Whatever the file holds, every call returns a Status; none crashes.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "store/store.h"

namespace {

// Runs read per input at most: a file of many run rows reads the same code many times.
constexpr size_t kMaxRunsRead = 16;

std::string DatabasePath() {
  const std::string folder = std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : "/tmp";
  return folder + "/autotune_fuzz_store_" + std::to_string(getpid()) + ".db";
}

void RemoveDatabase(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    std::remove((path + suffix).c_str());
  }
}

void ReadEverything(autotune::Store* store) {
  std::vector<autotune::RunInfo> runs;
  if (store->ListRuns(&runs).ok()) {
    if (runs.size() > kMaxRunsRead) runs.resize(kMaxRunsRead);
    for (const autotune::RunInfo& listed : runs) {
      autotune::RunInfo info;
      (void)store->GetRun(listed.id, &info);
      std::vector<double> step_ms, score;
      (void)store->GetStepSeries(listed.id, &step_ms, &score);
      autotune::Trace trace;
      (void)store->LoadTrace(listed.id, &trace);
      std::vector<autotune::Sample> samples;
      (void)store->ListSamples(listed.workload.name, listed.topology, &samples);
    }
  }
  std::vector<autotune::Calibration> calibrations;
  if (store->ListCalibrations(&calibrations).ok()) {
    if (calibrations.size() > kMaxRunsRead) calibrations.resize(kMaxRunsRead);
    for (const autotune::Calibration& listed : calibrations) {
      autotune::Calibration c;
      (void)store->GetCalibration(listed.id, &c);
      (void)store->FindCalibration(listed.topology, listed.backend, &c);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = DatabasePath();
  RemoveDatabase(path);
  {
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    if (!file) std::abort();
  }
  std::unique_ptr<autotune::Store> store;
  autotune::Status s = autotune::Store::Open(path, autotune::Store::Mode::kReadOnly, &store);
  if (s.ok()) {
    ReadEverything(store.get());
  } else if (s.message().empty()) {
    std::abort();
  }
  store.reset();
  RemoveDatabase(path);
  return 0;
}
