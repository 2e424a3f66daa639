#include "simulator/diagnosis.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <numeric>
#include <string>
#include <utility>

namespace autotune::sim {
namespace {

using Interval = std::pair<double, double>;  // [begin, end), microseconds

// What rank 0's communication thread was doing, in the order an instant is claimed.
enum Activity { kCollective = 0, kCopy = 1, kNegotiation = 2, kActivities = 3 };

// Measure of the union of intervals clipped to [from, to].
double UnionUs(std::vector<Interval> intervals, double from, double to) {
  for (Interval& i : intervals) {
    i.first = std::max(i.first, from);
    i.second = std::min(i.second, to);
  }
  std::erase_if(intervals, [](const Interval& i) { return i.second <= i.first; });
  std::sort(intervals.begin(), intervals.end());
  double total = 0.0, begin = 0.0, end = 0.0;
  bool open = false;
  for (const Interval& i : intervals) {
    if (open && i.first <= end) {
      end = std::max(end, i.second);
      continue;
    }
    if (open) total += end - begin;
    begin = i.first;
    end = i.second;
    open = true;
  }
  if (open) total += end - begin;
  return total;
}

// covered[k]: the time in [from, to] claimed by activities 0..k (the union of their
// intervals), so activity k alone claims covered[k] - covered[k - 1].
std::vector<double> CoveredUs(const std::vector<Interval> (&by_activity)[kActivities], double from,
                              double to) {
  std::vector<double> covered(kActivities);
  std::vector<Interval> so_far;
  for (int k = 0; k < kActivities; ++k) {
    so_far.insert(so_far.end(), by_activity[k].begin(), by_activity[k].end());
    covered[k] = UnionUs(so_far, from, to);
  }
  return covered;
}

// Rank 0's own compute end: max(backward start + backward, its latest ready time); when the
// step has no rank-0 rows, `fallback_us` (no skew can be told apart).
double RankZeroComputeEndUs(const StepTrace& step, double backward_us, double fallback_us) {
  double latest = -1.0;
  for (const TensorEvent& e : step.tensors) {
    if (e.rank == 0) latest = std::max(latest, e.ready_us);
  }
  if (latest < 0.0) return fallback_us;
  return std::max(step.backward_start_us + backward_us, latest);
}

// The parts of one step; prepared is step's PreparedStep, backward_us the workload's backward
// compute (0 for an imported run: its backward ends with its last gradient, see Diagnose).
StepDiagnosis DiagnoseStep(const PreparedStep& prepared, const StepTrace& step,
                           double backward_us) {
  const double step_us = prepared.measured_step_ms * 1000.0;
  const double last_ready_us =
      prepared.ready_order.empty() ? 0.0 : prepared.ready_us[prepared.ready_order.back()];
  const double compute_end_us =
      std::max(prepared.backward_start_us + backward_us, last_ready_us);
  double last_done_us = 0.0;
  for (const TensorEvent& t : step.tensors) last_done_us = std::max(last_done_us, t.done_us);
  const double c = std::clamp(compute_end_us, 0.0, step_us);
  // The gradients' end, as PreparedTrace cuts the tail: after the compute and every result.
  const double e = std::clamp(std::max(compute_end_us, last_done_us), c, step_us);

  std::vector<Interval> by_activity[kActivities];
  double last_collective_end_us = -1.0;
  for (const CollectiveRecord& r : step.collectives) {
    by_activity[kCollective].push_back({r.copy_in_end_us, r.comm_end_us});
    by_activity[kCopy].push_back({r.start_us, r.copy_in_end_us});
    by_activity[kCopy].push_back({r.comm_end_us, r.end_us});
    last_collective_end_us = std::max(last_collective_end_us, r.end_us);
  }
  // After rank 0's last collective, until the last result is out on every rank, the other
  // ranks are still finishing theirs.
  if (last_collective_end_us >= 0.0) {
    by_activity[kCollective].push_back({last_collective_end_us, last_done_us});
  }
  for (const CycleRecord& r : step.cycles) {
    by_activity[kNegotiation].push_back({r.start_us, r.negotiate_end_us});
  }

  const std::vector<double> exposed = CoveredUs(by_activity, c, e);
  const std::vector<double> whole = CoveredUs(by_activity, 0.0, e);
  StepDiagnosis d;
  d.step = prepared.step;
  d.step_ms = prepared.measured_step_ms;
  d.compute_ms = (step_us - (e - c)) * 1e-3;
  const double rank0_end_us = RankZeroComputeEndUs(step, backward_us, c);
  d.rank_skew_ms = std::clamp(c - rank0_end_us, 0.0, c) * 1e-3;
  d.collective_ms = exposed[kCollective] * 1e-3;
  d.copy_ms = (exposed[kCopy] - exposed[kCollective]) * 1e-3;
  d.negotiation_ms = (exposed[kNegotiation] - exposed[kCopy]) * 1e-3;
  d.cycle_wait_ms = ((e - c) - exposed[kNegotiation]) * 1e-3;
  d.total_comm_ms = whole[kNegotiation] * 1e-3;
  return d;
}

// The median of values (the mean of the two middle ones for an even count); 0 when empty.
double MedianOf(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// Percent of part in whole, 0 when whole is not positive.
double Percent(double part, double whole) { return whole > 0.0 ? 100.0 * part / whole : 0.0; }

// The exposed part that dominates, as the verdict names it.
const char* LargestExposedPart(const StepDiagnosis& d) {
  const std::pair<double, const char*> parts[] = {{d.negotiation_ms, "negotiation"},
                                                  {d.cycle_wait_ms, "cycle wait"},
                                                  {d.copy_ms, "fusion copies"},
                                                  {d.collective_ms, "collectives"}};
  return std::max_element(std::begin(parts), std::end(parts))->second;
}

}  // namespace

double StepDiagnosis::exposed_comm_ms() const {
  return negotiation_ms + cycle_wait_ms + copy_ms + collective_ms;
}

double StepDiagnosis::hidden_comm_ms() const {
  return std::max(0.0, total_comm_ms - (negotiation_ms + copy_ms + collective_ms));
}

const char* DiagnosisVerdictName(DiagnosisVerdict v) {
  return v == DiagnosisVerdict::kTune ? "tune" : "keep_defaults";
}

DiagnosisVerdict Judge(const StepDiagnosis& median, double max_gain_fraction, std::string* line,
                       const std::string& over) {
  char buf[320];
  const double gain_pct = 100.0 * max_gain_fraction;
  const double noise_pct = 100.0 * kTuningNoiseFraction;
  if (max_gain_fraction < kTuningNoiseFraction) {
    std::snprintf(buf, sizeof buf,
                  "communication is %.1f%% of the step (%.0f%% of it hidden behind compute): "
                  "tuning can gain at most %.1f%%, below the %.0f%% noise of real jobs; keep "
                  "the defaults",
                  Percent(median.total_comm_ms, median.step_ms),
                  Percent(median.hidden_comm_ms(), median.total_comm_ms), gain_pct, noise_pct);
    *line = buf;
    return DiagnosisVerdict::kKeepDefaults;
  }
  char cpu[160] = "";
  if (median.comm_cpu_ms > 0.0) {
    std::snprintf(cpu, sizeof cpu, ", and %.1f%% of the median step is compute slowed by the "
                  "communication's CPU", Percent(median.comm_cpu_ms, median.step_ms));
  }
  std::snprintf(buf, sizeof buf,
                "exposed communication is %.1f%% of the step (the median over %s; "
                "%.1f%% of the median step, largest part: %s%s): tuning can gain up to %.1f%%; "
                "run autotune search",
                gain_pct, over.c_str(), Percent(median.exposed_comm_ms(), median.step_ms),
                LargestExposedPart(median), cpu, gain_pct);
  *line = buf;
  return DiagnosisVerdict::kTune;
}

double MannKendallZ(const std::vector<double>& values) {
  const size_t n = values.size();
  if (n < 3) return 0.0;
  double s = 0.0;
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i + 1; j < n; ++j) {
      s += (values[j] > values[i]) - (values[j] < values[i]);
    }
  }
  // Ties: each group of t equal values takes t(t-1)(2t+5)/18 off the variance.
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  const double nd = static_cast<double>(n);
  double variance = nd * (nd - 1) * (2 * nd + 5) / 18.0;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && sorted[j] == sorted[i]) ++j;
    const double t = static_cast<double>(j - i);
    variance -= t * (t - 1) * (2 * t + 5) / 18.0;
    i = j;
  }
  if (s == 0.0 || variance <= 0.0) return 0.0;
  return (s > 0 ? s - 1.0 : s + 1.0) / std::sqrt(variance);
}

