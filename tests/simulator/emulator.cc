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

namespace {

// Emulate's state: the fixed inputs and the one random stream every duration draws from,
// in the order the emulated events happen.
class StepEmulator {
 public:
  StepEmulator(const Workload& w, const Knobs& knobs, const EmulatedCluster& c, uint32_t seed)
      : w_(w),
        knobs_(knobs),
        c_(c),
        rng_(seed),
        n_(static_cast<int>(w.tensors.size())),
        cache_on_(knobs.cache_capacity > 0),
        all_cached_(cache_on_ && knobs.cache_capacity >= n_) {}

  // Plays step s: ready times, cycles with their collectives, then the step time.
  StepTrace Step(int s) {
    StepTrace st;
    st.step = s;
    st.backward_start_us = w_.forward_ms * 1000.0 + 30.0 * Unit();
    st.bytes = w_.total_bytes();
    const std::vector<double> agreed = AddReadyTimes(&st);
    std::vector<double> done(n_, 0.0);
    RunCycles(agreed, &st, &done);
    double last_done = 0.0;
    for (TensorEvent& e : st.tensors) {
      e.done_us = done[e.tensor];
      last_done = std::max(last_done, e.done_us);
    }
    const double compute_end = st.backward_start_us + w_.backward_ms * 1000.0 + 50.0 * Unit();
    st.step_ms = (std::max(compute_end, last_done) + Noisy(w_.optimizer_ms * 1000.0)) * 1e-3;
    return st;
  }

 private:
  double Unit() { return unit_(rng_); }
  // us with the cluster's relative noise.
  double Noisy(double us) { return us * (1.0 + c_.noise * (2.0 * Unit() - 1.0)); }

  // One fused allreduce of `bytes`, flat or hierarchical per the knobs, without noise.
  double CommUs(double bytes) const {
    const int world = c_.topology.world_size();
    const int m = c_.topology.ranks_per_node;
    const int nodes = c_.topology.nodes;
    if (!knobs_.hierarchical_allreduce) {
      return EmulatedAllreduceUs(c_, world, c_.world_latency_us, c_.world_bytes_per_us, bytes);
    }
    const double rs =
        0.5 * EmulatedAllreduceUs(c_, m, c_.intra_latency_us, c_.intra_bytes_per_us, bytes);
    const double cross =
        EmulatedAllreduceUs(c_, nodes, c_.cross_latency_us, c_.cross_bytes_per_us, bytes / m);
    const double ag =
        m > 1 ? CeilLog2(m) * c_.intra_latency_us + (m - 1) * (bytes / m) / c_.intra_bytes_per_us
              : 0.0;
    return rs + cross + ag;
  }

  // Adds every rank's ready time of every tensor to st->tensors; returns per tensor the
  // time all ranks have it ready (when negotiation can agree on it).
  std::vector<double> AddReadyTimes(StepTrace* st) {
    std::vector<double> agreed(n_, 0.0);
    for (int r = 0; r < c_.topology.world_size(); ++r) {
      for (int t = 0; t < n_; ++t) {
        const double ready = st->backward_start_us + w_.tensors[t].ready_ms * 1000.0 +
                             (r == 0 ? 0.0 : c_.rank_jitter_us * Unit());
        st->tensors.push_back({r, t, ready, 0.0});
        agreed[t] = std::max(agreed[t], ready);
      }
    }
    return agreed;
  }

  // Negotiation time of a cycle that agrees on `count` new tensors, without noise.
  double NegotiationUs(int count) const {
    double neg = 0.0;
    if (cache_on_) neg += c_.bits_us;
    if (!cache_on_ || (count > 0 && !all_cached_)) {
      neg += c_.round_us + c_.round_per_tensor_us * (all_cached_ ? 0 : count);
    }
    return neg;
  }

