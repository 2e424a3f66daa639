// NegotiationModel: fitted from recorded cycles (cached and uncached), priors for the kind
// of cycle a trace never ran, and rescaling to other topologies.
#include "simulator/negotiation_model.h"

#include <gtest/gtest.h>

#include "tests/support/sim_fixtures.h"

namespace autotune::sim {
namespace {

using testing::Topo;

// A trace whose cycles took fixed + per_tensor * n microseconds (n = 1..12), every
// twentieth cycle 5 ms late (a scheduling hiccup the fit must shrug off).
Trace CycleTrace(int cache_capacity, double fixed_us, double per_tensor_us) {
  Trace t;
  t.run.knobs.cache_capacity = cache_capacity;
  t.run.topology = Topo(2, 2);
  t.run.workload = testing::MakeWorkload({4000}, {1.0}, 1.0, 2.0, 1.0);
  StepTrace step;
  for (int i = 0; i < 60; ++i) {
    CycleRecord c;
    c.cycle = i;
    const int n = 1 + i % 12;
    c.start_us = 1000.0 * i;
    c.negotiate_end_us = c.start_us + fixed_us + per_tensor_us * n + (i % 20 == 3 ? 5000.0 : 0.0);
    c.submitted = c.responses = n;
    c.cache_hits = cache_capacity > 0 ? n : 0;
    step.cycles.push_back(c);
  }
  t.steps.push_back(step);
  return t;
}

TEST(NegotiationModelTest, FitsCachedCyclesAndScalesTheRoundPrior) {
  const NetworkModel net = NetworkModel::FromParams(NetworkParams::Uniform(20, 100), Topo(2, 2));
  const NegotiationModel prior = NegotiationModel::Prior(net, 1);
  const NegotiationModel m = NegotiationModel::Fit(CycleTrace(1024, 40.0, 0.3), net);
  EXPECT_NEAR(m.params().bits_fixed_us, 40.0, 1e-9);
  EXPECT_NEAR(m.params().cached_per_tensor_us, 0.3, 1e-9);
  EXPECT_NEAR(m.params().round_fixed_us,
              prior.params().round_fixed_us * 40.0 / prior.params().bits_fixed_us, 1e-9);
  EXPECT_EQ(m.provenance(), "bits fitted, round prior");
  EXPECT_NEAR(m.CycleUs(true, 10, 0), 43.0, 1e-9);
}

TEST(NegotiationModelTest, FitsUncachedRounds) {
  const NetworkModel net = NetworkModel::FromParams(NetworkParams::Uniform(20, 100), Topo(2, 2));
  const NegotiationModel m = NegotiationModel::Fit(CycleTrace(0, 120.0, 2.0), net);
  EXPECT_NEAR(m.params().round_fixed_us, 120.0, 1e-9);
  EXPECT_NEAR(m.params().uncached_per_tensor_us, 2.0, 1e-9);
  EXPECT_EQ(m.provenance(), "bits prior, round fitted");
  EXPECT_NEAR(m.CycleUs(false, 0, 5), 130.0, 1e-9);
  EXPECT_NEAR(m.CycleUs(false, 0, 0), 120.0, 1e-9);  // an idle cycle still has a round
}

TEST(NegotiationModelTest, PriorComesFromSmallMessages) {
  const NetworkModel net = NetworkModel::FromParams(NetworkParams::Uniform(20, 100), Topo(1, 2));
  const NegotiationModel m = NegotiationModel::Prior(net, 161);
  // 161 tensors + flag = 3 words = 24 bytes: 2*1*20 + 24/100.
  EXPECT_NEAR(m.params().bits_fixed_us, 40.0 + 0.24, 1e-9);
  EXPECT_NEAR(m.params().round_fixed_us, 2.0 * (40.0 + 0.64), 1e-9);
}

TEST(NegotiationModelTest, RetargetScalesWithTheNetwork) {
  const NetworkParams p = NetworkParams::Uniform(20, 100);
  const NetworkModel small = NetworkModel::FromParams(p, Topo(2, 2));
  const NetworkModel big = NetworkModel::FromParams(p, Topo(256, 4));
  const NegotiationModel m(NegotiationParams{40.0, 0.1, 100.0, 1.0});
  const NegotiationModel r = m.Retarget(small, big);
  const double ratio = big.FlatUs(Op::kAllreduce, 64) / small.FlatUs(Op::kAllreduce, 64);
  EXPECT_GT(ratio, 4.0);  // 20 latency steps instead of 4
  EXPECT_NEAR(r.params().bits_fixed_us, 40.0 * ratio, 1e-9);
  EXPECT_NEAR(r.params().round_fixed_us, 100.0 * ratio, 1e-9);
  EXPECT_NEAR(r.params().uncached_per_tensor_us, 256.0, 1e-9);
  EXPECT_EQ(m.Retarget(small, small).params().bits_fixed_us, 40.0);
}

TEST(NegotiationModelTest, AnIdleCyclesCpuIsAtMostItsMessagesWithEveryRankPresent) {
  // Recorded cycles took 3 ms each (on ranks sharing cores: the wait for a descheduled peer,
  // spent yielding): that is their time, but their CPU is at most the prior's messages.
  const NetworkModel net = NetworkModel::FromParams(NetworkParams::Uniform(20, 100), Topo(2, 2));
  const NegotiationParams prior = NegotiationModel::Prior(net, 1).params();
  const NegotiationModel waited = NegotiationModel::Fit(CycleTrace(1024, 3000.0, 0.0), net);
  EXPECT_NEAR(waited.CycleUs(true, 0, 0), 3000.0, 1e-9);
  EXPECT_NEAR(waited.IdleCycleCpuUs(true), prior.bits_fixed_us, 1e-9);
  EXPECT_LT(prior.bits_fixed_us, 100.0);
  // With the cache off an idle cycle is a coordinator round: the round's prior bounds it.
  const NegotiationModel rounds = NegotiationModel::Fit(CycleTrace(0, 5000.0, 0.0), net);
  EXPECT_NEAR(rounds.IdleCycleCpuUs(false), prior.round_fixed_us, 1e-9);
  // Cycles cheaper than the prior: their own time.
  const NegotiationModel quick = NegotiationModel::Fit(CycleTrace(1024, 10.0, 0.0), net);
  EXPECT_NEAR(quick.IdleCycleCpuUs(true), 10.0, 1e-9);
  // A model given its costs has no prior: its time.
  const NegotiationModel given(NegotiationParams{400.0, 0.0, 900.0, 0.0});
  EXPECT_NEAR(given.IdleCycleCpuUs(true), 400.0, 1e-9);
  EXPECT_NEAR(given.IdleCycleCpuUs(false), 900.0, 1e-9);
  // The bound moves to another topology with the costs.
  const NetworkModel big = NetworkModel::FromParams(NetworkParams::Uniform(20, 100), Topo(64, 4));
  const double ratio = big.FlatUs(Op::kAllreduce, 64) / net.FlatUs(Op::kAllreduce, 64);
  EXPECT_NEAR(waited.Retarget(net, big).IdleCycleCpuUs(true), prior.bits_fixed_us * ratio,
              1e-9);
}

}  // namespace
}  // namespace autotune::sim
