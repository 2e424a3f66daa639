// The one rule that says whether a setting is faster than the default, from their real runs
// (step times measured on the target). `search`, `search --live` and `record --autotune` all
// reach it through tuner/search_policy.h's Decide. Plain functions of step times (ms); the
// caller fetches them.
//
// The rule, and why each part:
//   1. A run is summarized by the MEDIAN of its step times. A hiccup step (a page fault, a
//      checkpoint, a late rank: 5x the others) moves a mean by a fifth of itself in a 20-step
//      run and a median not at all. Training time is the sum of steps, so a setting that
//      slows most of its steps moves the median too; one that slows a minority only now and
//      then is not something a few short runs can show either way.
//   2. A whole run can be off (another job on the node, a slow start): among three or more
//      runs of one setting, a run whose log-median lies more than kOutlierModifiedZ robust
//      standard deviations (1.4826 MAD, at least kMinRunSpread) from the setting's median is
//      an outlier: it is left out and a re-measure of that setting is asked for (until it has
//      kKeptRunsAfterAnOutlier runs kept). Two runs of
//      one setting that disagree by more than kDisagreeingRuns cannot say which one is off, so
//      a verdict must hold whichever it is: the comparison is made again with the run that
//      favours the candidate set aside (the default's slower run, the candidate's faster one),
//      at the noise that both runs show. Where that cautious reading too is faster beyond
//      noise, no third run can change the verdict: none is asked for, and its interval is the
//      one reported. Otherwise a third run of the setting is asked for, and until then the
//      setting does not decide. (Asking for the third run whatever the other side showed spent
//      the MLP's four-run budget on D C D D when its default's runs disagreed by 12% and the
//      candidate had run 1.30x faster than the faster of them: bench/horovod/README.md.)
//      Two runs that differ by the drift the other setting's runs show do not disagree: where
//      the other side has a kept run within the pair's stretch of the sequence and two kept runs
//      or more, its least-squares log-slope per place in the sequence times the pair's distance
//      is the drift; where it moved the pair's way by at least half as much, and what is left
//      of the pair's difference is within kDisagreeingRuns, the pair is read as that drift
//      (rule 3 then compares each run with the other side as it was then). Without the "at
//      least half" a side that barely moved cleared the other's disagreement about as often
//      under pure noise, and the rule's false "faster" on synthetic runs rose 0.7 points at a
//      run-to-run CV of 12% (bench/tuner, decision_power.py; with it 0.5 points, and 0.05 at
//      8%). On the real MLP (bench/horovod, /tmp/hvdS) the default ran
//      724.9 and 624.6 ms around a candidate run and the candidate 535.9 and 486.8 ms: the
//      machine sped up under both (per-run ratios 1.256 and 1.283), yet the default's pair was
//      read as a run that is off, and the four-run budget ended without a verdict.
//   3. Drift (the machine warming, a neighbour's load rising) hits whatever runs when it
//      does, so each candidate run is compared with the default as it was at that time: the
//      default runs just before and just after it, interpolated in run order (log scale).
//      Measured alternately (D C C D, D C D C), a linear drift cancels exactly.
//   4. The speedup is the geometric mean of those per-run ratios. Its interval is Student's
//      t: each run's log-median varies from run to run by sigma (the run-to-run noise, which
//      holds the within-run noise of a median too), so the mean log ratio has the standard
//      error sigma * sqrt(sum_j a_j^2 + 1/m), where m is the number of candidate runs and a_j
//      the weight default run j carries in their interpolated levels (rule 3); a run whose
//      own steps make its median noisier than sigma (1.2533 x 1.4826 MAD / sqrt(steps)) counts
//      at that instead. The quantile is t's at sigma's degrees of freedom. sigma: as given
//      (`across_cv`, pooled over every setting's repeats), else pooled over this comparison's
//      repeats; either way with the prior kRunToRunCvPrior. A percentile bootstrap over two or
//      three runs (the rule before) cannot reach past their extremes, which hold the true
//      median 50% and 75% of the time, and it never counted the default runs' own run-to-run
//      noise. When no setting was repeated, sigma is unknown: the interval then counts each
//      median's within-run noise alone, and the comparison says so and does not decide.
//   5. Better = the interval's lower bound above 1, with two kept runs of each side (one run
//      that came out fast or slow as a whole cannot be told from its setting). Nothing else.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "tuner/step_statistics.h"