  // Fuses `newly` in order greedily up to the threshold and runs the collectives back to
  // back from t (copy in, allreduce, copy out when fused); records them in st and each
  // tensor's completion in *done. Returns the time the last one ends.
  double Launch(const std::vector<int>& newly, int cycle, double t, StepTrace* st,
                std::vector<double>* done) {
    const int64_t threshold = knobs_.threshold_bytes();
    for (size_t i = 0; i < newly.size();) {
      size_t j = i;
      int64_t bytes = 0;
      do {
        bytes += w_.tensors[newly[j]].bytes();
        ++j;
      } while (j < newly.size() && threshold > 0 &&
               bytes + w_.tensors[newly[j]].bytes() <= threshold);
      CollectiveRecord rec;
      rec.seq = static_cast<int>(st->collectives.size());
      rec.cycle = cycle;
      rec.bytes = bytes;
      rec.algorithm = knobs_.hierarchical_allreduce ? Algorithm::kHierarchical : Algorithm::kFlat;
      rec.tensors.assign(newly.begin() + i, newly.begin() + j);
      rec.start_us = t;
      t += Noisy(bytes / c_.copy_bytes_per_us);
      rec.copy_in_end_us = t;
      t += Noisy(CommUs(static_cast<double>(bytes)));
      rec.comm_end_us = t;
      if (j - i > 1) t += Noisy(bytes / c_.copy_bytes_per_us);
      rec.end_us = t;
      for (size_t k = i; k < j; ++k) (*done)[newly[k]] = t;
      st->collectives.push_back(std::move(rec));
      i = j;
    }
    return t;
  }

  // Runs background cycles from the step origin until every tensor is done: each takes
  // the tensors agreed by its start, negotiates, launches, then sleeps to its deadline.
  void RunCycles(const std::vector<double>& agreed, StepTrace* st, std::vector<double>* done) {
    std::vector<bool> taken(n_, false);
    int finished = 0;
    double next_us = 0.0;
    for (int cycle = 0; finished < n_; ++cycle) {
      const double start = next_us;
      std::vector<int> newly;
      for (int t = 0; t < n_; ++t) {
        if (!taken[t] && agreed[t] <= start) {
          taken[t] = true;
          newly.push_back(t);
        }
      }
      const int count = static_cast<int>(newly.size());
      const double negotiate_end = start + Noisy(NegotiationUs(count));
      const size_t collectives_before = st->collectives.size();
      const double t = Launch(newly, cycle, negotiate_end, st, done);
      finished += count;
      if (count > 0) {
        CycleRecord rec;
        rec.cycle = cycle;
        rec.start_us = start;
        rec.negotiate_end_us = negotiate_end;
        rec.submitted = rec.responses = count;
        rec.cache_hits = all_cached_ ? count : 0;
        rec.collectives = static_cast<int>(st->collectives.size() - collectives_before);
        st->cycles.push_back(rec);
      }
      const double deadline = start + knobs_.cycle_time_ms * 1000.0;
      next_us = t < deadline ? deadline + c_.wake_delay_us * 2.0 * Unit() : t;
    }
  }

  const Workload& w_;
  const Knobs& knobs_;
  const EmulatedCluster& c_;
  std::mt19937 rng_;
  std::uniform_real_distribution<double> unit_{0.0, 1.0};
  const int n_;            // tensors per step
  const bool cache_on_;    // response cache enabled
  const bool all_cached_;  // the cache holds every tensor
};

}  // namespace

Trace Emulate(const Workload& w, const Knobs& knobs, const EmulatedCluster& c, int steps,
              uint32_t seed) {
  StepEmulator emulator(w, knobs, c, seed);
  Trace trace;
  trace.run.id = 1;
  trace.run.workload = w;
  trace.run.knobs = knobs;
  trace.run.topology = c.topology;
  trace.run.complete = true;
  for (int s = 0; s < steps; ++s) trace.steps.push_back(emulator.Step(s));
  return trace;
}

}  // namespace autotune::sim::testing
