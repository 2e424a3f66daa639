// NegotiationModel: what one background cycle's negotiation costs (Horovod's controller as
// the executor runs it): with the response cache on, every cycle does one bitwise-AND
// allreduce of the cache bit-vector; a coordinator round (gather of new requests at rank 0,
// broadcast of the agreed list) follows when some rank has an uncached tensor to report,
// and runs every cycle when the cache is off.
//
//   cycle_us = [cache on]  (bits_fixed_us + cached_per_tensor_us * cached)
//            + [round]     (round_fixed_us + uncached_per_tensor_us * uncached)
//
// Fitted to a trace's recorded cycles (robust line fits per kind of cycle), with priors
// from the network model for a kind of cycle the trace never ran (scaled by how far the
// fitted kind sits from its own prior), and rescaled for other topologies by the network
// model's small-message costs.
//
// What an idle cycle costs the host's CPU is another figure (IdleCycleCpuUs): a cycle's
// negotiation is a collective every rank's background thread must join, so on ranks that
// share cores its recorded time is mostly the wait for a descheduled peer, spent yielding
// (Open MPI's mpi_yield_when_idle, which it turns on where it knows it is oversubscribed and
// tools/cluster.sh sets), not computing. Its CPU is at most what the messages cost with every
// rank present: the prior from the network model.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "simulator/network_model.h"
#include "traces/trace.h"

namespace autotune::sim {

struct NegotiationParams {
  double bits_fixed_us = 0.0;           // cache bit-vector allreduce, per cycle
  double cached_per_tensor_us = 0.0;    // per tensor agreed through the cache
  double round_fixed_us = 0.0;          // coordinator gather + broadcast, per round
  double uncached_per_tensor_us = 0.0;  // per tensor agreed through the coordinator
};

class NegotiationModel {
 public:
  NegotiationModel() = default;
  // A model given its costs: an idle cycle's CPU is its time (no prior to bound it).
  explicit NegotiationModel(const NegotiationParams& params)
      : params_(params), cpu_bound_(params) {}

  // Fits to the cycles recorded in trace (run under trace.run.knobs) on the topology that
  // network predicts (the trace's own).
  static NegotiationModel Fit(const Trace& trace, const NetworkModel& network);
  // Priors only: what the network model says the messages cost.
  static NegotiationModel Prior(const NetworkModel& network, int num_tensors);

  // The same model on another topology: fixed costs scaled by the small-message costs of
  // `to` over `from`, the per-uncached-tensor cost by the world size ratio.
  NegotiationModel Retarget(const NetworkModel& from, const NetworkModel& to) const;

  // Cost of a cycle that agrees `cached` tensors through the cache and `uncached` through
  // the coordinator. An idle cycle is CycleUs(cache_on, 0, 0).
  double CycleUs(bool cache_on, int cached, int uncached) const {
    return CostUs(params_, cache_on, cached, uncached);
  }
  // CPU time an idle cycle costs a rank's communication thread: its time, at most the prior's
  // (the messages with every rank present; see the file comment).
  double IdleCycleCpuUs(bool cache_on) const {
    return std::min(CostUs(params_, cache_on, 0, 0), CostUs(cpu_bound_, cache_on, 0, 0));
  }

  const NegotiationParams& params() const { return params_; }
  // Which terms came from the trace ("fitted") and which from the network ("prior").
  const std::string& provenance() const { return provenance_; }

 private:
  // The cycle cost formula of the file comment under costs p.
  static double CostUs(const NegotiationParams& p, bool cache_on, int cached, int uncached) {
    double us = 0.0;
    if (cache_on) us += p.bits_fixed_us + p.cached_per_tensor_us * cached;
    if (!cache_on || uncached > 0) us += p.round_fixed_us + p.uncached_per_tensor_us * uncached;
    return us;
  }

  NegotiationParams params_;
  // The costs an idle cycle's CPU is bounded by (IdleCycleCpuUs): the prior for a fitted
  // model, the model's own costs for a given one.
  NegotiationParams cpu_bound_;
  std::string provenance_ = "given";
};

}  // namespace autotune::sim
