#include "simulator/replay.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "simulator/shared_link.h"

namespace autotune::sim {
namespace {

// One cycle that takes tensors, as the cycle timing placed it.
struct CycleTiming {
  double start_us = 0.0;
  double negotiate_end_us = 0.0;
  int submitted = 0;   // tensors newly ready at its start (all of them negotiated)
  int cache_hits = 0;  // of those, agreed through the response cache
};

// Cycle timing of one step: when the background cycles run, which tensors each one takes
// and what its negotiation costs. Idle cycles between two that take tensors only move the
// clock; they are skipped in one go.
class CycleClock {
 public:
  // floor_us: no negotiation completes before it. phase: where the cycle grid sits at the
  // step start, as a fraction of the idle period. Everything passed must outlive the clock.
  CycleClock(const PreparedStep& step, const NegotiationModel& negotiation,
             const ReplaySetting& setting, const ReplayOptions& options, double phase,
             double floor_us)
      : step_(step),
        negotiation_(negotiation),
        setting_(setting),
        options_(options),
        floor_us_(floor_us) {
    // An idle cycle still negotiates; when that outlasts the cycle time it sets the period,
    // else the thread sleeps out the cycle and wakes a little late.
    const double idle_us = negotiation.CycleUs(setting.cache_on, 0, 0);
    idle_period_us_ = std::max(
        idle_us >= setting.cycle_us ? idle_us : setting.cycle_us + options.wake_delay_us, 1e-3);
    next_cycle_us_ = phase * idle_period_us_;
  }

  // Moves to the next cycle that takes tensors; false when every tensor was taken. Else
  // *newly_ready gets the tensors ready at its start and not taken before (ready order)
  // and *cycle its timing. REQUIRES: Finish after each cycle returned.
  bool Next(std::vector<int>* newly_ready, CycleTiming* cycle) {
    const int n = static_cast<int>(step_.ready_order.size());
    if (next_ >= n) return false;
    // Skip the idle cycles; one still waiting for the slowest rank ends at the floor.
    const double first_ready_us = step_.ready_us[step_.ready_order[next_]];
    while (first_ready_us > next_cycle_us_) {
      if (next_cycle_us_ < floor_us_) {
        next_cycle_us_ = std::max(next_cycle_us_ + idle_period_us_, floor_us_);
      } else {
        next_cycle_us_ +=
            std::ceil((first_ready_us - next_cycle_us_) / idle_period_us_) * idle_period_us_;
      }
    }
    current_.start_us = next_cycle_us_;
    newly_ready->clear();
    while (next_ < n && step_.ready_us[step_.ready_order[next_]] <= current_.start_us) {
      newly_ready->push_back(step_.ready_order[next_++]);
    }
    const int count = static_cast<int>(newly_ready->size());
    const int cached = setting_.all_cached ? count : 0;
    current_.submitted = count;
    current_.cache_hits = cached;
    current_.negotiate_end_us = std::max(
        current_.start_us + negotiation_.CycleUs(setting_.cache_on, cached, count - cached),
        floor_us_);
    *cycle = current_;
    return true;
  }

  // Where the cycle grid sits at end_us (at or after the last cycle's start), as a fraction
  // of the idle period: how far the first cycle at or after end_us lies ahead.
  double PhaseAt(double end_us) const {
    double next_us = next_cycle_us_;
    if (end_us > next_us) {
      next_us += std::ceil((end_us - next_us) / idle_period_us_) * idle_period_us_;
    }
    const double phase = (next_us - end_us) / idle_period_us_;
    return phase - std::floor(phase);
  }

  // The current cycle is over and the communication stream is free at stream_free_us:
  // places the next cycle.
  void Finish(double stream_free_us) {
    const double cycle_end_us = options_.cycle_waits_for_collectives
                                    ? std::max(current_.negotiate_end_us, stream_free_us)
                                    : current_.negotiate_end_us;
    // The executor sets the next wake-up at this cycle's start plus the cycle time; a cycle
    // that ran past it starts the next one at once (no sleep, no wake-up delay).
    next_cycle_us_ = cycle_end_us < current_.start_us + setting_.cycle_us
                         ? current_.start_us + setting_.cycle_us + options_.wake_delay_us
                         : cycle_end_us;
  }

