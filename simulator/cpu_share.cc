#include "simulator/cpu_share.h"

#include <algorithm>
#include <cstdio>

namespace autotune::sim {

double CommThreadShare(const CpuShareParams& params, const CommLoad& load) {
  if (!(load.step_us > 0.0)) return 0.0;
  const double cpu_us =
      params.sigma * load.busy_us + load.cycles * load.cycle_cpu_us * params.cycle_cpu_share;
  return std::clamp(cpu_us / load.step_us, 0.0, 1.0);
}

double ComputeStretch(const CpuShareParams& params, double d, double tau, int ranks) {
  if (!params.enabled()) return 1.0;
  const double wanted = (ranks > 0 ? ranks : params.ranks) * (1.0 + d) + tau;
  return std::max(1.0, wanted / params.cores);
}

double CommStretch(const CpuShareParams& params, double tau, int ranks) {
  if (!params.enabled()) return 1.0;
  return std::max(1.0, (std::max(1, ranks) + std::max(0.0, tau)) / params.cores);
}

CpuShareParams CpuShareOf(const RunInfo& run) {
  CpuShareParams p;
  p.cores = std::max(0, run.host.cores);
  p.ranks = std::max(1, run.topology.ranks_per_node * std::max(1, run.host.nodes_per_host));
  p.recorded_ranks = p.ranks;
  return p;
}

double TracerPriorCores(const RunInfo& run) {
  return run.kind == RunKind::kImported && run.framework == Framework::kHorovod ? 1.0 : 0.0;
}

double TracingCostOf(const RunInfo& run) {
  const double traced_ms = run.traced_step_ms > 0.0 ? run.traced_step_ms : run.step_ms_median;
  return run.untraced_step_ms > 0.0 && traced_ms > 0.0 ? traced_ms / run.untraced_step_ms : 0.0;
}

double TracerCoresOf(const RunInfo& run) {
  const double cost = TracingCostOf(run);
  const CpuShareParams host = CpuShareOf(run);
  if (cost == 0.0 || !host.enabled()) return TracerPriorCores(run);
  const double tau = cost * std::max(host.cores, host.ranks) - host.ranks;
  return std::clamp(tau, 0.0, 1.0);
}

double TracerCommScale(const RunInfo& replayed, const RunInfo& other) {
  // A replayed run whose production step is no faster than its traced one measured no tracing
  // cost (the replay pools the two: run-to-run noise), so the job's runs do not resolve one.
  const double cost = TracingCostOf(replayed);
  if (cost > 0.0 && cost <= 1.0) return 1.0;
  const CpuShareParams host = CpuShareOf(other);
  return CommStretch(host, TracerCoresOf(replayed), host.ranks) /
         CommStretch(host, TracerCoresOf(other), host.ranks);
}

std::string DescribeCpuShare(const CpuShareParams& c) {
  if (!c.enabled()) return "compute slowed by communication: not modelled (host cores not known)";
  char line[768];
  std::snprintf(line, sizeof(line),
                "compute slowed by communication: %d ranks share %d cores; communication "
                "thread spins %.3f of each collective (%s), %.1f us per cycle (%.2f of the "
                "negotiation's modelled cost); tracer %.2f "
                "cores (%s), its collectives at %.3fx their time without it",
                c.ranks, c.cores, c.sigma, c.sigma_source.c_str(),
                c.cycle_cpu_us * c.cycle_cpu_share, c.cycle_cpu_share, c.recorded_tau,
                c.tau_source.c_str(),
                CommStretch(c, c.recorded_tau, c.recorded_ranks) /
                    CommStretch(c, 0.0, c.recorded_ranks));
  return line;
}

}  // namespace autotune::sim