Status Diagnose(const Trace& trace, Diagnosis* out, const CpuShareParams& cpu) {
  PreparedTrace prepared;
  AUTOTUNE_RETURN_IF_ERROR(PreparedTrace::Prepare(trace, &prepared));
  // A run the executor recorded computes for the workload's backward_ms whatever its
  // gradients do. An imported run's workload is derived from the steps kept (medians over
  // them), so that floor would move every step's cut with the warm-up; a simulated run
  // carries its source run's workload while the replay stretched or shrank the compute
  // (CpuShare, the tracer's cost taken off), so the floor is another run's. Both end their
  // backward with the slowest rank's last gradient, which each step records itself.
  const double backward_us = trace.run.kind == RunKind::kMeasured
                                 ? trace.run.workload.backward_ms * 1000.0
                                 : 0.0;
  Diagnosis d;
  std::vector<double> gains;
  for (size_t i = 0; i < trace.steps.size(); ++i) {
    d.steps.push_back(DiagnoseStep(prepared.steps()[i], trace.steps[i], backward_us));
    StepDiagnosis& s = d.steps.back();
    if (cpu.enabled()) {
      const PreparedStep& ps = prepared.steps()[i];
      const double step_us = ps.measured_step_ms * 1000.0;
      const double idle_period_us = std::max(1.0, trace.run.knobs.cycle_time_ms * 1000.0);
      CommLoad load{ps.comm_busy_us, 0.0, step_us, cpu.cycle_cpu_us};
      if (trace.run.framework == Framework::kHorovod) {
        load.cycles = ps.work_cycles + std::max(0.0, step_us - ps.comm_busy_us) / idle_period_us;
      }
      const double with = ComputeStretch(cpu, CommThreadShare(cpu, load), cpu.recorded_tau,
                                         cpu.recorded_ranks);
      const double without = ComputeStretch(cpu, 0.0, cpu.recorded_tau, cpu.recorded_ranks);
      s.comm_cpu_ms = s.compute_ms * (1.0 - without / with);
    }
    gains.push_back(s.step_ms > 0.0 ? 1.0 - s.ideal_step_ms() / s.step_ms : 0.0);
  }
  std::vector<int> order(d.steps.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return d.steps[a].step_ms < d.steps[b].step_ms; });
  d.median_index = order[(order.size() - 1) / 2];
  const StepDiagnosis& m = d.median();
  d.gain_quartile_low = Percentile(gains, 25.0);
  d.gain_quartile_high = Percentile(gains, 75.0);
  d.gain_first_half = d.gain_second_half = MedianOf(gains);
  d.gain_steps = gains.size();
  d.max_gain_fraction = d.gain_second_half;
  if (gains.size() >= static_cast<size_t>(kMinDriftSteps)) {
    const size_t half = gains.size() / 2;
    d.gain_first_half = MedianOf({gains.begin(), gains.begin() + half});
    d.gain_second_half = MedianOf({gains.end() - half, gains.end()});
    d.gain_trend_z = MannKendallZ(gains);
    d.drifting = std::abs(d.gain_trend_z) > kDriftZ;
    // The steady pace's bound: the median over the later half of every step the run recorded,
    // its warm-up steps included (the file comment).
    const size_t recorded = gains.size() + static_cast<size_t>(std::max(0, trace.run.warmup_steps));
    d.gain_steps = std::min(gains.size(), recorded / 2);
    d.max_gain_fraction = MedianOf({gains.end() - static_cast<long>(d.gain_steps), gains.end()});
  }
  d.verdict = Judge(m, d.max_gain_fraction, &d.verdict_line,
                    d.gain_steps == gains.size()
                        ? "the steps"
                        : "the last " + std::to_string(d.gain_steps) + " of " +
                              std::to_string(gains.size()) + " steps");
  if (d.drifting) {
    char buf[400];
    std::snprintf(buf, sizeof buf,
                  " (the steps drift: the median share is %.1f%% over the first %zu steps and "
                  "%.1f%% over the last %zu, a trend beyond chance: the job had not reached its "
                  "steady pace, which a longer run shows)",
                  100.0 * d.gain_first_half, gains.size() / 2, 100.0 * d.gain_second_half,
                  gains.size() / 2);
    d.verdict_line += buf;
  }
  // On CPUs the communication hidden behind compute runs on the same cores and slows it (seen
  // on real Horovod: bench/horovod), which a bound from the exposed part alone cannot see.
  if (d.verdict == DiagnosisVerdict::kKeepDefaults && trace.run.backend == BackendKind::kMpi &&
      !cpu.enabled() &&
      m.step_ms > 0.0 && m.hidden_comm_ms() / m.step_ms >= kTuningNoiseFraction) {
    d.verdict_line +=
        " (on CPUs the hidden communication also competes with compute for the cores, which "
        "this bound does not count: measure before trusting it)";
  }
  *out = std::move(d);
  return Status::Ok();
}

}  // namespace autotune::sim
