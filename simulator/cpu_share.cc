#include "simulator/cpu_share.h"

#include <algorithm>

namespace autotune::sim {

double CommThreadShare(const CpuShareParams& params, const CommLoad& load) {
  if (!(load.step_us > 0.0)) return 0.0;
  const double cpu_us = params.sigma * load.busy_us + load.cycles * params.cycle_cpu_us;
  return std::clamp(cpu_us / load.step_us, 0.0, 1.0);
}

double ComputeStretch(const CpuShareParams& params, double d, double tau, int ranks) {
  if (!params.enabled()) return 1.0;
  const double wanted = (ranks > 0 ? ranks : params.ranks) * (1.0 + d) + tau;
  return std::max(1.0, wanted / params.cores);
}

CpuShareParams CpuShareOf(const RunInfo& run) {
  CpuShareParams p;
  p.cores = std::max(0, run.host.cores);
  p.ranks = std::max(1, run.topology.ranks_per_node * std::max(1, run.host.nodes_per_host));
  p.recorded_ranks = p.ranks;
  return p;
}

}  // namespace autotune::sim
