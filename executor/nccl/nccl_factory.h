// Creating the NCCL backend, without CUDA or NCCL headers: what the executor and the CLI
// call when the run's backend is "nccl" (executor/backend_choice.h picks it by name). The
// header compiles in every build; NcclAvailable() is defined in every build (a stub in
// executor/backend_choice.cc without NCCL), the rest only with AUTOTUNE_HAVE_NCCL.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "executor/backend.h"
#include "executor/fusion_engine.h"
#include "executor/layout.h"
#include "executor/step_player.h"
#include "traces/calibration.h"
#include "traces/knobs.h"
#include "traces/status.h"
#include "traces/workload.h"

namespace autotune::executor {

// Creates the NCCL backend over the ranks of world (collective over world; every rank gets
// the same verdict). In order: applies the knobs' NCCL environment (executor/knob_environment.h),
// picks this rank's GPU and, when ranks outnumber GPUs, a per-rank NCCL_HOSTID
// (executor/nccl/placement.h), creates the world communicator and splits it into the
// intra and cross communicators of layout. knobs.nccl_cross == "mpi" runs every cross-level
// primitive through MPI on pinned host copies instead of NCCL (Horovod's two variants).
// Fails with NotSupported "no CUDA device ..." where there is none.
Status MakeNcclBackend(MPI_Comm world, const NodeLayout& layout, const LayoutComms& comms,
                       const Knobs& knobs, std::unique_ptr<Backend>* out);

// The workload player for a backend made by MakeNcclBackend (executor/step_player.h on the
// GPU): forward, backward and optimizer compute are timed kernels on the backend's compute
// stream, and each gradient is handed to the engine when its CUDA event (recorded on that
// stream at its ready_ms) has completed. One player per workload; reuse it for every step.
class DeviceStepPlayer {
 public:
  virtual ~DeviceStepPlayer() = default;
  // Plays one step (collective over the world, as PlayStep).
  virtual Status Play(FusionEngine* engine, PlayedStep* out) = 0;
};
// Fails with InvalidArgument when backend is not an NCCL backend. workload and backend
// must outlive the player.
Status MakeDeviceStepPlayer(Backend* backend, const Workload* workload,
                            std::unique_ptr<DeviceStepPlayer>* out);

// `calibrate` on GPUs, beside the collective curves: the copy kernel's curve, timed with
// CUDA events (device time of one batched copy-in of `bytes`, cut into up to 16 tensors as
// a fusion buffer's members are). Appends one point per size (scope kCopy, ranks 1,
// median/min/max over repetitions, after 2 untimed warm-ups). Local to this rank.
// Fails with InvalidArgument when backend is not an NCCL backend.
Status MeasureDeviceCopyCurve(Backend* backend, std::span<const int64_t> sizes, int repetitions,
                              std::vector<CalibrationPoint>* points);

// Number of CUDA devices this process sees; 0 when there is none or the driver is missing
// (never fails: the answer for "skip or run" decisions).
int CudaDeviceCount();

// Whether this process can run the NCCL backend: OK when the build has NCCL and
// cudaGetDeviceCount sees at least one device; else NotSupported with one line starting
// "--backend nccl: " that says why (no NCCL in this build; no CUDA device, with CUDA's
// error). Local, no MPI, never starts NCCL: fit for a check before mpirun is launched.
Status NcclAvailable();

}  // namespace autotune::executor