 private:
  const PreparedStep& step_;
  const NegotiationModel& negotiation_;
  const ReplaySetting& setting_;
  const ReplayOptions& options_;
  const double floor_us_;
  double idle_period_us_ = 0.0;
  double next_cycle_us_ = 0.0;
  int next_ = 0;  // position in ready_order of the first tensor not yet negotiated
  CycleTiming current_;
};

// When a collective of comm_us (its time alone) that starts at start_us ends, progressing at
// 1 / contention of its rate until compute_end_us and at its full rate after.
double ContendedEndUs(double start_us, double comm_us, double compute_end_us,
                      double contention) {
  if (contention <= 1.0 || start_us >= compute_end_us) return start_us + comm_us;
  const double slow_end_us = start_us + comm_us * contention;
  if (slow_end_us <= compute_end_us) return slow_end_us;
  return compute_end_us + (comm_us - (compute_end_us - start_us) / contention);
}

// Collective costing: a step's launches on the communication stream, each with the copies its
// schedule says (a copy into the buffer, a copy out) around the collective (NetworkModel, with
// the schedule's algorithm). With one launch in flight (schedule's max_in_flight) they run one
// after another and are costed as they are launched; with more, they share the link
// (shared_link.h) and are costed together when the step's launches are known (Settle).
class CommStream {
 public:
  // Everything passed must outlive the stream; timeline may be null.
  // contention: the step's comm_contention (ReplayOptions; Replayer::ContentionAt).
  // eager_index: the setting's (ReplaySetting::eager_index).
  CommStream(const NetworkModel& network, const ReplayOptions& options, double contention,
             int eager_index, int world_size, const StepSchedule& schedule,
             const PreparedStep& step, StepTrace* timeline)
      : network_(network),
        options_(options),
        contention_(contention),
        eager_index_(eager_index),
        world_size_(world_size),
        slots_(std::max(1, schedule.max_in_flight())),
        schedule_(schedule),
        step_(step),
        timeline_(timeline) {}

  // Launches c at earliest_us; it runs from then or when the stream has room, whichever is
  // later. With a timeline, it is recorded as the step's next collective, launched by `cycle`,
  // with its tensors.
  void Run(const FusedCollective& c, double earliest_us, int cycle) {
    const Algorithm algorithm = schedule_.AlgorithmOf(c.op);
    const CollectiveCopies copies = schedule_.CopiesOf(c);
    const bool copy_out = copies.copy_out || (copies.in_output && options_.single_tensor_copy_out);
    const int64_t in_bytes = c.op == Op::kAllgather ? c.bytes / world_size_ : c.bytes;
    const double copy_in_us =
        copies.copy_in ? options_.copy_scale * network_.CopyUs(in_bytes) : 0.0;
    // The setting's eager limit changes the flat collectives' time (eager_limit.h).
    const double eager =
        algorithm == Algorithm::kFlat && eager_index_ >= 0 && options_.eager_limits
            ? options_.eager_limits->Ratio(eager_index_, c.op, c.bytes)
            : 1.0;
    const double comm_us =
        eager * options_.comm_scale * network_.CollectiveUs(c.op, algorithm, c.bytes);
    const double copy_out_us = copy_out ? options_.copy_scale * network_.CopyUs(c.bytes) : 0.0;
    bytes_ += c.bytes;
    ++collectives_;
    if (slots_ > 1) {
      // The fixed (latency) part of the collective overlaps; the rest shares the link.
      const double fixed_us =
          eager * options_.comm_scale * FixedPartUs(network_, c.op, algorithm, c.bytes);
      jobs_.push_back({earliest_us, copy_in_us + fixed_us, comm_us - fixed_us, copy_out_us});
      // The collective itself is kept for the timeline only.
      pending_.push_back(
          {timeline_ != nullptr ? c : FusedCollective(), algorithm, cycle, copy_in_us});
      settled_ = false;
      return;
    }
    CollectivePhases p;
    double t = std::max(earliest_us, free_us_);
    p.start_us = t;
    t += copy_in_us;
    p.copy_in_end_us = t;
    t = ContendedEndUs(t, comm_us, step_.compute_end_us, contention_);
    p.comm_end_us = t;
    t += copy_out_us;
    p.end_us = t;
    busy_us_ += t - p.start_us;
    free_us_ = t;
    spans_.push_back({p.start_us, t});
    Record(c, algorithm, p, cycle);
  }

  // With several in flight: costs the launches so far together and, with a timeline, records
  // them. Call once, after the step's last launch (free_us and busy_us are final then).
  void Settle() {
    if (slots_ == 1 || pending_.empty()) return;
    Cost();
    for (size_t i = 0; i < pending_.size(); ++i) {
      const Pending& q = pending_[i];
      const LinkRun& r = runs_[i];
      CollectivePhases p;
      p.start_us = r.start_us;
      p.copy_in_end_us = r.start_us + q.copy_in_us;
      p.comm_end_us = r.shared_end_us;
      p.end_us = r.end_us;
      Record(q.collective, q.algorithm, p, q.cycle);
    }
  }

