// Diagnosis: where a run's step time goes, and the most any knob setting could gain.
//
// Works from the Trace alone (recorded, imported or simulated runs alike). Per step, the
// step time is cut into parts that add up to it exactly:
//
//   step = compute + negotiation + cycle wait + copies + collectives
//
// with, in microseconds from the step start (PreparedStep, simulator/prepared_trace.h):
// - the exposed window [C, E]: C (at most the step) is when the slowest rank's last
//   gradient was ready (or, for a recorded run, backward compute ended, if later: below);
//   E = max(C, the last tensor's result copied out on any rank), at most the step;
// - compute = C + tail_us: the time until the last gradient was ready on the slowest rank,
//   plus the measured tail after the gradients (optimizer, step-end barrier). No knob
//   changes it. Of it, rank skew = C - (rank 0's own compute end, the same max over rank
//   0's rows only), clamped to [0, C]: the step waiting for the slowest rank's readiness
//   beyond rank 0's;
// - exposed communication = E - C, what rank 0's communication thread did at each instant
//   of the window, each instant counted once in the first of these that covers it:
//   collectives: inside a fused collective's [copy_in_end, comm_end], or between the end of
//     rank 0's last collective and the last tensor's done time on any rank (the other ranks
//     finishing theirs);
//   copies: inside a fused collective's copy-in [start, copy_in_end] or copy-out
//     [comm_end, end];
//   negotiation: inside a cycle's [start, negotiate_end];
//   cycle wait: none of these (nothing ran: waiting for the next cycle that takes work).
// Over the whole step, total communication is the time covered by any cycle's negotiation
// or any collective (copies included) in [0, E]; hidden = total - exposed busy time is the
// communication that overlapped compute.
//
// A run's diagnosis reports the parts of its median step (the step whose measured time is
// the median; the lower middle one for an even count), so they add up to a step that
// really happened. The most any setting could gain is the median over the later half of the
// steps the run recorded, its warm-up steps left out at import counted in (the run's
// warmup_steps; all the kept steps where fewer than kMinDriftSteps, or where the warm-up was
// more than half), of each step's 1 - ideal / measured
// (exposed / step), where the ideal step is the replay with zero negotiation, zero copies and
// zero collective time (each step ends at compute end + tail): a median of the steps' own
// shares, so that neither one odd step nor which step happens to sit in the middle decides
// it, and of the later ones, the job's steady pace (a warm-up's transients fade with the
// steps, and a production job runs thousands at its later pace). A half of the kept steps
// alone moved with --warmup-steps (k more leading steps left out moved the steps it read by
// about k / 2: the real MLP's fixture gave 37.1, 33.6, 33.6, 37.1, 37.1% at 1..5); a half of
// the recorded ones does not move while the warm-up stays within the first half. Its spread comes
// with it: the shares' quartiles over every step, and whether they drift from the first half
// of the steps to the second (a job still warming up: the verdict line says so).
//
// The compute end C of a recorded run is the later of the backward's end (backward start +
// the workload's backward_ms) and the slowest rank's last gradient. An imported run's
// workload is derived from the steps kept (medians over them), so its backward_ms would move
// every step's cut with --warmup-steps, and a simulated run's workload is its source run's
// while the replay dilated the compute; there C is the step's own last gradient.
#pragma once

#include <string>
#include <vector>

#include "simulator/cpu_share.h"
#include "simulator/prepared_trace.h"
#include "traces/status.h"
#include "traces/trace.h"

