// DeviceStepPlayer for the NCCL backend (interface in executor/nccl/nccl_factory.h).
//
// The whole step's compute is enqueued up front on the compute stream against absolute
// deadlines on the GPU's clock (executor/nccl/spin_kernel.h): a timer stamp, the forward
// pass, then per gradient a spin to its ready time and a CUDA event, the rest of the
// backward pass. The host thread waits on each event in turn and hands that gradient to
// the fusion engine, whose collectives run meanwhile on the communication stream.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "executor/nccl/cuda_status.h"
#include "executor/nccl/nccl_backend.h"
#include "executor/nccl/nccl_factory.h"
#include "executor/nccl/spin_kernel.h"

namespace autotune::executor {

namespace {

int64_t Nanos(double ms) { return std::llround(ms * 1e6); }

class NcclStepPlayer : public DeviceStepPlayer {
 public:
  NcclStepPlayer(NcclBackend* backend, const Workload* workload)
      : backend_(backend), workload_(workload) {}
  ~NcclStepPlayer() override {
    backend_->MakeDeviceCurrent();
    cudaStreamSynchronize(backend_->compute_stream());
    for (cudaEvent_t e : events_) cudaEventDestroy(e);
  }

  Status Init() {
    AUTOTUNE_RETURN_IF_ERROR(backend_->MakeDeviceCurrent());
    AUTOTUNE_RETURN_IF_ERROR(backend_->Allocate(sizeof(uint64_t), &origin_));
    // One event per gradient, then forward end and backward end.
    const size_t n = workload_->tensors.size() + 2;
    for (size_t i = 0; i < n; ++i) {
      cudaEvent_t e = nullptr;
      AUTOTUNE_RETURN_IF_ERROR(CudaStatus(cudaEventCreateWithFlags(&e, cudaEventDisableTiming),
                                          "cudaEventCreateWithFlags"));
      events_.push_back(e);
    }
    return Status::Ok();
  }

  Status Play(FusionEngine* engine, PlayedStep* out) override {
    AUTOTUNE_RETURN_IF_ERROR(backend_->MakeDeviceCurrent());
    AUTOTUNE_RETURN_IF_ERROR(backend_->Barrier(Level::kWorld));
    const SteadyClock::time_point origin = SteadyClock::now();
    engine->BeginStep(origin);
    const int n = static_cast<int>(workload_->tensors.size());
    Status st = Enqueue();
    if (st.ok()) st = Wait(events_[n]);
    out->backward_start_us = MicrosSince(origin);
    int marked = 0;
    for (; marked < n && st.ok(); ++marked) {
      st = Wait(events_[marked]);
      engine->MarkReady(marked);
    }
    // After a failure the engine still needs every gradient to finish the step.
    for (; marked < n; ++marked) engine->MarkReady(marked);
    if (st.ok()) st = Wait(events_[n + 1]);
    Status finished = engine->WaitStepFinished(&out->record);
    if (st.ok()) st = finished;
    cudaStream_t compute = backend_->compute_stream();
    if (st.ok()) {
      st = CudaStatus(LaunchSpinFor(Nanos(workload_->optimizer_ms), compute),
                      "optimizer spin kernel launch");
    }
    if (st.ok()) st = CudaStatus(cudaStreamSynchronize(compute), "cudaStreamSynchronize");
    out->step_ms = MicrosSince(origin) / 1000.0;
    return st;
  }

 private:
  Status Enqueue() {
    cudaStream_t s = backend_->compute_stream();
    auto* t0 = static_cast<const uint64_t*>(origin_->data());
    const int n = static_cast<int>(workload_->tensors.size());
    const int64_t forward_ns = Nanos(workload_->forward_ms);
    AUTOTUNE_RETURN_IF_ERROR(CudaStatus(
        LaunchStampTimer(static_cast<uint64_t*>(origin_->data()), s), "timer kernel launch"));
    AUTOTUNE_RETURN_IF_ERROR(
        CudaStatus(LaunchSpinUntil(t0, forward_ns, s), "forward spin kernel launch"));
    AUTOTUNE_RETURN_IF_ERROR(CudaStatus(cudaEventRecord(events_[n], s), "cudaEventRecord"));
    for (int t = 0; t < n; ++t) {
      const int64_t ready_ns = forward_ns + Nanos(workload_->tensors[t].ready_ms);
      AUTOTUNE_RETURN_IF_ERROR(
          CudaStatus(LaunchSpinUntil(t0, ready_ns, s), "backward spin kernel launch"));
      AUTOTUNE_RETURN_IF_ERROR(CudaStatus(cudaEventRecord(events_[t], s), "cudaEventRecord"));
    }
    AUTOTUNE_RETURN_IF_ERROR(
        CudaStatus(LaunchSpinUntil(t0, forward_ns + Nanos(workload_->backward_ms), s),
                   "backward spin kernel launch"));
    return CudaStatus(cudaEventRecord(events_[n + 1], s), "cudaEventRecord");
  }

  static Status Wait(cudaEvent_t e) {
    return CudaStatus(cudaEventSynchronize(e), "cudaEventSynchronize(gradient ready event)");
  }

  NcclBackend* backend_;
  const Workload* workload_;
  std::unique_ptr<Buffer> origin_;  // the GPU timer at the step's start, ns
  std::vector<cudaEvent_t> events_;
};

}  // namespace

Status MakeDeviceStepPlayer(Backend* backend, const Workload* workload,
                            std::unique_ptr<DeviceStepPlayer>* out) {
  auto* nccl = dynamic_cast<NcclBackend*>(backend);
  if (nccl == nullptr) {
    return Status::InvalidArgument(std::string("the device step player needs the nccl backend, "
                                               "not ") +
                                   backend->name());
  }
  auto player = std::make_unique<NcclStepPlayer>(nccl, workload);
  AUTOTUNE_RETURN_IF_ERROR(player->Init());
  *out = std::move(player);
  return Status::Ok();
}

}  // namespace autotune::executor