  // When the last collective launched so far ends (as if none followed); 0 before the first.
  double free_us() {
    if (!settled_) Cost();
    return free_us_;
  }
  int collectives() const { return collectives_; }  // launched so far
  int64_t bytes() const { return bytes_; }           // of the collectives launched so far
  double busy_us() {                                 // some collective or copy ran
    if (!settled_) Cost();
    return busy_us_;
  }
  // The time within [from_us, until_us] some collective or copy of the stream ran.
  double BusyWithinUs(double from_us, double until_us) {
    if (!settled_) Cost();
    std::vector<std::pair<double, double>> spans;
    for (const auto& [start, end] : spans_) {
      const double a = std::max(start, from_us);
      const double b = std::min(end, until_us);
      if (b > a) spans.push_back({a, b});
    }
    std::sort(spans.begin(), spans.end());
    double busy = 0.0;
    double covered_until = from_us;
    for (const auto& [a, b] : spans) {
      const double from = std::max(a, covered_until);
      if (b > from) busy += b - from;
      covered_until = std::max(covered_until, b);
    }
    return busy;
  }

 private:
  struct Pending {
    FusedCollective collective;
    Algorithm algorithm = Algorithm::kFlat;
    int cycle = 0;
    double copy_in_us = 0.0;
  };

  // Runs the pending launches under the sharing rule: free_us_ and busy_us_ (the union of
  // their [start, end]).
  void Cost() {
    runs_ = ShareLink(jobs_, slots_, {step_.compute_end_us, contention_});
    free_us_ = 0.0;
    busy_us_ = 0.0;
    spans_.clear();
    double covered_until = 0.0;
    for (const LinkRun& r : runs_) {
      spans_.push_back({r.start_us, r.end_us});
      free_us_ = std::max(free_us_, r.end_us);
      const double from = std::max(r.start_us, covered_until);
      if (r.end_us > from) busy_us_ += r.end_us - from;
      covered_until = std::max(covered_until, r.end_us);
    }
    settled_ = true;
  }

  void Record(const FusedCollective& c, Algorithm algorithm, const CollectivePhases& p,
              int cycle) {
    if (timeline_ == nullptr) return;
    timeline_->collectives.push_back(RecordOf(c, algorithm, p, 0, recorded_++, cycle));
    for (int tensor : c.tensors) {
      timeline_->tensors.push_back({0, tensor, step_.ready_us[tensor], p.end_us});
    }
  }

