#include "executor/step_player.h"

#include <algorithm>
#include <chrono>

namespace autotune::executor {

namespace {

SteadyClock::duration Millis(double ms) {
  return std::chrono::duration_cast<SteadyClock::duration>(
      std::chrono::duration<double, std::milli>(ms));
}

}  // namespace

Status PlayStep(const Workload& workload, const HostCompute& compute, Backend* backend,
                FusionEngine* engine, PlayedStep* out) {
  AUTOTUNE_RETURN_IF_ERROR(engine->PrepareStep());
  AUTOTUNE_RETURN_IF_ERROR(backend->Barrier(Level::kWorld));
  const SteadyClock::time_point origin = SteadyClock::now();
  engine->BeginStep(origin);
  ComputeUntil(compute.mode, origin + Millis(std::max(0.0, workload.forward_ms - compute.lead_ms)));
  const SteadyClock::time_point backward = SteadyClock::now();
  out->backward_start_us = MicrosSince(origin);
  for (int t = 0; t < static_cast<int>(workload.tensors.size()); ++t) {
    ComputeUntil(compute.mode, backward + Millis(workload.tensors[t].ready_ms));
    engine->MarkReady(t);
  }
  ComputeUntil(compute.mode, backward + Millis(workload.backward_ms));
  Status st = engine->WaitStepFinished(&out->record);
  ComputeUntil(compute.mode, SteadyClock::now() + Millis(workload.optimizer_ms));
  out->step_ms = MicrosSince(origin) / 1000.0;
  AUTOTUNE_RETURN_IF_ERROR(st);
  return engine->AfterStep();
}

}  // namespace autotune::executor
