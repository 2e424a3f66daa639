#include "tests/simulator/emulator.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace autotune::sim::testing {
namespace {

int CeilLog2(int p) {
  int s = 0;
  while ((1 << s) < p) ++s;
  return s;
}

}  // namespace

double EmulatedAllreduceUs(const EmulatedCluster&, int ranks, double latency_us,
                           double bytes_per_us, double bytes) {
  if (ranks <= 1) return 0.0;
  return 2.0 * CeilLog2(ranks) * latency_us + 2.0 * (ranks - 1) / ranks * bytes / bytes_per_us;
}

Trace Emulate(const Workload& w, const Knobs& knobs, const EmulatedCluster& c, int steps,
              uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  auto noisy = [&](double us) { return us * (1.0 + c.noise * (2.0 * unit(rng) - 1.0)); };
  const int n = static_cast<int>(w.tensors.size());
  const int world = c.topology.world_size();
  const int m = c.topology.ranks_per_node;
  const int nodes = c.topology.nodes;
  const int64_t threshold = knobs.threshold_bytes();
  const bool cache_on = knobs.cache_capacity > 0;
  const bool all_cached = cache_on && knobs.cache_capacity >= n;

  auto comm_us = [&](double bytes) {
    if (!knobs.hierarchical_allreduce) {
      return EmulatedAllreduceUs(c, world, c.world_latency_us, c.world_bytes_per_us, bytes);
    }
    const double rs =
        0.5 * EmulatedAllreduceUs(c, m, c.intra_latency_us, c.intra_bytes_per_us, bytes);
    const double cross =
        EmulatedAllreduceUs(c, nodes, c.cross_latency_us, c.cross_bytes_per_us, bytes / m);
    const double ag =
        m > 1 ? CeilLog2(m) * c.intra_latency_us + (m - 1) * (bytes / m) / c.intra_bytes_per_us
              : 0.0;
    return rs + cross + ag;
  };

  Trace trace;
  trace.run.id = 1;
  trace.run.workload = w;
  trace.run.knobs = knobs;
  trace.run.topology = c.topology;
  trace.run.complete = true;
  for (int s = 0; s < steps; ++s) {
    StepTrace st;
    st.step = s;
    st.backward_start_us = w.forward_ms * 1000.0 + 30.0 * unit(rng);
    st.bytes = w.total_bytes();
    std::vector<double> agreed(n, 0.0);
    for (int r = 0; r < world; ++r) {
      for (int t = 0; t < n; ++t) {
        const double ready = st.backward_start_us + w.tensors[t].ready_ms * 1000.0 +
                             (r == 0 ? 0.0 : c.rank_jitter_us * unit(rng));
        st.tensors.push_back({r, t, ready, 0.0});
        agreed[t] = std::max(agreed[t], ready);
      }
    }
    std::vector<double> done(n, 0.0);
    std::vector<bool> taken(n, false);
    int finished = 0;
    double next_us = 0.0;
    for (int cycle = 0; finished < n; ++cycle) {
      const double start = next_us;
      std::vector<int> newly;
      for (int t = 0; t < n; ++t) {
        if (!taken[t] && agreed[t] <= start) {
          taken[t] = true;
          newly.push_back(t);
        }
      }
      const int count = static_cast<int>(newly.size());
      double neg = 0.0;
      if (cache_on) neg += c.bits_us;
      if (!cache_on || (count > 0 && !all_cached)) {
        neg += c.round_us + c.round_per_tensor_us * (all_cached ? 0 : count);
      }
      double t = start + noisy(neg);
      const double negotiate_end = t;
      int launched = 0;
      for (size_t i = 0; i < newly.size();) {
        size_t j = i;
        int64_t bytes = 0;
        do {
          bytes += w.tensors[newly[j]].bytes();
          ++j;
        } while (j < newly.size() && threshold > 0 &&
                 bytes + w.tensors[newly[j]].bytes() <= threshold);
        CollectiveRecord rec;
        rec.seq = static_cast<int>(st.collectives.size());
        rec.cycle = cycle;
        rec.bytes = bytes;
        rec.algorithm = knobs.hierarchical_allreduce ? Algorithm::kHierarchical : Algorithm::kFlat;
        rec.tensors.assign(newly.begin() + i, newly.begin() + j);
        rec.start_us = t;
        t += noisy(bytes / c.copy_bytes_per_us);
        rec.copy_in_end_us = t;
        t += noisy(comm_us(static_cast<double>(bytes)));
        rec.comm_end_us = t;
        if (j - i > 1) t += noisy(bytes / c.copy_bytes_per_us);
        rec.end_us = t;
        for (size_t k = i; k < j; ++k) done[newly[k]] = t;
        finished += static_cast<int>(j - i);
        st.collectives.push_back(std::move(rec));
        ++launched;
        i = j;
      }
      if (count > 0) {
        CycleRecord rec;
        rec.cycle = cycle;
        rec.start_us = start;
        rec.negotiate_end_us = negotiate_end;
        rec.submitted = rec.responses = count;
        rec.cache_hits = all_cached ? count : 0;
        rec.collectives = launched;
        st.cycles.push_back(rec);
      }
      const double deadline = start + knobs.cycle_time_ms * 1000.0;
      next_us = t < deadline ? deadline + c.wake_delay_us * 2.0 * unit(rng) : t;
    }
    double last_done = 0.0;
    for (TensorEvent& e : st.tensors) {
      e.done_us = done[e.tensor];
      last_done = std::max(last_done, e.done_us);
    }
    const double compute_end = st.backward_start_us + w.backward_ms * 1000.0 + 50.0 * unit(rng);
    st.step_ms = (std::max(compute_end, last_done) + noisy(w.optimizer_ms * 1000.0)) * 1e-3;
    trace.steps.push_back(std::move(st));
  }
  return trace;
}

}  // namespace autotune::sim::testing
