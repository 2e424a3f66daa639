// Replay: discrete-event replay of recorded steps under other knobs, run from the framework's
// step schedule (traces/step_schedule.h), the one the executor runs too; the replay holds no
// rule of a framework of its own.
//
// Per step, what the executor does: gradients become ready at the slowest rank's recorded
// ready time (independent of the comm knobs); the schedule says what is launched and when; the
// launches run on the communication stream (the copies the schedule says, the collective from
// the NetworkModel with the schedule's algorithm): one after another where the schedule allows
// one in flight, else as many at once as it says, sharing the link (simulator/shared_link.h:
// latencies overlap, bandwidth is split equally). Pacing:
// - negotiated cycle (Horovod): the background cycle runs every cycle_time_ms (an idle cycle
//   still negotiates); a cycle takes the tensors ready at its start, negotiates them
//   (NegotiationModel) and hands them to the schedule; the next cycle starts cycle_time_ms
//   after this one, or when it finished, whichever is later;
// - on ready (DDP): each gradient goes to the schedule at its ready time; the launching thread
//   (DDP's autograd hook, on the backward's thread) copies it into the bucket area when the
//   schedule says so (GradientCopies::copy_in_when_ready) and spends launch_us per launch it
//   releases, one after another; a launch runs from then on. No cycle, no negotiation.
// Then the step-end copy-back when the schedule has one (DDP's finalize). Communication
// overlaps the remaining backward compute; the step ends at max(compute end, last collective
// done) plus the step's measured tail (optimizer, barrier). replay.cc keeps the two halves
// apart: cycle timing (when cycles run, what they negotiate and at what cost) and collective
// costing (each launch's phases on the stream).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "simulator/cpu_share.h"
#include "simulator/eager_limit.h"
#include "simulator/negotiation_model.h"
#include "simulator/network_model.h"
#include "simulator/prepared_trace.h"
#include "traces/knobs.h"
#include "traces/score.h"
#include "traces/step_schedule.h"
#include "traces/trace.h"

