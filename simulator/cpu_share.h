// CpuShare: compute slowed by communication. The ranks of one host share its cores with their
// communication threads: Horovod's background thread busy-polls MPI while a collective is in
// flight and wakes every cycle to negotiate; Horovod's timeline writer spins on rank 0
// (std::this_thread::yield in a loop) while the timeline is on. Where those threads and the
// compute threads together want more cores than the host has, every thread runs slower, so a
// knob setting that keeps the communication threads busier slows the compute too: the part of
// a setting's effect that a replay holding compute fixed cannot see.
//
// Model, per host of C cores shared by R ranks (HostShape): each rank's compute thread wants a
// core throughout; its communication thread wants one for a share
//   d = min(1, (sigma * comm_busy_us + cycles * cycle_cpu_us) / step_us)
// (cycle_cpu_us: an idle cycle's CPU under the setting, NegotiationModel::IdleCycleCpuUs)
// of the step; a tracer wants tau cores (1 for Horovod's spinning writer; 0 untraced). Compute
// runs at the rate min(1, C / (R * (1 + d) + tau)); its time stretches by the inverse. A replay
// of a recorded step at another setting dilates the recorded compute (ready times, compute end,
// tail) by stretch(setting) / stretch(recorded), solving for d by fixed-point iteration (d
// depends on the step time it changes). The tracer takes its cores from the collectives too:
// each runs at min(1, C / (R + tau)) of its rate (CommStretch), so a replay without the
// recorded run's tracer runs the recorded collectives and copies faster by that ratio.
#pragma once

#include <string>

#include "traces/trace.h"

namespace autotune::sim {

struct CpuShareParams {
  // Cores of one host and ranks sharing them; 0 cores = not known: no slowdown modelled.
  int cores = 0;
  int ranks = 1;           // on the predicted topology
  int recorded_ranks = 1;  // on the recorded one
  // Share of the time a collective is in flight that the communication thread burns CPU
  // (1 = MPI's busy-polling progress; fitted where two or more runs of the job exist).
  double sigma = 1.0;
  // CPU time one background cycle costs (negotiation) at the recorded setting, microseconds
  // (reported; a replay's CommLoad carries its own setting's).
  double cycle_cpu_us = 0.0;
  // The share of an idle cycle's modelled CPU (cycle_cpu_us, a setting's IdleCycleCpuUs) the
  // cycles took, at most 1: fitted with sigma for a Horovod job (Simulation::FitCommSpin).
  double cycle_cpu_share = 1.0;
  // Cores the recorded run's tracer took (1: Horovod's timeline writer; fitted from an
  // untraced step time when one was given, at most that writer's one core), and the tracer of
  // the predicted job (0: the production job).
  double recorded_tau = 0.0;
  double predicted_tau = 0.0;
  // Where sigma and tau came from, one line each (for --explain, --json and diagnose).
  std::string sigma_source = "prior (MPI busy-polls while a collective is in flight)";
  std::string tau_source = "none (the recorded run was not traced)";

  bool enabled() const { return cores > 0; }
};

// The communication thread's CPU demand over one step: comm busy time (the stream's
// collectives and copies), the cycles the background thread ran and what one costs under the
// step's setting (an idle cycle's negotiation: the cache's bit-vector allreduce with the cache
// on, the coordinator's round with it off), the step's length.
struct CommLoad {
  double busy_us = 0.0;
  double cycles = 0.0;
  double step_us = 0.0;
  double cycle_cpu_us = 0.0;
};

// The communication thread's CPU share d for load under params (see the file comment).
double CommThreadShare(const CpuShareParams& params, const CommLoad& load);
// Compute's time stretch (>= 1) for a communication-thread share d and a tracer of tau cores,
// with `ranks` ranks sharing the cores (default: params.ranks, the predicted topology's).
double ComputeStretch(const CpuShareParams& params, double d, double tau, int ranks = 0);

// A collective's time stretch (>= 1) from the host's CPU for a tracer of tau cores: while it
// runs, each of `ranks` ranks' communication thread drives it (MPI progress, the kernel's TCP
// work), and the tracer's spinning writer wants tau cores beside them; where they want more
// than the host's cores, each gets its share. The compute beside a collective is
// ReplayOptions::comm_contention's part, not this one.
double CommStretch(const CpuShareParams& params, double tau, int ranks);

// The host shape of a run: ranks_per_node * nodes_per_host ranks on host.cores cores.
CpuShareParams CpuShareOf(const RunInfo& run);

// The tracer's cores a replay assumes of run before anything is fitted: one for an imported
// Horovod timeline (its writer spins on one core), none for any other run.
double TracerPriorCores(const RunInfo& run);

// A run's measured tracing cost: its traced step time (the job's own where given, else the
// imported steps' median) over its production step time (import --step-log); 0 where either
// is not known.
double TracingCostOf(const RunInfo& run);

// The tracer's cores that run's tracing cost c (TracingCostOf) implies for its collectives:
// each collective ran at
// CommStretch(tau) / CommStretch(0) = c of its production time, so tau = c * max(C, R) - R on
// R ranks over C cores, within [0, 1] (Horovod's writer takes at most its one core; a cost
// below 1 is run-to-run noise). TracerPriorCores where the production step time is not known.
double TracerCoresOf(const RunInfo& run);

// The factor that brings `other`'s recorded collective and copy times to the tracer `replayed`
// ran beside: CommStretch(TracerCoresOf(replayed)) / CommStretch(TracerCoresOf(other)), on
// other's host (runs of one job). Two traces of one job at settings whose tracing cost differs
// (Horovod's timeline cost resnet50 13% at the default's 1 ms cycles, 1% at 25 ms) measured
// their collectives under different loads; pooled unscaled into one self-calibration, the
// collectives of the cheaply traced setting read fast against the replayed run's tracer, which
// the replay then takes off them a second time (bench/horovod/README.md). 1 where replayed's
// production step time is no faster than its traced one: no tracing cost measured (the replay
// pools the two as run-to-run noise), so none of its job's runs' costs is resolved either (the
// held-out convnet's 40 ms steps: -9%, +2.5% and +5% at three settings, within its 7% noise).
double TracerCommScale(const RunInfo& replayed, const RunInfo& other);

// The parameters and their sources, one line ("compute slowed by communication: ..."), with
// how much slower the recorded tracer ran the recorded collectives (CommStretch).
std::string DescribeCpuShare(const CpuShareParams& params);

}  // namespace autotune::sim
