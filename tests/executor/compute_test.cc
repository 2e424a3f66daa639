// Emulated compute: spin burns this process's CPU for the phase, sleep leaves it idle.
// The checks are ratios of CPU time to the phase's own wall time, not wall-clock limits.
// The wall time counted is the phase's less the time this thread sat runnable waiting for a
// core (Linux schedstat, where readable), so that a machine loaded by others does not make
// spinning look idle: the ratio measures the CPU the phase asks for.
#include "executor/compute.h"

#include <gtest/gtest.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <fstream>

namespace autotune::executor {
namespace {

double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Seconds this thread has waited on a run queue (second field of schedstat); 0 if unknown.
double RunQueueWaitSeconds() {
  std::ifstream in("/proc/thread-self/schedstat");
  double on_cpu_ns = 0.0, waiting_ns = 0.0;
  if (!(in >> on_cpu_ns >> waiting_ns)) return 0.0;
  return waiting_ns * 1e-9;
}

// CPU time of the process over one compute phase of `ms`, divided by the phase's wall time
// less its run-queue wait.
double CpuPerWallOfPhase(ComputeMode mode, double ms) {
  const double wait_start = RunQueueWaitSeconds();
  const auto start = std::chrono::steady_clock::now();
  const double cpu_start = ProcessCpuSeconds();
  ComputeUntil(mode, start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                 std::chrono::duration<double, std::milli>(ms)));
  const double cpu = ProcessCpuSeconds() - cpu_start;
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double waited = RunQueueWaitSeconds() - wait_start;
  return cpu / std::max(wall - waited, 1e-3);
}

TEST(ComputeTest, SpinBurnsCpuForThePhaseAndSleepDoesNot) {
  const double spin = CpuPerWallOfPhase(ComputeMode::kSpin, 300.0);
  const double sleep = CpuPerWallOfPhase(ComputeMode::kSleep, 300.0);
  EXPECT_GT(spin, 0.5) << "spin used " << spin << " s of CPU per s of phase";
  EXPECT_LT(sleep, 0.2) << "sleep used " << sleep << " s of CPU per s of phase";
}

TEST(ComputeTest, NamesRoundTripAndBackendsHaveTheirDefaults) {
  for (ComputeMode mode : {ComputeMode::kSpin, ComputeMode::kSleep}) {
    ComputeMode parsed = mode == ComputeMode::kSpin ? ComputeMode::kSleep : ComputeMode::kSpin;
    ASSERT_TRUE(ParseComputeMode(ComputeModeName(mode), &parsed).ok());
    EXPECT_EQ(parsed, mode);
  }
  ComputeMode parsed = ComputeMode::kSpin;
  const Status bad = ParseComputeMode("busy", &parsed);
  EXPECT_EQ(bad.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(bad.message().find("busy"), std::string::npos) << bad.message();
  EXPECT_EQ(DefaultComputeMode(BackendKind::kMpi), ComputeMode::kSpin);
  EXPECT_EQ(DefaultComputeMode(BackendKind::kNccl), ComputeMode::kSleep);
}

}  // namespace
}  // namespace autotune::executor
