#include <memory>
#include <string>

#include "executor/fusion_engine.h"
#include "executor/mpi_control.h"
#include "executor/nccl/nccl_factory.h"
#include "executor/pattern.h"
#include "executor/tensor_memory.h"
#include "gpu_checks.h"

namespace autotune::executor::gpu_test {

namespace {

// 30 tensors of every dtype, odd sizes, every fifth an allgather, ready over 6 ms.
Workload MixedWorkload() {
  const DType dtypes[] = {DType::kFloat32, DType::kFloat16, DType::kBFloat16,
                          DType::kFloat64, DType::kInt32,   DType::kInt64};
  Workload w;
  w.name = "gpu-mixed";
  w.forward_ms = 1.0;
  w.backward_ms = 6.0;
  w.optimizer_ms = 0.5;
  for (int i = 0; i < 30; ++i) {
    TensorSpec t;
    t.name = "t" + std::to_string(i);
    t.shape = {1 + (static_cast<int64_t>(i) * 7919) % 40000};
    t.dtype = dtypes[i % 6];
    t.op = i % 5 == 4 ? Op::kAllgather : Op::kAllreduce;
    t.ready_ms = 6.0 * i / 30;
    w.tensors.push_back(t);
  }
  return w;
}

}  // namespace

Status CheckEngine(Backend* b, const NodeLayout& layout, const Knobs& knobs) {
  const Workload w = MixedWorkload();
  std::unique_ptr<TensorMemory> memory;
  AUTOTUNE_RETURN_IF_ERROR(TensorMemory::Create(b, w, layout.size, &memory));
  AUTOTUNE_RETURN_IF_ERROR(FillInputs(b, w, layout.rank, memory.get()));
  std::unique_ptr<ControlChannel> control = CreateMpiControlChannel(MPI_COMM_WORLD);
  std::unique_ptr<DeviceStepPlayer> player;
  AUTOTUNE_RETURN_IF_ERROR(MakeDeviceStepPlayer(b, &w, &player));
  std::unique_ptr<FusionEngine> engine;
  AUTOTUNE_RETURN_IF_ERROR(
      FusionEngine::Create(b, &layout, &w, memory.get(), control.get(), knobs, &engine));
  for (int step = 0; step < 2; ++step) {
    AUTOTUNE_RETURN_IF_ERROR(PoisonOutputs(b, memory.get()));
    PlayedStep played;
    AUTOTUNE_RETURN_IF_ERROR(player->Play(engine.get(), &played));
    AUTOTUNE_RETURN_IF_ERROR(VerifyOutputs(b, w, layout.rank, layout.size, memory.get())
                                 .WithPrefix("step " + std::to_string(step)));
    if (played.step_ms < w.forward_ms + w.backward_ms) {
      return Status::Internal("step took " + std::to_string(played.step_ms) +
                              " ms, less than its emulated compute");
    }
    for (const TensorEvent& e : played.record.tensors) {
      const double due_us = 1000.0 * (w.forward_ms + w.tensors[e.tensor].ready_ms);
      if (e.ready_us + 50.0 < due_us) {
        return Status::Internal("tensor " + std::to_string(e.tensor) + " ready at " +
                                std::to_string(e.ready_us) + " us, before its compute (" +
                                std::to_string(due_us) + " us)");
      }
    }
  }
  return Status::Ok();
}

}  // namespace autotune::executor::gpu_test
