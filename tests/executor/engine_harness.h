// Test harness: one fusion engine on MPI_COMM_WORLD with its backend and tensors, and a
// mixed workload that exercises every dtype, both ops, odd sizes and remainders.
#pragma once

#include <mpi.h>

#include <memory>
#include <string>

#include "executor/fusion_engine.h"
#include "executor/layout.h"
#include "executor/mpi_backend.h"
#include "executor/mpi_control.h"
#include "executor/mpi_runtime.h"
#include "executor/pattern.h"
#include "executor/step_player.h"

namespace autotune::executor::test_support {

// 16 tensors: sizes from 1 to 250,000 elements (many not divisible by 2 or 4), dtypes
// cycling through all six, every fifth (from the fourth) an allgather; ready every 0.3 ms.
inline Workload MixedWorkload() {
  const int64_t sizes[] = {1,     3,      7, 64, 1000,   1001, 4097, 16389,
                           65536, 100003, 2, 33, 250000, 5,    77,   8191};
  const DType dtypes[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                          DType::kInt32,   DType::kInt64,   DType::kFloat32, DType::kFloat32};
  Workload w;
  w.name = "mixed";
  w.forward_ms = 0.5;
  w.backward_ms = 6.0;
  w.optimizer_ms = 0.2;
  for (int i = 0; i < 16; ++i) {
    TensorSpec t;
    t.name = "t" + std::to_string(i);
    t.shape = {sizes[i]};
    t.dtype = dtypes[i % 8];
    t.op = i % 5 == 3 ? Op::kAllgather : Op::kAllreduce;
    t.ready_ms = 0.3 * i;
    w.tensors.push_back(t);
  }
  return w;
}

// True on every rank when st is OK on every rank; else the first failing rank's message.
inline ::testing::AssertionResult AllRanksOk(const Status& st) {
  Status agreed = AgreeOnStatus(MPI_COMM_WORLD, st);
  if (agreed.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << agreed.message();
}

class EngineHarness {
 public:
  ~EngineHarness() {
    engine.reset();
    memory.reset();
    control.reset();
    backend.reset();
    FreeLayoutComms(&comms);
  }

  Status Init(const Workload& w, const Knobs& knobs,
              Framework framework = Framework::kHorovod) {
    workload = w;
    AUTOTUNE_RETURN_IF_ERROR(DetectLayout(MPI_COMM_WORLD, &layout, &comms));
    AUTOTUNE_RETURN_IF_ERROR(CreateMpiBackend(MPI_COMM_WORLD, comms, &backend));
    control = CreateMpiControlChannel(MPI_COMM_WORLD);
    AUTOTUNE_RETURN_IF_ERROR(TensorMemory::Create(backend.get(), workload, layout.size, &memory));
    AUTOTUNE_RETURN_IF_ERROR(FillInputs(backend.get(), workload, layout.rank, memory.get()));
    return FusionEngine::Create(backend.get(), &layout, &workload, memory.get(), control.get(),
                                knobs, &engine, framework);
  }

  // One step with poisoned outputs, then verification of every result.
  Status Step(PlayedStep* played) {
    AUTOTUNE_RETURN_IF_ERROR(PoisonOutputs(backend.get(), memory.get()));
    const HostCompute sleep{ComputeMode::kSleep};  // the engine's tests need no CPU burnt
    AUTOTUNE_RETURN_IF_ERROR(PlayStep(workload, sleep, backend.get(), engine.get(), played));
    return VerifyOutputs(backend.get(), workload, layout.rank, layout.size, memory.get());
  }

  Workload workload;
  NodeLayout layout;
  LayoutComms comms;
  std::unique_ptr<Backend> backend;
  std::unique_ptr<ControlChannel> control;
  std::unique_ptr<TensorMemory> memory;
  std::unique_ptr<FusionEngine> engine;
};

}  // namespace autotune::executor::test_support