namespace autotune::tuner {

// One real run of a setting: its step times (ms, in step order) and when it ran.
struct RealRun {
  RealRun() = default;
  RealRun(std::vector<double> steps, int64_t sequence_ = -1, int64_t run_id_ = 0)  // NOLINT
      : step_ms(std::move(steps)), sequence(sequence_), run_id(run_id_) {}
  std::vector<double> step_ms;
  // Its place among the runs compared (larger = later; e.g. the run's id). -1 when unknown:
  // then the default's and the candidate's runs are taken as alternating, the default first.
  int64_t sequence = -1;
  int64_t run_id = 0;  // the database's run (0: none); carried into the comparison
};
using RealRuns = std::vector<RealRun>;

// Robust standard deviations (1.4826 MAD of the log-medians) beyond which a run is an outlier
// among the runs of its setting (Iglewicz and Hoaglin's 3.5).
inline constexpr double kOutlierModifiedZ = 3.5;
// The smallest spread of run log-medians the outlier test assumes (2.5%, half the run-to-run
// prior kRunToRunCvPrior): of three runs the MAD is the smaller of the other two's distances to
// the middle one, so two runs that agree by chance made an ordinary third run an outlier at a
// floor of 1%, and the verdict waited on a re-measure it did not need (bench/tuner:
// tuner.search_claims; the negative controls, decision_controls.py, stay within their bound).
// A run more than 8.75% from its setting's median run is an outlier however the others agree.
inline constexpr double kMinRunSpread = 0.025;
// Two runs of one setting whose medians differ by more than this fraction disagree.
inline constexpr double kDisagreeingRuns = 0.10;
// A setting with an outlier run asks for a re-measure until it has this many runs kept: the
// outlier replaced, not asked for again with every run after it (real DDP: regnet_x_800mf's
// search ran its default seven times after one 1,056 ms run among 868-921 ms ones, and never
// decided; bench/ddp/README.md).
inline constexpr int kKeptRunsAfterAnOutlier = 3;

// Which side of the comparison a run belongs to.
enum class RunRole { kDefault, kCandidate };

// One run as the comparison used it.
struct ComparedRun {
  RunRole role = RunRole::kDefault;
  int64_t run_id = 0;
  int64_t sequence = 0;     // as given, or the assumed alternating order
  int steps = 0;
  double median_ms = 0.0;
  bool outlier = false;     // left out (rule 2)
  // Of two runs that disagree, the one set aside by rule 2's cautious reading (the one that
  // favoured the candidate): left out of the interval reported.
  bool set_aside = false;
};

// What the runs of one side ask for before they can decide.
enum class Remeasure {
  kNone,
  kDefault,    // an outlier or two disagreeing runs of the default
  kCandidate,  // the same of the candidate
};

struct RunComparison {
  bool valid = false;  // both sides have a run with a step that is not an outlier
  SpeedupInterval speedup;
  // Each side has two runs or more kept in the comparison: one run of either can be off as a
  // whole (the noise itself may come from `across_cv`).
  bool run_to_run_known = false;
  Remeasure remeasure = Remeasure::kNone;
  // Rule 2's cautious reading decided: two runs of a side disagreed, and the comparison without
  // the one favouring the candidate is faster beyond noise (`speedup` is that reading's).
  bool disagreement_set_aside = false;
  // A side's two runs differed by more than kDisagreeingRuns, and by less once the drift the
  // other side's runs show was taken off (rule 2): read as drift, not as a run that is off.
  bool drift_explained = false;
  std::vector<ComparedRun> runs;  // every run given with a step, in sequence order
  // True when the interval's lower bound is above 1 and nothing asks for a re-measure.
  bool Faster() const {
    return valid && run_to_run_known && remeasure == Remeasure::kNone && speedup.Faster();
  }
};

struct CompareOptions {
  double confidence = 0.95;  // two-sided
  // Run-to-run spread of one run's median (coefficient of variation, RunToRun's), measured on
  // repeats of any setting, and its degrees of freedom. 0: unknown (this comparison's own
  // repeats are used).
  double across_cv = 0.0;
  double across_degrees = 0.0;
};

// Compares the candidate's runs with the default's by rules 1-5 above. Runs without steps are
// ignored; step times must be positive.
RunComparison CompareRuns(const RealRuns& default_runs, const RealRuns& candidate_runs,
                          const CompareOptions& options = {});

// The factor by which one run's run-to-run variance enters the variance of rule 4's mean log
// ratio, for kept runs of these roles in sequence order: sum_j a_j^2 + 1/m (every run equally
// noisy). What a next run of either side would narrow the interval by, before it is run.
// Infinity while a side has no run.
double RatioVarianceFactor(const std::vector<RunRole>& roles_in_sequence);

// What a real job's whole runs vary by, before its own repeats say: a coefficient of variation
// of about 5% (shared/fixtures/horovod: resnet50 over 35 runs; bench/horovod's MLP: 5-9%), held
// as worth this many degrees of freedom. Two runs that happen to agree (the MLP's default, 712
// and 707 ms: 0.46%) do not make a whole run's noise 0.46%: pooled with the prior it is 4.3%.
inline constexpr double kRunToRunCvPrior = 0.05;
inline constexpr double kRunToRunCvPriorDegrees = 3.0;

// The run-to-run spread of run medians: a coefficient of variation (of log-medians) and the
// degrees of freedom behind it.
struct RunToRunNoise {
  double cv = 0.0;  // 0: unknown (no setting has two runs)
  double degrees = 0.0;
};

// The run-to-run noise of run medians, pooled over settings with two or more runs (each
// setting's runs after rule 2's outliers are left out) and with the prior above: the spread a
// single run cannot show. Degrees of freedom: the runs less one per setting, plus the prior's.
RunToRunNoise RunToRun(const std::vector<RealRuns>& settings);

}  // namespace autotune::tuner
