#include "simulator/trace_calibration.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "simulator/shared_link.h"
#include "traces/step_schedule.h"

namespace autotune::sim {
namespace {

constexpr size_t kMinEvidence = 3;
// Copies smaller than this are dominated by per-tensor overheads, not bandwidth.
constexpr int64_t kMinCopyBytes = 64 * 1024;

// What a trace shows about the executor's behaviour, gathered over its steps.
struct Evidence {
  std::vector<double> single_copy_out;  // recorded copy-out of one-tensor collectives, us
  std::vector<double> model_copy_out;   // the copy model's time for the same, us
  std::vector<double> copy_ratios;      // recorded / model copy-in time, real-size copies
  std::vector<double> wake_delays;      // how late a sleeping cycle woke up, us
  std::vector<std::pair<int, double>> first_cycles;  // per step: (index, start) of its first
  int overlapped = 0;  // cycles whose successor started while their collectives ran
  int sequential = 0;  // cycles whose successor waited for their collectives
};

// Adds the fusion-buffer copy evidence of one step's collectives.
void AddCopyEvidence(const StepTrace& step, const NetworkModel& network, Evidence* e) {
  for (const CollectiveRecord& c : step.collectives) {
    // Fusion-buffer copies of a real size, against the copy model.
    const int64_t in_bytes =
        c.op == Op::kAllgather ? c.bytes / network.topology().world_size() : c.bytes;
    const double copy_in_model = network.CopyUs(in_bytes);
    if (in_bytes >= kMinCopyBytes && copy_in_model > 0.0 && c.copy_in_end_us > c.start_us) {
      e->copy_ratios.push_back((c.copy_in_end_us - c.start_us) / copy_in_model);
    }
    // Did one-tensor collectives copy out? Their recorded copy-out against the model's.
    if (c.tensors.size() != 1) continue;
    e->single_copy_out.push_back(c.end_us - c.comm_end_us);
    e->model_copy_out.push_back(network.CopyUs(c.bytes));
  }
}

// Adds the cycle evidence of one step: its first cycle, whether each cycle's successor
// waited for its collectives, and how late sleeping cycles woke up.
void AddCycleEvidence(const StepTrace& step, double cycle_us, double idle_us, Evidence* e) {
  std::vector<const CycleRecord*> cycles;
  for (const CycleRecord& c : step.cycles) cycles.push_back(&c);
  std::sort(cycles.begin(), cycles.end(),
            [](const CycleRecord* a, const CycleRecord* b) { return a->cycle < b->cycle; });
  e->first_cycles.push_back(cycles.empty()
                                ? std::pair<int, double>{-1, 0.0}
                                : std::pair<int, double>{cycles[0]->cycle, cycles[0]->start_us});
  for (size_t i = 0; i + 1 < cycles.size(); ++i) {
    const CycleRecord& a = *cycles[i];
    const CycleRecord& b = *cycles[i + 1];
    double busy_until = a.negotiate_end_us;
    bool launched = false;
    for (const CollectiveRecord& c : step.collectives) {
      if (c.cycle != a.cycle) continue;
      busy_until = std::max(busy_until, c.end_us);
      launched = true;
    }
    // Did the next cycle start while this cycle's collectives were still running?
    if (launched) (b.start_us + 1.0 < busy_until ? e->overlapped : e->sequential)++;
    // A cycle that finished early slept until start + cycle time, as did the idle ones.
    if (busy_until < a.start_us + cycle_us && idle_us < cycle_us && b.cycle > a.cycle) {
      e->wake_delays.push_back((b.start_us - a.start_us) / (b.cycle - a.cycle) - cycle_us);
    }
  }
}

// Sets the per-step and median first-negotiation floors from each step's first cycle,
// when enough steps have cycles. REQUIRES: options->wake_delay_us already calibrated.
void SetFirstNegotiation(const std::vector<std::pair<int, double>>& first_cycles, double cycle_us,
                         double idle_us, ReplayOptions* options) {
  // The step's first cycle with work shows when negotiation could first complete: it is
  // cycle 0 itself (its thread started late), or cycle c >= 1 starting well after c idle
  // periods (an earlier idle cycle waited for the slowest rank until then).
  // Like the ready times, this is a property of each recorded step, kept per step.
  const size_t with_cycles = std::count_if(first_cycles.begin(), first_cycles.end(),
                                           [](const auto& f) { return f.first >= 0; });
  if (with_cycles < kMinEvidence) return;
  const double period_us = idle_us >= cycle_us ? idle_us : cycle_us + options->wake_delay_us;
  std::vector<double> floors;
  for (const auto& [index, start_us] : first_cycles) {
    const bool blocked = index == 0 || (index > 0 && start_us > (index + 0.5) * period_us);
    floors.push_back(blocked ? start_us - std::max(0, index - 1) * period_us : 0.0);
  }
  options->step_first_negotiation_us = floors;
  options->first_negotiation_us = Median(std::move(floors));
}

}  // namespace

namespace {

struct Ratio {
  double ratio;
  double model_us;
};

// The median of ratios, each weighted by its model time; 1 with fewer than kMinEvidence.
double WeightedMedianRatio(std::vector<Ratio> ratios) {
  if (ratios.size() < kMinEvidence) return 1.0;
  double total_model_us = 0.0;
  for (const Ratio& r : ratios) total_model_us += r.model_us;
  std::sort(ratios.begin(), ratios.end(),
            [](const Ratio& a, const Ratio& b) { return a.ratio < b.ratio; });
  double below_us = 0.0;
  for (const Ratio& r : ratios) {
    below_us += r.model_us;
    if (below_us >= 0.5 * total_model_us) return r.ratio;
  }
  return ratios.back().ratio;
}

}  // namespace

CommRatios MeasuredCommRatios(const Trace& trace, const NetworkModel& network) {
  std::vector<Ratio> all;
  std::vector<Ratio> alone;
  std::vector<Ratio> beside;
  // Collectives that ran at once (DDP over gloo runs two) or queued for the stream count what
  // the replay's rule (shared_link.h) says each took alone.
  ForEachSoloCollective(
      trace,
      [&](const CollectiveRecord& c) { return FixedPartUs(network, c.op, c.algorithm, c.bytes); },
      [&](const CollectiveRecord& c, double solo_us, ComputePhase phase,
          const CollectiveRecord*) {
        const double model = network.CollectiveUs(c.op, c.algorithm, c.bytes);
        if (std::isfinite(solo_us) && solo_us > 0.0 && model > 0.0) {
          const Ratio r{solo_us / model, model};
          all.push_back(r);
          if (phase == ComputePhase::kAlone) alone.push_back(r);
          if (phase == ComputePhase::kBeside) beside.push_back(r);
        }
      });
  CommRatios out;
  out.all = WeightedMedianRatio(all);
  out.alone_count = static_cast<int>(alone.size());
  out.beside_count = static_cast<int>(beside.size());
  out.alone = WeightedMedianRatio(std::move(alone));
  out.beside = WeightedMedianRatio(std::move(beside));
  return out;
}

double MeasuredLaunchUs(const Trace& trace, const NetworkModel& network, double copy_scale) {
  const std::unique_ptr<StepSchedule> schedule =
      MakeRunSchedule(trace.run, trace.run.knobs, trace.run.topology);
  if (schedule->pacing() != Pacing::kOnReady) return 0.0;
  const bool copy_in = schedule->gradient_copies().copy_in_when_ready;
  const std::vector<TensorSpec>& tensors = trace.run.workload.tensors;
  std::vector<double> gaps;
  std::vector<double> ready;
  for (const StepTrace& step : trace.steps) {
    // Each tensor's ready time on the slowest rank, as the replay launches from (PreparedStep):
    // a collective begins once its last rank has launched it (an imported DDP bucket's start).
    ready.assign(tensors.size(), -1.0);
    for (const TensorEvent& e : step.tensors) {
      if (e.tensor >= 0 && e.tensor < static_cast<int>(ready.size())) {
        ready[e.tensor] = std::max(ready[e.tensor], e.ready_us);
      }
    }
    for (int rank : CollectiveRanks(step)) {
      double previous_start_us = -1.0;
      for (const CollectiveRecord* c : RankCollectives(step, rank)) {
        double last_ready_us = -1.0;
        int last = -1;
        for (int t : c->tensors) {
          if (t >= 0 && t < static_cast<int>(ready.size()) && ready[t] > last_ready_us) {
            last_ready_us = ready[t];
            last = t;
          }
        }
        // A launch held back by the one before it shows that one's cost, not its own.
        if (last >= 0 && previous_start_us <= last_ready_us && c->start_us >= last_ready_us) {
          const double copy_us =
              copy_in ? copy_scale * network.CopyUs(tensors[last].bytes()) : 0.0;
          gaps.push_back(c->start_us - last_ready_us - copy_us);
        }
        previous_start_us = c->start_us;
      }
    }
  }
  if (gaps.size() < kMinEvidence) return 0.0;
  return std::max(0.0, Median(std::move(gaps)));
}

ReplayOptions CalibrateOptions(const Trace& trace, const NetworkModel& network,
                               const NegotiationModel& negotiation) {
  ReplayOptions options;
  const CommRatios ratios = MeasuredCommRatios(trace, network);
  options.comm_scale = std::clamp(ratios.all, 0.5, 2.0);
  // Both kinds shown: the network's scale from the collectives that ran alone, and what running
  // beside the compute cost.
  if (ratios.alone_count >= static_cast<int>(kMinEvidence) &&
      ratios.beside_count >= static_cast<int>(kMinEvidence)) {
    options.comm_scale = std::clamp(ratios.alone, 0.5, 2.0);
    options.comm_contention =
        std::clamp(ratios.beside / ratios.alone, 1.0, kMaxCommContention);
  }
  const double cycle_us = trace.run.knobs.cycle_time_ms * 1000.0;
  const bool cache_on = trace.run.knobs.cache_capacity > 0;
  const double idle_us = negotiation.CycleUs(cache_on, 0, 0);

  Evidence e;
  for (const StepTrace& step : trace.steps) {
    AddCopyEvidence(step, network, &e);
    AddCycleEvidence(step, cycle_us, idle_us, &e);
  }
  if (e.single_copy_out.size() >= kMinEvidence) {
    const double model = Median(e.model_copy_out);
    options.single_tensor_copy_out = model > 1.0 && Median(e.single_copy_out) >= 0.5 * model;
  }
  if (e.overlapped + e.sequential >= static_cast<int>(kMinEvidence)) {
    options.cycle_waits_for_collectives = e.sequential >= e.overlapped;
  }
  if (e.wake_delays.size() >= kMinEvidence) {
    options.wake_delay_us = std::clamp(Median(std::move(e.wake_delays)), 0.0, cycle_us);
  }
  SetFirstNegotiation(e.first_cycles, cycle_us, idle_us, &options);
  if (e.copy_ratios.size() >= kMinEvidence) {
    options.copy_scale = std::clamp(Median(std::move(e.copy_ratios)), 0.25, 20.0);
  }
  options.launch_us = MeasuredLaunchUs(trace, network, options.copy_scale);
  return options;
}

}  // namespace autotune::sim
