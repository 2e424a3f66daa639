// Replay options calibrated against what the recorded trace shows: whether the next
// cycle waited for the collectives, whether one-tensor collectives copied out, when the
// first cycle of a step started and how late a sleeping cycle woke up, what launching a DDP
// bucket costs, and how the
// recorded collectives' and fusion-buffer copies' durations compare to the network
// model's (robust medians; a figure the trace has too little evidence for keeps its
// default).
#pragma once

#include "simulator/negotiation_model.h"
#include "simulator/network_model.h"
#include "simulator/prepared_trace.h"
#include "simulator/replay.h"
#include "traces/trace.h"

namespace autotune::sim {

// network and negotiation predict the trace's own topology. Options the trace says
// nothing about keep their defaults. comm_scale is MeasuredCommRatios' `all` (clamped to
// [0.5, 2]); where the trace shows 3 or more collectives that ran alone and 3 or more beside
// the compute, comm_scale is the alone ones' ratio and comm_contention the beside ones' over
// it, in [1, kMaxCommContention].
ReplayOptions CalibrateOptions(const Trace& trace, const NetworkModel& network,
                               const NegotiationModel& negotiation);

// Measured comm time / model time of the recorded collectives: the median, each collective
// weighted by its model time, over all of them (`all`), over those that ran alone
// (ComputePhase::kAlone, shared_link.h: started after the step's compute ended) and over those
// that ran beside it (kBeside: ended before it did); a collective across the compute's end
// is in `all` only. Each 1 with fewer than 3 collectives; not clamped. A collective's
// measured time is what it took alone under the replay's rule for the run's process group
// (shared_link.h, SoloTimes: one in flight, it counts from the later of its start and the
// previous one's end; DDP over gloo's two, the link time it got while sharing, its latency
// part from network's alpha-beta model). Weighted, because a step's few large collectives
// decide its time: when a step runs one small and one large collective, an unweighted median
// would be either one's ratio depending on noise, and noise hits the small one hardest.
struct CommRatios {
  double all = 1.0;
  double alone = 1.0;
  double beside = 1.0;
  int alone_count = 0;
  int beside_count = 0;
};
CommRatios MeasuredCommRatios(const Trace& trace, const NetworkModel& network);

// The largest comm_contention CalibrateOptions fits (a collective beside the compute taking
// 4x its time alone).
inline constexpr double kMaxCommContention = 4.0;

// On-ready pacing (DDP): the median over the recorded launches of the gap between the last
// member's ready time on the slowest rank (the latest over ranks, as the replay launches
// from) and the launch's start, less the member's copy into
// the bucket area (copy_scale x the copy model) where the schedule copies it; launches held
// back by the one before them are left out. 0 with fewer than 3 launches or cycle pacing.
double MeasuredLaunchUs(const Trace& trace, const NetworkModel& network, double copy_scale);

}  // namespace autotune::sim
