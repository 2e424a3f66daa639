#include "tuner/knob_space.h"

#include <cstdlib>
#include <iostream>

namespace autotune::tuner {
namespace {

void MustAdd(Space* space, Dimension dimension) {
  Status status = space->AddDimension(std::move(dimension));
  if (!status.ok()) {  // A defect in the table below, not a user error.
    std::cerr << "autotune: internal error in the knob space: " << status.message() << "\n";
    std::abort();
  }
}

}  // namespace

Space KnobSearchSpace(KnobBackend backend) {
  Space space;
  MustAdd(&space, Dimension::Continuous("fusion_threshold_mb", 0.0, 512.0, Scale::kLog1p, 128.0));
  MustAdd(&space, Dimension::Continuous("cycle_time_ms", 0.1, 100.0, Scale::kLog, 1.0));
  MustAdd(&space, Dimension::Integer("cache_capacity", 0.0, 4096.0, Scale::kLog1p, 1024.0));
  MustAdd(&space, Dimension::Boolean("hierarchical_allreduce", false));
  MustAdd(&space, Dimension::Boolean("hierarchical_allgather", false));
  MustAdd(&space, Dimension::Integer("num_groups", 0.0, 64.0, Scale::kLog1p, 0.0));
  if (backend == KnobBackend::kMpi) {
    MustAdd(&space,
            Dimension::Categorical("mpi_allreduce_algorithm", {"0", "1", "2", "3", "4", "5", "6"},
                                   0, Lifetime::kPerLaunch));
  } else {
    MustAdd(&space,
            Dimension::Categorical("nccl_algo", {"", "ring", "tree"}, 0, Lifetime::kPerLaunch));
    MustAdd(&space, Dimension::Categorical("nccl_proto", {"", "simple", "ll", "ll128"}, 0,
                                           Lifetime::kPerLaunch));
    MustAdd(&space, Dimension::Integer("nccl_max_nchannels", 0.0, 64.0, Scale::kLog1p, 0.0,
                                       Lifetime::kPerLaunch));
    MustAdd(&space, Dimension::Categorical("nccl_cross", {"nccl", "mpi"}, 0, Lifetime::kPerLaunch));
  }
  return space;
}

}  // namespace autotune::tuner