namespace autotune::sim {

// A gain below this fraction of the step is within the step-to-step noise of real jobs
// (run-to-run variation of about 5%): tuning is not worth its measurements.
inline constexpr double kTuningNoiseFraction = 0.05;

// The fewest steps whose trend Diagnose tests (Diagnosis::drifting), and the two-sided 5%
// normal quantile the test's statistic must pass.
inline constexpr int kMinDriftSteps = 6;
inline constexpr double kDriftZ = 1.96;

// The Mann-Kendall trend statistic of values in order: S = the sum over pairs i < j of
// sign(v[j] - v[i]), its variance n(n-1)(2n+5)/18 less the ties' term, and z = (S -+ 1) /
// sd (continuity-corrected; 0 when S is 0 or fewer than 3 values). Positive: rising.
double MannKendallZ(const std::vector<double>& values);

// One step's parts, milliseconds. compute + negotiation + cycle_wait + copy + collective
// equals step (up to rounding).
struct StepDiagnosis {
  int step = 0;                 // StepTrace::step
  double step_ms = 0.0;         // measured step time
  double compute_ms = 0.0;      // compute end on the slowest rank + measured tail
  double rank_skew_ms = 0.0;    // part of compute_ms: waiting for the slowest rank's readiness
  double negotiation_ms = 0.0;  // exposed: negotiating
  double cycle_wait_ms = 0.0;   // exposed: nothing ran
  double copy_ms = 0.0;         // exposed: fusion-buffer copy-in / copy-out
  double collective_ms = 0.0;   // exposed: the collectives themselves
  double total_comm_ms = 0.0;   // negotiation + copies + collectives over the whole step
  // Part of compute_ms: the compute time the communication thread's CPU took from it where
  // the host's cores are oversubscribed (CpuShare; 0 when the cores are not known).
  double comm_cpu_ms = 0.0;
  // negotiation + cycle wait + copies + collectives.
  double exposed_comm_ms() const;
  // Communication that overlapped compute: total_comm_ms minus its exposed busy time.
  double hidden_comm_ms() const;
  // The step with communication overhead removed (compute end + tail, less the compute the
  // communication's CPU took).
  double ideal_step_ms() const { return compute_ms - comm_cpu_ms; }
};

enum class DiagnosisVerdict {
  kKeepDefaults,  // the most any setting could gain is below kTuningNoiseFraction
  kTune,          // exposed communication is worth a search
};
const char* DiagnosisVerdictName(DiagnosisVerdict v);  // "keep_defaults" | "tune"

struct Diagnosis {
  std::vector<StepDiagnosis> steps;  // in trace order
  int median_index = 0;              // into steps: the median step
  double max_gain_fraction = 0.0;    // the later half's median (see the file comment)
  size_t gain_steps = 0;             // the last steps max_gain_fraction is the median over
  // The spread of the steps' own gains (1 - ideal_step_ms / step_ms each): their lower and
  // upper quartiles (nearest rank, Percentile 25 and 75).
  double gain_quartile_low = 0.0;
  double gain_quartile_high = 0.0;
  // The median gain of the first and of the second half of the steps in trace order (an odd
  // count's middle step in neither); both the median over every step with fewer than
  // kMinDriftSteps.
  double gain_first_half = 0.0;
  double gain_second_half = 0.0;
  // The steps' gains trend in trace order (MannKendallZ beyond kDriftZ, kMinDriftSteps or
  // more steps): a job still warming up or changing pace, whose bound moves with how many
  // leading steps are left out (--warmup-steps); the verdict line says so.
  double gain_trend_z = 0.0;
  bool drifting = false;
  DiagnosisVerdict verdict = DiagnosisVerdict::kKeepDefaults;
  std::string verdict_line;  // one line, no newline, for users

  const StepDiagnosis& median() const { return steps[median_index]; }
};

// Diagnoses every step of trace. On an mpi run whose median step hides at least
// kTuningNoiseFraction of communication behind compute and whose host cores are not known, a
// keep-the-defaults verdict line says that the bound does not count the CPU that hidden
// communication takes from compute. Errors
// are PreparedTrace::Prepare's (a run without steps or tensor rows, inconsistent rows),
// naming the run, step and row.
// With cpu enabled (the host's cores known), each step's comm_cpu_ms is the compute time its
// communication thread's CPU share took: compute_ms * (1 - stretch(0) / stretch(d)), d from
// the step's own collectives and cycles (cpu_share.h), and the bound counts it.
Status Diagnose(const Trace& trace, Diagnosis* out, const CpuShareParams& cpu = {});

// The verdict for a median step's parts: kTune when max_gain_fraction >= kTuningNoiseFraction;
// *line says how much of the step communication is, how much is hidden, the most tuning
// could gain (`over`: the steps it is the median of) and what to do.
DiagnosisVerdict Judge(const StepDiagnosis& median, double max_gain_fraction, std::string* line,
                       const std::string& over = "the steps");

}  // namespace autotune::sim
