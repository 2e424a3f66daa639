#include "traces/step_schedule.h"

#include "traces/ddp_buckets.h"
#include "traces/fusion_policy.h"

namespace autotune {

std::unique_ptr<StepSchedule> MakeStepSchedule(const Workload& workload, const Knobs& knobs,
                                               Framework framework, int world_size,
                                               CollectiveRunner runner, int local_size) {
  switch (framework) {
    case Framework::kDdp:
      // NCCL's gradient copies are device kernels: no host time.
      return std::make_unique<DdpBucketSchedule>(workload, knobs, DdpCollectivesInFlight(runner),
                                                 runner != CollectiveRunner::kNcclLibrary);
    case Framework::kHorovod:
      break;
  }
  return std::make_unique<HorovodCycleSchedule>(
      workload, knobs, world_size, runner == CollectiveRunner::kExecutor ? 0 : local_size);
}

CollectiveRunner RunnerOf(const RunInfo& run) {
  if (run.kind != RunKind::kImported) return CollectiveRunner::kExecutor;
  return run.backend == BackendKind::kNccl ? CollectiveRunner::kNcclLibrary
                                           : CollectiveRunner::kHostLibrary;
}

std::unique_ptr<StepSchedule> MakeRunSchedule(const RunInfo& run, const Knobs& knobs,
                                              const Topology& topology) {
  return MakeStepSchedule(run.workload, knobs, run.framework, topology.world_size(),
                          RunnerOf(run), topology.ranks_per_node);
}

CollectiveRecord RecordOf(const FusedCollective& c, Algorithm algorithm,
                          const CollectivePhases& phases, int rank, int seq, int cycle) {
  CollectiveRecord r;
  r.rank = rank;
  r.seq = seq;
  r.cycle = cycle;
  r.op = c.op;
  r.algorithm = algorithm;
  r.bytes = c.bytes;
  r.tensors = c.tensors;
  r.start_us = phases.start_us;
  r.copy_in_end_us = phases.copy_in_end_us;
  r.comm_end_us = phases.comm_end_us;
  r.end_us = phases.end_us;
  return r;
}

void RecordCopyBack(double end_us, std::vector<CollectiveRecord>* collectives,
                    std::vector<TensorEvent>* tensors) {
  if (!collectives->empty()) collectives->back().end_us = end_us;
  for (TensorEvent& e : *tensors) e.done_us = end_us;
}

}  // namespace autotune
