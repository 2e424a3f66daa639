#include "tests/support/sim_fixtures.h"

#include <gtest/gtest.h>

namespace autotune::sim::testing {

Workload MakeWorkload(const std::vector<int64_t>& bytes, const std::vector<double>& ready_ms,
                      double forward_ms, double backward_ms, double optimizer_ms) {
  Workload w;
  w.name = "synthetic";
  w.forward_ms = forward_ms;
  w.backward_ms = backward_ms;
  w.optimizer_ms = optimizer_ms;
  for (size_t i = 0; i < bytes.size(); ++i) {
    TensorSpec t;
    t.name = "t" + std::to_string(i);
    t.shape = {bytes[i] / 4};
    t.ready_ms = ready_ms[i];
    w.tensors.push_back(t);
  }
  return w;
}

Trace MakeTrace(const Workload& w, const Topology& topology, const Knobs& knobs, double done_us,
                double step_ms, int steps) {
  Trace trace;
  trace.run.id = 7;
  trace.run.workload = w;
  trace.run.knobs = knobs;
  trace.run.topology = topology;
  trace.run.complete = true;
  for (int s = 0; s < steps; ++s) {
    StepTrace st;
    st.step = s;
    st.step_ms = step_ms;
    st.backward_start_us = w.forward_ms * 1000.0;
    st.bytes = w.total_bytes();
    for (int r = 0; r < topology.world_size(); ++r) {
      for (int t = 0; t < static_cast<int>(w.tensors.size()); ++t) {
        st.tensors.push_back(
            {r, t, st.backward_start_us + w.tensors[t].ready_ms * 1000.0, done_us});
      }
    }
    trace.steps.push_back(st);
  }
  return trace;
}

Topology Topo(int nodes, int ranks_per_node) {
  Topology t;
  t.nodes = nodes;
  t.ranks_per_node = ranks_per_node;
  return t;
}

Knobs PlainKnobs(double threshold_mb, double cycle_ms) {
  Knobs k;
  k.fusion_threshold_mb = threshold_mb;
  k.cycle_time_ms = cycle_ms;
  k.cache_capacity = 0;
  return k;
}

ReplayOptions ExactOptions() {
  ReplayOptions o;
  o.phase = ReplayOptions::Phase::kFixed;
  o.fixed_phase = 0.0;
  o.wake_delay_us = 0.0;
  return o;
}

Simulation MakeSimulation(const Trace& trace, const NetworkModel& network,
                          const NegotiationModel& negotiation, const ReplayOptions& options) {
  Simulation sim;
  Status st = Simulation::FromModels(trace, network, negotiation, options, &sim);
  EXPECT_TRUE(st.ok()) << st.message();
  return sim;
}

}  // namespace autotune::sim::testing