namespace autotune::sim {

struct ReplayOptions {
  // Where the cycle grid sits at the step start, as a fraction of the idle cycle period. The
  // executor starts its cycles at the step origin (kFixed, phase 0). Horovod's background
  // thread runs across steps (it sleeps until its last cycle's start plus the cycle time), so
  // the grid goes on from the step before: kCarried replays each step as if the step before it
  // ended as it does (a first pass at phase 0 places the grid at the step's end; the second
  // starts there). A step whose compute and collectives fit in k idle periods then takes k of
  // them, as a real job with long cycles does.
  enum class Phase { kCarried, kFixed };
  Phase phase = Phase::kFixed;
  double fixed_phase = 0.0;  // [0, 1)
  // No negotiation of a step completes before this time (microseconds from the step
  // start): the slowest rank's background thread joins the step's first cycle only then.
  double first_negotiation_us = 0.0;
  // The same per recorded step (by position); overrides first_negotiation_us when present.
  std::vector<double> step_first_negotiation_us;
  // How late a cycle that slept wakes up (scheduler latency), microseconds.
  double wake_delay_us = 0.0;
  // The background thread runs the collectives itself (MPI executor): the next cycle waits
  // for them. false: they queue on a stream and cycles go on (GPU executor).
  bool cycle_waits_for_collectives = true;
  // A collective that runs in its one member's output (CollectiveCopies::in_output) copies its
  // input there (copy-in only); true adds the copy-out too.
  bool single_tensor_copy_out = false;
  // Multiply every collective's / fusion-buffer copy's predicted time (calibrated against
  // the trace's recorded phases; 1 = the network model as is).
  double comm_scale = 1.0;
  double copy_scale = 1.0;
  // Communication slowed by compute: while the step's compute still runs (before its compute
  // end), a collective progresses at 1 / comm_contention of its rate (its ranks' threads share
  // the cores with the compute); after, at its full rate (with several in flight, their
  // latency and link parts, shared_link.h's LinkSlowdown). 1 = no slowdown; fitted by
  // CalibrateOptions.
  double comm_contention = 1.0;
  // On-ready pacing: what the launching thread spends per launch after the copy of the
  // gradient that completed it (DDP: the reducer's bookkeeping, the communication hook's
  // division by the world size, the enqueue), microseconds; fitted from a trace's gaps between
  // a bucket's last gradient and its allreduce (trace_calibration.h).
  double launch_us = 0.0;
  // On-ready pacing on CPUs (DDP over gloo): compute time each collective launched before the
  // step's compute ends takes from it, microseconds, counted against the recorded setting's
  // launches (a setting with more buckets beside the backward pass ends its compute later by
  // this much a bucket, one with fewer earlier). gloo's fixed cost a call is the ranks' own CPU
  // work, not a wait the compute can overlap, where they share the cores (bench/ddp/README.md:
  // small buckets cost about this much each beyond the replay's). Set by Simulation::Build to
  // the network model's fixed cost of one world allreduce; 0 = none.
  double launch_cpu_us = 0.0;
  // The most of launch_cpu_us's charge a step's compute pays per unit of time some collective
  // is in flight beside it (from the backward's start to the compute's end): launches queued
  // back to back overlap their fixed costs. 0 = no bound.
  double launch_cpu_share = 0.0;
  // Per recorded step (by position): the recorded setting's launch charge (launch_cpu_us's,
  // bounded by launch_cpu_share), which a setting's is counted against (Replayer::LaunchCpuUs,
  // filled once per Simulation); a step past its end counts 0. A step whose charge differs
  // from the recorded one is replayed with its backward stretched by the difference, its ready
  // times too (Replayer::ReplayPrepared).
  std::vector<double> recorded_launch_cpu_us;
  // Compute slowed by communication (cpu_share.h); disabled (no slowdown) without the cores.
  CpuShareParams cpu;
  // Every predicted step time times this: the production job's over the traced one's, where
  // the tracing cost is known only as that ratio (an untraced step time given, the cores not).
  double production_scale = 1.0;
  // What a setting's mpi_tcp_eager_limit does to the flat collectives (eager_limit.h); null or
  // empty: the knob is held (every setting's collectives at the job's limit).
  std::shared_ptr<const EagerLimitEffect> eager_limits;
};

// The prediction for one step.
struct StepPrediction {
  double step_ms = 0.0;
  double last_done_us = 0.0;  // last collective's copy-out finished
  int cycles = 0;             // cycles that had work
  int collectives = 0;
  int64_t bytes = 0;  // score numerator for the predicted topology
  double busy_us = 0.0;          // some collective or copy of the stream ran (their union)
  double compute_dilation = 1.0;  // compute time over the recorded (CpuShare)
  int launches_beside = 0;        // on-ready pacing: collectives launched before compute end
  double launch_cpu_us = 0.0;     // their charge on the compute (ReplayOptions::launch_cpu_us)
  // Negotiated pacing: where the cycle grid sits at the step's end, as a fraction of the idle
  // period (the next step's phase under Phase::kCarried); 0 otherwise.
  double next_phase = 0.0;
  double score_bytes_per_s() const { return ScoreBytesPerSecond(bytes, step_ms * 1e-3); }
};

// A knob setting turned into what a replay reads; build once per setting with
// Replayer::MakeSetting (it keeps no reference to the trace).
struct ReplaySetting {
  Knobs knobs;
  double cycle_us = 0.0;
  bool cache_on = false;    // capacity > 0: the bit-vector allreduce runs
  bool all_cached = false;  // capacity >= tensors: in steady state every tensor hits
  // ReplayOptions::eager_limits' calibrate for knobs.mpi_tcp_eager_limit; -1: the job's own.
  int eager_index = -1;
  // The run's step schedule for these knobs at the start of a stored step; every step is
  // replayed from this state (the replayer's own copy of it, Reset between steps).
  std::shared_ptr<const StepSchedule> schedule;
};

class Replayer {
 public:
  // The trace and the models must outlive the replayer. network predicts the target
  // topology (the trace's own or an extrapolated one); negotiation is fitted for it.
  Replayer(const PreparedTrace& trace, const NetworkModel& network,
           const NegotiationModel& negotiation, const ReplayOptions& options = {});