  const NetworkModel& network_;
  const ReplayOptions& options_;
  const double contention_;
  const int eager_index_;
  const int world_size_;
  const int slots_;
  const StepSchedule& schedule_;
  const PreparedStep& step_;
  StepTrace* timeline_;
  double free_us_ = 0.0;
  double busy_us_ = 0.0;
  int collectives_ = 0;
  int recorded_ = 0;
  int64_t bytes_ = 0;
  std::vector<std::pair<double, double>> spans_;  // each collective's [start, end]
  // With several in flight: the launches of the step so far and their costing.
  std::vector<LinkJob> jobs_;
  std::vector<Pending> pending_;
  std::vector<LinkRun> runs_;
  bool settled_ = true;
};

void RecordCycle(const CycleTiming& timing, int cycle, int collectives, StepTrace* timeline) {
  CycleRecord c;
  c.cycle = cycle;
  c.start_us = timing.start_us;
  c.negotiate_end_us = timing.negotiate_end_us;
  c.submitted = timing.submitted;
  c.cache_hits = timing.cache_hits;
  c.responses = timing.submitted;
  c.collectives = collectives;
  timeline->cycles.push_back(c);
}

// Negotiated pacing: the step's cycles, each launching on the stream what the schedule makes
// of the tensors it negotiated. Returns the cycles that had work.
int RunCycles(CycleClock* clock, StepSchedule* schedule, CommStream* stream,
              std::vector<int>* newly_ready, StepTrace* timeline) {
  int cycles = 0;
  CycleTiming cycle;
  while (clock->Next(newly_ready, &cycle)) {
    const std::vector<FusedCollective> fused = schedule->Launch(*newly_ready);
    for (const FusedCollective& f : fused) stream->Run(f, cycle.negotiate_end_us, cycles);
    if (timeline != nullptr) RecordCycle(cycle, cycles, static_cast<int>(fused.size()), timeline);
    ++cycles;
    clock->Finish(stream->free_us());
  }
  return cycles;
}

// On-ready pacing: every gradient goes to the schedule at its ready time (the slowest rank's),
// in ready order. The launching thread copies it into the bucket area when the schedule says
// so and spends launch_us on each launch it releases, one thing after another; a launch runs
// from then on, launched by its launch index. Returns the launches made before the step's
// compute end.
int RunOnReady(const PreparedStep& step, const Workload& workload, const NetworkModel& network,
               const ReplayOptions& options, StepSchedule* schedule, CommStream* stream) {
  const bool copy_in = schedule->gradient_copies().copy_in_when_ready;
  double hook_free_us = 0.0;
  int beside = 0;
  for (int t : step.ready_order) {
    hook_free_us = std::max(hook_free_us, step.ready_us[t]);
    if (copy_in) hook_free_us += options.copy_scale * network.CopyUs(workload.tensors[t].bytes());
    const int one[1] = {t};
    for (const FusedCollective& f : schedule->Launch(one)) {
      hook_free_us += options.launch_us;
      if (hook_free_us < step.compute_end_us) ++beside;
      stream->Run(f, hook_free_us, stream->collectives());
    }
  }
  return beside;
}

}  // namespace

Replayer::Replayer(const PreparedTrace& trace, const NetworkModel& network,
                   const NegotiationModel& negotiation, const ReplayOptions& options)
    : trace_(trace),
      network_(network),
      negotiation_(negotiation),
      options_(options),
      world_size_(network.topology().world_size()) {
  const int64_t recorded = trace.FusionBytesPerStep(trace.run().topology.world_size());
  const int64_t predicted = trace.FusionBytesPerStep(world_size_);
  bytes_scale_ = recorded > 0 ? static_cast<double>(predicted) / recorded : 1.0;
  newly_ready_.reserve(trace.num_tensors());
  cycle_paced_ = MakeRunSchedule(trace.run(), trace.run().knobs, network.topology())->pacing() ==
                 Pacing::kNegotiatedCycle;
  recorded_stretch_.assign(trace.steps().size(), 1.0);
  if (options_.cpu.enabled()) {
    // The recorded collectives and copies ran beside the recorded run's tracer, on its ranks
    // (cpu_share.h, CommStretch); the predicted ones beside the predicted job's.
    const int ranks = options_.cpu.recorded_ranks;
    const double tracer = CommStretch(options_.cpu, options_.cpu.predicted_tau, ranks) /
                          CommStretch(options_.cpu, options_.cpu.recorded_tau, ranks);
    options_.comm_scale *= tracer;
    options_.copy_scale *= tracer;
    for (size_t i = 0; i < trace.steps().size(); ++i) {
      const PreparedStep& s = trace.steps()[i];
      CommLoad load =
          LoadOf(trace.run().knobs, s.measured_step_ms * 1000.0, s.comm_busy_us, s.work_cycles);
      // The recorded cycles cost what they did on the recorded topology (negotiation_ may be
      // another topology's).
      if (cycle_paced_) load.cycle_cpu_us = options_.cpu.cycle_cpu_us;
      recorded_stretch_[i] = ComputeStretch(options_.cpu, CommThreadShare(options_.cpu, load),
                                            options_.cpu.recorded_tau, options_.cpu.recorded_ranks);
    }
  }
}

double Replayer::IdlePeriodUs(const Knobs& knobs) const {
  const double cycle_us = knobs.cycle_time_ms * 1000.0;
  const double idle_us = negotiation_.CycleUs(knobs.cache_capacity > 0, 0, 0);
  return std::max(idle_us >= cycle_us ? idle_us : cycle_us + options_.wake_delay_us, 1.0);
}

CommLoad Replayer::LoadOf(const Knobs& knobs, double step_us, double busy_us,
                          int work_cycles) const {
  CommLoad load;
  load.busy_us = busy_us;
  load.step_us = step_us;
  if (cycle_paced_) {
    load.cycles = work_cycles + std::max(0.0, step_us - busy_us) / IdlePeriodUs(knobs);
    load.cycle_cpu_us = negotiation_.IdleCycleCpuUs(knobs.cache_capacity > 0);
  }
  return load;
}

namespace {

// step with its compute (ready times, backward start, compute end, tail) dilated by factor.
void Dilate(const PreparedStep& step, double factor, PreparedStep* out) {
  *out = step;
  for (double& t : out->ready_us) t *= factor;
  out->backward_start_us *= factor;
  out->compute_end_us *= factor;
  out->tail_us *= factor;
}

}  // namespace

ReplaySetting Replayer::MakeSetting(const Knobs& knobs) const {
  std::shared_ptr<StepSchedule> schedule =
      MakeRunSchedule(trace_.run(), knobs, network_.topology());
  // Stored steps come after the warm-up: each starts from the schedule's steady state (DDP has
  // rebuilt its buckets from rank 0's ready order by then; the slowest rank's order of the
  // first stored step stands in for it).
  if (!trace_.steps().empty()) schedule->EndStep(trace_.steps().front().ready_order);
  const bool cache_on = knobs.cache_capacity > 0;
  return ReplaySetting{
      .knobs = knobs,
      .cycle_us = knobs.cycle_time_ms * 1000.0,
      .cache_on = cache_on,
      .all_cached = cache_on && knobs.cache_capacity >= trace_.num_tensors(),
      .eager_index =
          options_.eager_limits ? options_.eager_limits->Choose(knobs.mpi_tcp_eager_limit) : -1,
      .schedule = std::move(schedule),
  };
}

double Replayer::StartPhase() const {
  return options_.phase == ReplayOptions::Phase::kFixed ? options_.fixed_phase : 0.0;
}

double Replayer::FirstNegotiationUs(int index) const {
  return index < static_cast<int>(options_.step_first_negotiation_us.size())
             ? options_.step_first_negotiation_us[index]
             : options_.first_negotiation_us;
}

StepPrediction Replayer::ReplayStep(int index, const ReplaySetting& setting, StepTrace* timeline) {
  const PreparedStep& step = trace_.steps()[index];
  double phase = StartPhase();
  if (!options_.cpu.enabled()) {
    if (CarriesPhase()) {
      phase = ReplayPrepared(step, index, setting, phase, 1.0, nullptr).next_phase;
    }
    return ReplayPrepared(step, index, setting, phase, 1.0, timeline);
  }
  // Fixed point: the dilation sets the step time and the communication load, which set the
  // communication thread's share and so the dilation.
  constexpr int kIterations = 4;
  double dilation =
      ComputeStretch(options_.cpu, 0.0, options_.cpu.predicted_tau) / recorded_stretch_[index];
  for (int i = 0; i < kIterations; ++i) {
    Dilate(step, dilation, &dilated_);
    const StepPrediction p = ReplayPrepared(dilated_, index, setting, phase, dilation, nullptr);
    // The grid carried from this pass (kCarried) converges with the dilation.
    if (CarriesPhase()) phase = p.next_phase;
    // Over the replayed step: production_scale scales what is reported, not the load.
    const CommLoad load =
        LoadOf(setting.knobs, p.step_ms / options_.production_scale * 1000.0, p.busy_us, p.cycles);
    dilation = ComputeStretch(options_.cpu, CommThreadShare(options_.cpu, load),
                              options_.cpu.predicted_tau) /
               recorded_stretch_[index];
  }
  Dilate(step, dilation, &dilated_);
  StepPrediction out = ReplayPrepared(dilated_, index, setting, phase, dilation, timeline);
  out.compute_dilation = dilation;
  return out;
}

double Replayer::ContentionAt(double dilation) const {
  return std::max(1.0, 1.0 + (options_.comm_contention - 1.0) * dilation);
}

StepPrediction Replayer::ReplayPrepared(const PreparedStep& step, int index,
                                        const ReplaySetting& setting, double phase,
                                        double dilation, StepTrace* timeline) {
  if (timeline != nullptr) {
    *timeline = StepTrace();
    timeline->step = step.step;
    timeline->backward_start_us = step.backward_start_us;
  }
  if (schedule_source_ != setting.schedule) {
    schedule_ = setting.schedule->Clone();
    schedule_source_ = setting.schedule;
  } else {
    schedule_->Reset();
  }
  CommStream stream(network_, options_, ContentionAt(dilation), setting.eager_index, world_size_,
                    *schedule_, step, timeline);
  StepPrediction out;
  std::optional<CycleClock> clock;
  switch (schedule_->pacing()) {
    case Pacing::kNegotiatedCycle:
      clock.emplace(step, negotiation_, setting, options_, phase, FirstNegotiationUs(index));
      out.cycles = RunCycles(&*clock, schedule_.get(), &stream, &newly_ready_, timeline);
      break;
    case Pacing::kOnReady:
      out.launches_beside =
          RunOnReady(step, trace_.workload(), network_, options_, schedule_.get(), &stream);
      break;
  }
  stream.Settle();
  out.collectives = stream.collectives();
  out.last_done_us = stream.free_us();
  out.busy_us = stream.busy_us();
  if (schedule_->gradient_copies().copy_back_at_step_end && out.collectives > 0) {
    out.last_done_us += options_.copy_scale * network_.CopyUs(stream.bytes());
    if (timeline != nullptr) {
      RecordCopyBack(out.last_done_us, &timeline->collectives, &timeline->tensors);
    }
  }
  // The launches' CPU cost beside the compute, against the recorded setting's (ReplayOptions).
  out.launch_cpu_us = options_.launch_cpu_us * out.launches_beside;
  if (options_.launch_cpu_share > 0.0 && out.launch_cpu_us > 0.0) {
    out.launch_cpu_us =
        std::min(out.launch_cpu_us,
                 options_.launch_cpu_share *
                     stream.BusyWithinUs(step.backward_start_us, step.compute_end_us));
  }
  const std::vector<double>& recorded = options_.recorded_launch_cpu_us;
  const double recorded_us = index < static_cast<int>(recorded.size()) ? recorded[index] : 0.0;
  const double charge_us = stretching_ ? 0.0 : out.launch_cpu_us - recorded_us;
  const double backward_us = step.compute_end_us - step.backward_start_us;
  if (charge_us != 0.0 && backward_us > 0.0) {
    // The charge lengthens the backward pass, so its later gradients are ready, and their
    // buckets launched, later too: replay once more with the backward stretched to the
    // charged length (each ready time's distance from the backward's start by the same
    // factor; the charge stays this pass's).
    const double factor = std::max(0.0, (backward_us + charge_us) / backward_us);
    stretched_ = step;
    for (double& t : stretched_.ready_us) {
      if (t > step.backward_start_us) {
        t = step.backward_start_us + (t - step.backward_start_us) * factor;
      }
    }
    stretched_.compute_end_us = step.backward_start_us + backward_us * factor;
    stretching_ = true;
    StepPrediction stretched =
        ReplayPrepared(stretched_, index, setting, phase, dilation, timeline);
    stretching_ = false;
    stretched.launch_cpu_us = out.launch_cpu_us;
    return stretched;
  }
  const double compute_end_us = step.compute_end_us + charge_us;
  FinishStep(step, compute_end_us, timeline, &out);
  if (clock) {
    out.next_phase = clock->PhaseAt(std::max(compute_end_us, out.last_done_us) + step.tail_us);
  }
  return out;
}

void Replayer::FinishStep(const PreparedStep& step, double compute_end_us, StepTrace* timeline,
                          StepPrediction* prediction) const {
  StepPrediction& out = *prediction;
  out.step_ms = options_.production_scale *
                (std::max(compute_end_us, out.last_done_us) + step.tail_us) * 1e-3;
  out.bytes = static_cast<int64_t>(std::llround(step.bytes * bytes_scale_));
  if (timeline != nullptr) {
    std::sort(timeline->tensors.begin(), timeline->tensors.end(),
              [](const TensorEvent& a, const TensorEvent& b) { return a.tensor < b.tensor; });
    timeline->step_ms = out.step_ms;
    timeline->bytes = out.bytes;
    timeline->score_bytes_per_s = out.score_bytes_per_s();
  }
}

std::vector<double> Replayer::LaunchCpuUs(const ReplaySetting& setting) {
  std::vector<double> out;
  // Only the charge is read: no stretched second pass.
  stretching_ = true;
  for (size_t i = 0; i < trace_.steps().size(); ++i) {
    const int index = static_cast<int>(i);
    out.push_back(
        ReplayPrepared(trace_.steps()[i], index, setting, StartPhase(), 1.0, nullptr)
            .launch_cpu_us);
  }
  stretching_ = false;
  return out;
}

std::vector<StepPrediction> Replayer::ReplayAll(const ReplaySetting& setting,
                                                std::vector<StepTrace>* timeline) {
  const int steps = static_cast<int>(trace_.steps().size());
  std::vector<StepPrediction> out(steps);
  if (timeline) timeline->assign(steps, StepTrace());
  for (int i = 0; i < steps; ++i) {
    out[i] = ReplayStep(i, setting, timeline ? &(*timeline)[i] : nullptr);
  }
  return out;
}

}  // namespace autotune::sim
