// The workload player: one training step on this rank with emulated compute.
//
// Forward compute (sleep forward_ms), then the backward pass, during which each gradient is
// handed to the fusion engine at its ready_ms (from the start of the backward pass), then
// a wait until every gradient is reduced (the optimizer's synchronize), then the optimizer
// (sleep optimizer_ms). The step starts after a world barrier; times count from there.
#pragma once

#include "executor/backend.h"
#include "executor/fusion_engine.h"
#include "traces/workload.h"

namespace autotune::executor {

struct PlayedStep {
  double step_ms = 0.0;            // this rank's wall time of the step
  double backward_start_us = 0.0;  // from the step start
  EngineStepRecord record;
};

// Plays one step. Collective over the world (barrier, engine cycles).
Status PlayStep(const Workload& workload, Backend* backend, FusionEngine* engine, PlayedStep* out);

}  // namespace autotune::executor