  // The setting for knobs on the replayer's trace and predicted world size.
  ReplaySetting MakeSetting(const Knobs& knobs) const;

  // Predicts step `index` of the trace. When timeline is given it receives the predicted
  // StepTrace (rank 0's view: tensor ready/done, cycles, collectives).
  StepPrediction ReplayStep(int index, const ReplaySetting& setting, StepTrace* timeline = nullptr);
  // Every step; predictions in step order. timeline, when given, gets one StepTrace each.
  // Per step: the charge of the collectives the setting launches before the step's compute
  // ends (on-ready pacing; 0 under cycles), for ReplayOptions::recorded_launch_cpu_us.
  std::vector<double> LaunchCpuUs(const ReplaySetting& setting);
  std::vector<StepPrediction> ReplayAll(const ReplaySetting& setting,
                                        std::vector<StepTrace>* timeline = nullptr);

  const NetworkModel& network() const { return network_; }
  const PreparedTrace& trace() const { return trace_; }
  int world_size() const { return world_size_; }

 private:
  // The phase a step's first pass starts from (kFixed: fixed_phase; kCarried: 0, the second
  // pass starts from the first's next_phase).
  double StartPhase() const;
  bool CarriesPhase() const {
    return cycle_paced_ && options_.phase == ReplayOptions::Phase::kCarried;
  }
  // The replay of one prepared step (the recorded one, or its compute dilated by `dilation`),
  // its cycle grid at `phase` (ReplayOptions::Phase).
  StepPrediction ReplayPrepared(const PreparedStep& step, int index, const ReplaySetting& setting,
                                double phase, double dilation, StepTrace* timeline);
  // Communication slowed by compute where the compute runs `dilation` times as long as
  // recorded (CpuShare): the recorded collectives beside the compute ran comm_contention times
  // their time alone because their threads shared the cores with it; the part of that
  // slowdown the CPU caused grows with the compute's own stretch. The lower of the two bounds
  // the trace allows: 1 + (comm_contention - 1) * dilation (all of a collective's time alone is
  // the network's; the upper, comm_contention * dilation, takes all of it as CPU), never below
  // 1. With no CPU model (dilation 1) comm_contention itself.
  double ContentionAt(double dilation) const;
  // The background thread's idle cycle period under knobs, microseconds.
  double IdlePeriodUs(const Knobs& knobs) const;
  // The communication load of a step of step_us with busy_us of collectives and work_cycles
  // cycles with work, idle cycles filling the rest at the knobs' idle period.
  CommLoad LoadOf(const Knobs& knobs, double step_us, double busy_us, int work_cycles) const;
  // Step time, bytes and the timeline's summary from last_done_us and the compute's end.
  void FinishStep(const PreparedStep& step, double compute_end_us, StepTrace* timeline,
                  StepPrediction* out) const;
  // No negotiation of step index completes before this time (ReplayOptions).
  double FirstNegotiationUs(int index) const;

  const PreparedTrace& trace_;
  const NetworkModel& network_;
  const NegotiationModel& negotiation_;
  ReplayOptions options_;
  int world_size_;
  double bytes_scale_;  // predicted topology's step bytes over the recorded one's
  bool cycle_paced_ = false;  // the run's schedule runs background cycles (Pacing)
  // Scratch reused across steps.
  std::vector<int> newly_ready_;
  PreparedStep dilated_;  // a step with its compute dilated (CpuShare)
  // A step with its backward stretched by the launches' charge (ReplayPrepared), and whether
  // the charge is left unapplied: in that second pass (it charges nothing again) and while
  // LaunchCpuUs reads the recorded setting's charge.
  PreparedStep stretched_;
  bool stretching_ = false;
  // Per recorded step: compute's stretch at the recorded setting (CpuShare), 1 when disabled.
  std::vector<double> recorded_stretch_;
  // The step's copy of the setting's schedule, cloned once per setting (schedule_source_) and
  // Reset at every other step start: a step starts from the state the setting holds.
  std::unique_ptr<StepSchedule> schedule_;
  std::shared_ptr<const StepSchedule> schedule_source_;  // kept so its address is not reused
};

}  // namespace autotune::sim
