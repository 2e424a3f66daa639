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
#pragma once

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
  explicit NegotiationModel(const NegotiationParams& params) : params_(params) {}

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
    double us = 0.0;
    if (cache_on) us += params_.bits_fixed_us + params_.cached_per_tensor_us * cached;
    if (!cache_on || uncached > 0) {
      us += params_.round_fixed_us + params_.uncached_per_tensor_us * uncached;
    }
    return us;
  }

  const NegotiationParams& params() const { return params_; }
  // Which terms came from the trace ("fitted") and which from the network ("prior").
  const std::string& provenance() const { return provenance_; }

 private:
  NegotiationParams params_;
  std::string provenance_ = "given";
};

}  // namespace autotune::sim
