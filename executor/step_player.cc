#include "executor/step_player.h"

#include <chrono>
#include <thread>

namespace autotune::executor {

namespace {

SteadyClock::duration Millis(double ms) {
  return std::chrono::duration_cast<SteadyClock::duration>(
      std::chrono::duration<double, std::milli>(ms));
}

}  // namespace

Status PlayStep(const Workload& workload, Backend* backend, FusionEngine* engine, PlayedStep* out) {
  AUTOTUNE_RETURN_IF_ERROR(backend->Barrier(Level::kWorld));
  const SteadyClock::time_point origin = SteadyClock::now();
  engine->BeginStep(origin);
  std::this_thread::sleep_until(origin + Millis(workload.forward_ms));
  const SteadyClock::time_point backward = SteadyClock::now();
  out->backward_start_us = MicrosSince(origin);
  for (int t = 0; t < static_cast<int>(workload.tensors.size()); ++t) {
    std::this_thread::sleep_until(backward + Millis(workload.tensors[t].ready_ms));
    engine->MarkReady(t);
  }
  std::this_thread::sleep_until(backward + Millis(workload.backward_ms));
  Status st = engine->WaitStepFinished(&out->record);
  std::this_thread::sleep_for(Millis(workload.optimizer_ms));
  out->step_ms = MicrosSince(origin) / 1000.0;
  return st;
}

}  // namespace autotune::executor
