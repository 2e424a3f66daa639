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
// nothing about keep their defaults.
ReplayOptions CalibrateOptions(const Trace& trace, const NetworkModel& network,
                               const NegotiationModel& negotiation);

// Median over the recorded collectives of measured comm time / model time, each collective
// weighted by its model time (1 when the trace has fewer than 3 collectives). A collective's
// measured time is what it took alone under the replay's rule for the run's process group
// (shared_link.h, SoloTimes: one in flight, it counts from the later of its start and the
// previous one's end; DDP over gloo's two, the link time it got while sharing, its latency
// part from network's alpha-beta model).
// Not clamped. Weighted, because a step's few large collectives decide its time: when a
// step runs one small and one large collective, an unweighted median would be either
// one's ratio depending on noise, and noise hits the small one hardest.
double MeasuredCommRatio(const Trace& trace, const NetworkModel& network);

// On-ready pacing (DDP): the median over the recorded launches of the gap between the last
// member's ready time and the launch's start on the same rank, less the member's copy into
// the bucket area (copy_scale x the copy model) where the schedule copies it; launches held
// back by the one before them are left out. 0 with fewer than 3 launches or cycle pacing.
double MeasuredLaunchUs(const Trace& trace, const NetworkModel& network, double copy_scale);

}  // namespace autotune::sim
