// Emulated compute on the host: how a rank's thread spends a compute phase of the workload
// (forward, backward until each gradient's ready time, optimizer).
#pragma once

#include <chrono>
#include <string>

#include "traces/backend_kind.h"
#include "traces/status.h"

namespace autotune::executor {

enum class ComputeMode {
  kSpin,   // busy work on the thread's core until the phase's end: contends like training
  kSleep,  // the thread sleeps until the phase's end: the CPU stays free for others
};

// "spin" | "sleep".
const char* ComputeModeName(ComputeMode mode);
// Inverse of ComputeModeName; InvalidArgument naming the value and the accepted names.
Status ParseComputeMode(const std::string& name, ComputeMode* out);
// The mode a backend uses unless told otherwise: spin on mpi (the CPU computes), sleep on
// nccl (the GPU computes; the host thread only waits).
ComputeMode DefaultComputeMode(BackendKind backend);

// Returns once the steady clock has reached deadline (at once if it has passed). kSpin keeps the
// calling thread running arithmetic the compiler cannot drop until then; kSleep sleeps.
void ComputeUntil(ComputeMode mode, std::chrono::steady_clock::time_point deadline);

}  // namespace autotune::executor
