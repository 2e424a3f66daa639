// The workload player: one training step on this rank with emulated compute.
//
// Forward compute until forward_ms (less this rank's lead), then the backward pass, during
// which each gradient is handed to the fusion engine at its ready_ms (from the start of the
// backward pass), then a wait until every gradient is reduced (the optimizer's synchronize),
// then the optimizer for optimizer_ms. Compute phases spin or sleep (executor/compute.h).
// The step starts after a world barrier; times count from there.
#pragma once

#include "executor/backend.h"
#include "executor/compute.h"
#include "executor/fusion_engine.h"
#include "traces/workload.h"

namespace autotune::executor {

// How this rank emulates the workload's compute.
struct HostCompute {
  ComputeMode mode = ComputeMode::kSpin;
  // >= 0: this rank's forward pass is this much shorter than forward_ms (clamped at 0), so
  // its gradients are ready this much earlier than the slowest rank's (replayed rank skew).
  double lead_ms = 0.0;
};

struct PlayedStep {
  double step_ms = 0.0;            // this rank's wall time of the step
  double backward_start_us = 0.0;  // from the step start
  EngineStepRecord record;
};

// Plays one step. Collective over the world (barrier, engine cycles).
Status PlayStep(const Workload& workload, const HostCompute& compute, Backend* backend,
                FusionEngine* engine, PlayedStep* out);

}  // namespace autotune::executor
