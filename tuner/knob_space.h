// The search space of autotune's knobs (DESIGN.md, "Knobs"), by knob name. The names are
// those of traces/knobs.h (KnobNames(), SetKnob(), KnobValue()), so tools/ can move a Point
// in and out of a Knobs without the tuner depending on traces' store or MPI.
#pragma once

#include <string>

#include "tuner/space.h"

namespace autotune::tuner {

// Which backend's per-launch knobs are part of the space.
enum class KnobBackend { kMpi, kNccl };

// fusion_threshold_mb: continuous, log(1+x) over [0, 512] (0 = no fusion), default 128;
// cycle_time_ms: continuous, log over [0.1, 100], default 1;
// cache_capacity: integer, log(1+x) over [0, 4096], default 1024;
// hierarchical_allreduce, hierarchical_allgather: boolean, default false;
// num_groups: integer, log(1+x) over [0, 64], default 0;
// kMpi: mpi_allreduce_algorithm: categorical "0".."6" (Open MPI ids; "0" = its own choice),
//   per launch;
// kNccl: nccl_algo {"", ring, tree}, nccl_proto {"", simple, ll, ll128}: categorical ("" = the
//   library's default); nccl_max_nchannels: integer, log(1+x) over [0, 64] (0 = default);
//   nccl_cross {nccl, mpi}: categorical; all per launch.
Space KnobSearchSpace(KnobBackend backend);

}  // namespace autotune::tuner
