// SharedLink: collectives that run at once over one link, as a process group
// with several workers runs them (StepSchedule::max_in_flight; DDP over gloo:
// two worker threads), and the inverse that turns a trace's overlapping
// collectives back into the time each took alone.
//
// The rule. At most `slots` collectives are in flight; they start in launch
// order, each when it was launched and a slot is free (gloo's FIFO work queue,
// a worker taking the next item when it finished its last). A collective runs
// three parts in turn and holds its slot to the end:
//   before (its copy-in and its fixed part: the latency steps of the alpha-beta
//   model), shared (its bytes over the link's bandwidth), after  (its
//   copy-out).
// The before and after parts of concurrent collectives overlap freely
// (latencies and copies do not queue on the link: a second ring's messages
// travel while the first waits on its peers). The shared parts share the
// bandwidth equally: while m collectives are in their shared part each
// progresses at 1/m of its own rate (processor sharing: two allreduces over one
// link each get half of it). Why this rule: on a link that one collective
// already fills, running two at once cannot move more bytes, so only the
// latencies can overlap; splitting the bandwidth equally is what TCP flows over
// one shaped link (and gloo's interleaved ring messages on one connection) do.
// With one slot the rule is one stream: each collective starts when the
// previous one ended.
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "simulator/network_model.h"
#include "traces/trace.h"

namespace autotune::sim {

// One collective to run: launched at earliest_us, its parts' times when it runs
// alone.
struct LinkJob {
  double earliest_us = 0.0;
  double before_us = 0.0;
  double shared_us = 0.0;
  double after_us = 0.0;
};

// When one collective's parts ran.
struct LinkRun {
  double start_us = 0.0;         // got a slot (>= earliest_us)
  double shared_start_us = 0.0;  // before part done
  double shared_end_us = 0.0;    // shared part done
  double end_us = 0.0;           // after part done; the slot is free
};

// Communication slowed by compute: until slow_until_us every before and shared part runs at
// 1 / factor of its rate (the collectives' threads share the cores with the compute; the
// replay's comm_contention until the step's compute ends); factor 1: never.
struct LinkSlowdown {
  double slow_until_us = 0.0;
  double factor = 1.0;
};

// Runs jobs (in launch order) under the rule with `slots` >= 1 slots.
std::vector<LinkRun> ShareLink(std::span<const LinkJob> jobs, int slots,
                               const LinkSlowdown& slowdown = {});

// One collective as a trace recorded it: launched (queued) at launch_us,
// finished at end_us; fixed_us of it ran unshared before its shared part (0:
// all of it shared).
struct RecordedFlight {
  double launch_us = 0.0;
  double end_us = 0.0;
  double fixed_us = 0.0;
};

// The inverse of ShareLink for recorded collectives (launch order) that ran
// with `slots` slots and no copies: per collective, the time it would have
// taken alone (its fixed part plus the link time it received: each stretch of
// its shared part divided by the number of collectives sharing the link then).
// A collective starts at its launch or when a slot freed (the slots-th latest
// end among those launched before it); 0 for one that never ran (end <= start).
std::vector<double> SoloTimes(std::span<const RecordedFlight> flights, int slots);

// The part of a collective that runs unshared: the latency steps of network's
// alpha-beta model on the world (AlphaBetaCost's fixed cost, at most the
// collective's whole time); none for a hierarchical one, all of which shares
// the link. Unscaled.
double FixedPartUs(const NetworkModel& network, Op op, Algorithm algorithm, int64_t fusion_bytes);

// How many collectives the run's process group runs at once: its step
// schedule's max_in_flight for the run's workload, knobs, framework and
// backend.
int CollectivesInFlight(const RunInfo& run);

// The collectives of one step that `rank` ran, in launch order (start, then
// seq).
std::vector<const CollectiveRecord*> RankCollectives(const StepTrace& step, int rank);
// The ranks that ran a collective in step, ascending.
std::vector<int> CollectiveRanks(const StepTrace& step);

// Where a recorded collective's communication ran against its step's compute (ComputeEndUs,
// prepared_trace.h): alone (it started after the compute ended: the network alone), beside (it
// ended before: sharing the cores with the compute) or across its end; shared: it started after
// the compute ended but, with several in flight at once (gloo's two), another collective of
// its rank was in flight for more than half its time, so its time alone is the sharing rule's
// estimate, not the network's measure (real DDP:
// densenet121's 1.6 MB bucket beside its 26 MB one took 2.5-3.9x gloo's time for its size, as
// if the large one's queue went first; bench/ddp/README.md).
enum class ComputePhase { kBeside, kAcross, kAlone, kShared };

// Calls visit(record, solo_us, phase, previous) for every recorded collective of trace (step by
// step, rank by rank, in launch order) with the time it took alone under the run's slots
// (SoloTimes), where it ran against its step's compute, and the collective its rank launched
// before it in the step (nullptr for the first); fixed_us(record) is its unshared latency part
// (return 0 when all of it shared).
using SoloVisit = std::function<void(const CollectiveRecord&, double, ComputePhase,
                                     const CollectiveRecord*)>;
void ForEachSoloCollective(const Trace& trace,
                           const std::function<double(const CollectiveRecord&)>& fixed_us,
                           const SoloVisit& visit);

}  // namespace autotune::sim
