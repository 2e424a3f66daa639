// Replay: discrete-event replay of recorded steps under other knobs. A run of framework ddp
// replays DDP's buckets instead of Horovod's cycles (ReplayDdpStep).
//
// Per step, what the executor does: gradients become ready at the slowest rank's recorded
// ready time (independent of the comm knobs); the background cycle runs every
// cycle_time_ms (an idle cycle still negotiates); a cycle takes the tensors ready at its
// start, negotiates them (NegotiationModel) and hands them to the shared fusion policy
// (traces/fusion_policy.h, FusionPolicy::Cycle), whose fused collectives run one after
// another on one communication stream (copy in, collective from the NetworkModel, copy
// out); the next cycle starts cycle_time_ms after this one, or when it finished, whichever
// is later. Communication overlaps the remaining backward compute; the step ends at
// max(compute end, last collective done) plus the step's measured tail (optimizer,
// barrier). replay.cc keeps the two halves apart: cycle timing (when cycles run, what
// they negotiate and at what cost) and collective costing (each fused collective's phases
// on the stream).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "simulator/negotiation_model.h"
#include "simulator/network_model.h"
#include "simulator/prepared_trace.h"
#include "traces/fusion_policy.h"
#include "traces/knobs.h"
#include "traces/score.h"
#include "traces/trace.h"

namespace autotune::sim {

struct ReplayOptions {
  // Where the cycle grid sits at the step start, as a fraction of a cycle period. The
  // executor starts its cycles at the step origin (kFixed, phase 0); a Horovod-style
  // thread that runs across steps drifts, which kSpread models by giving step i of S the
  // phase (i + 0.5) / S.
  enum class Phase { kSpread, kFixed };
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
  // A collective of one tensor copies its input to its output and runs there in place
  // (copy-in only); true adds the copy-out too.
  bool single_tensor_copy_out = false;
  // Multiply every collective's / fusion-buffer copy's predicted time (calibrated against
  // the trace's recorded phases; 1 = the network model as is).
  double comm_scale = 1.0;
  double copy_scale = 1.0;
};

// The prediction for one step.
struct StepPrediction {
  double step_ms = 0.0;
  double last_done_us = 0.0;  // last collective's copy-out finished
  int cycles = 0;             // cycles that had work
  int collectives = 0;
  int64_t bytes = 0;  // score numerator for the predicted topology
  double score_bytes_per_s() const { return ScoreBytesPerSecond(bytes, step_ms * 1e-3); }
};

// A knob setting turned into what a replay reads; build once per setting with
// Replayer::MakeSetting (it keeps no reference to the trace).
struct ReplaySetting {
  Knobs knobs;
  double cycle_us = 0.0;
  bool cache_on = false;    // capacity > 0: the bit-vector allreduce runs
  bool all_cached = false;  // capacity >= tensors: in steady state every tensor hits
  Algorithm allreduce_algorithm = Algorithm::kFlat;
  Algorithm allgather_algorithm = Algorithm::kFlat;
  // The fusion policy for these knobs at the start of a step; each step replays a copy.
  FusionPolicy fusion;
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
  std::vector<StepPrediction> ReplayAll(const ReplaySetting& setting,
                                        std::vector<StepTrace>* timeline = nullptr);

  const NetworkModel& network() const { return network_; }
  const PreparedTrace& trace() const { return trace_; }
  int world_size() const { return world_size_; }

 private:
  double Phase(int index) const;
  // A DDP run's step: each bucket the shared policy releases as its gradients become ready
  // (the slowest rank's ready times) runs on the one stream, in bucket order; then DDP's
  // finalize copy-out of every bucket unless gradient_as_bucket_view. No cycle, no
  // negotiation. Sets collectives and last_done_us.
  StepPrediction ReplayDdpStep(const PreparedStep& step, const ReplaySetting& setting,
                               StepTrace* timeline);
  // Step time, bytes and the timeline's summary from last_done_us.
  void FinishStep(const PreparedStep& step, StepTrace* timeline, StepPrediction* out) const;
  // No negotiation of step index completes before this time (ReplayOptions).
  double FirstNegotiationUs(int index) const;

  const PreparedTrace& trace_;
  const NetworkModel& network_;
  const NegotiationModel& negotiation_;
  ReplayOptions options_;
  int world_size_;
  double bytes_scale_;  // predicted topology's step bytes over the recorded one's
  // Scratch reused across steps (no allocation in the loop beyond the fusion policy's).
  std::vector<int> newly_ready_;
  std::optional<FusionPolicy> policy_;
};

}  // namespace autotune::sim
