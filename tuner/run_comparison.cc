#include "tuner/run_comparison.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace autotune::tuner {
namespace {

double MedianOf(std::vector<double> values) {
  if (values.empty()) return 0.0;
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<long>(mid), values.end());
  const double upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  const double lower = *std::max_element(values.begin(), values.begin() + static_cast<long>(mid));
  return (lower + upper) / 2.0;
}

// A side's runs with steps, as the comparison uses them.
struct Side {
  std::vector<const RealRun*> runs;  // with at least one step
  std::vector<int64_t> sequence;
  std::vector<double> log_median;
  std::vector<bool> outlier;
  bool ask_remeasure = false;
};

// Rule 2: marks outliers among three or more runs; two runs that disagree ask for a third.
void FindOutliers(Side* side) {
  const size_t n = side->log_median.size();
  side->outlier.assign(n, false);
  if (n == 2) {
    side->ask_remeasure = std::fabs(side->log_median[0] - side->log_median[1]) >
                          std::log1p(kDisagreeingRuns);
    return;
  }
  if (n < 3) return;
  const double center = MedianOf(side->log_median);
  std::vector<double> deviations;
  for (double l : side->log_median) deviations.push_back(std::fabs(l - center));
  const double spread = std::max(1.4826 * MedianOf(deviations), kMinRunSpread);
  for (size_t i = 0; i < n; ++i) {
    if (deviations[i] > kOutlierModifiedZ * spread) {
      side->outlier[i] = true;
      side->ask_remeasure = true;
    }
  }
}

Side MakeSide(const RealRuns& runs, RunRole role) {
  Side side;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].step_ms.empty()) continue;
    side.runs.push_back(&runs[i]);
    // Unknown order: alternating, the default first.
    side.sequence.push_back(runs[i].sequence >= 0
                                ? runs[i].sequence
                                : 2 * static_cast<int64_t>(i) + (role == RunRole::kCandidate));
    side.log_median.push_back(std::log(MedianOf(runs[i].step_ms)));
  }
  FindOutliers(&side);
  return side;
}

// The kept runs of a side, sorted by sequence: (sequence, index into the side).
std::vector<std::pair<int64_t, size_t>> Kept(const Side& side) {
  std::vector<std::pair<int64_t, size_t>> kept;
  for (size_t i = 0; i < side.runs.size(); ++i) {
    if (!side.outlier[i]) kept.emplace_back(side.sequence[i], i);
  }
  std::sort(kept.begin(), kept.end());
  return kept;
}

// Rule 3: the default's log step time at `sequence`, interpolated between the default runs
// just before and just after it (the nearer one alone at either end). `level` holds the
// log-medians of the kept default runs, in sequence order.
double DefaultAt(int64_t sequence, const std::vector<std::pair<int64_t, size_t>>& kept,
                 const std::vector<double>& level) {
  size_t after = 0;
  while (after < kept.size() && kept[after].first <= sequence) ++after;
  if (after == 0) return level.front();
  if (after == kept.size()) return level.back();
  const size_t before = after - 1;
  const double span = static_cast<double>(kept[after].first - kept[before].first);
  const double t = static_cast<double>(sequence - kept[before].first) / span;
  return level[before] + t * (level[after] - level[before]);
}

// Rule 4: the median of the candidate runs' log ratios, given each kept run's log level.
double MedianLogRatio(const std::vector<std::pair<int64_t, size_t>>& def_kept,
                      const std::vector<double>& def_level,
                      const std::vector<std::pair<int64_t, size_t>>& cand_kept,
                      const std::vector<double>& cand_level, const std::vector<size_t>& pick) {
  std::vector<double> ratios;
  ratios.reserve(pick.size());
  for (size_t k : pick) {
    ratios.push_back(DefaultAt(cand_kept[k].first, def_kept, def_level) - cand_level[k]);
  }
  return MedianOf(ratios);
}

// Pools relative variances of log-medians over groups of two or more.
class PooledLogSpread {
 public:
  void Add(const std::vector<double>& logs) {
    if (logs.size() < 2) return;
    double mean = 0.0;
    for (double l : logs) mean += l;
    mean /= static_cast<double>(logs.size());
    for (double l : logs) squares_ += (l - mean) * (l - mean);
    degrees_ += static_cast<double>(logs.size() - 1);
  }
  // With the prior (kRunToRunCvPrior) pooled in, once there is a repeat at all.
  double cv() const {
    if (degrees_ <= 0) return 0.0;
    return std::sqrt((squares_ + kRunToRunCvPriorDegrees * kRunToRunCvPrior * kRunToRunCvPrior) /
                     (degrees_ + kRunToRunCvPriorDegrees));
  }

 private:
  double squares_ = 0.0;
  double degrees_ = 0.0;
};

std::vector<double> KeptLogs(const Side& side) {
  std::vector<double> logs;
  for (size_t i = 0; i < side.log_median.size(); ++i) {
    if (!side.outlier[i]) logs.push_back(side.log_median[i]);
  }
  return logs;
}

double PooledLogSpreadOf(const std::vector<double>& a, const std::vector<double>& b) {
  PooledLogSpread pooled;
  pooled.Add(a);
  pooled.Add(b);
  return pooled.cv();
}

}  // namespace

double RunToRunCv(const std::vector<RealRuns>& settings) {
  PooledLogSpread pooled;
  for (const RealRuns& runs : settings) pooled.Add(KeptLogs(MakeSide(runs, RunRole::kDefault)));
  return pooled.cv();
}

RunComparison CompareRuns(const RealRuns& default_runs, const RealRuns& candidate_runs,
                          const CompareOptions& options) {
  RunComparison out;
  out.speedup.confidence = options.confidence;
  const Side def = MakeSide(default_runs, RunRole::kDefault);
  const Side cand = MakeSide(candidate_runs, RunRole::kCandidate);
  for (const auto* side : {&def, &cand}) {
    for (size_t i = 0; i < side->runs.size(); ++i) {
      ComparedRun r;
      r.role = side == &def ? RunRole::kDefault : RunRole::kCandidate;
      r.run_id = side->runs[i]->run_id;
      r.sequence = side->sequence[i];
      r.steps = static_cast<int>(side->runs[i]->step_ms.size());
      r.median_ms = std::exp(side->log_median[i]);
      r.outlier = side->outlier[i];
      out.runs.push_back(r);
    }
  }
  std::stable_sort(out.runs.begin(), out.runs.end(),
                   [](const ComparedRun& a, const ComparedRun& b) { return a.sequence < b.sequence; });
  out.remeasure = def.ask_remeasure    ? Remeasure::kDefault
                  : cand.ask_remeasure ? Remeasure::kCandidate
                                       : Remeasure::kNone;
  const auto def_kept = Kept(def);
  const auto cand_kept = Kept(cand);
  if (def_kept.empty() || cand_kept.empty()) return out;
  out.valid = true;
  auto levels = [](const Side& side, const std::vector<std::pair<int64_t, size_t>>& kept) {
    std::vector<double> level;
    for (const auto& [sequence, i] : kept) level.push_back(side.log_median[i]);
    return level;
  };
  std::vector<size_t> every(cand_kept.size());
  for (size_t k = 0; k < every.size(); ++k) every[k] = k;
  out.speedup.speedup =
      std::exp(MedianLogRatio(def_kept, levels(def, def_kept), cand_kept, levels(cand, cand_kept), every));
  // The run-to-run noise a single run of a side cannot show: as given, else what this
  // comparison's own repeats show.
  const double across_cv = options.across_cv > 0.0
                               ? options.across_cv
                               : PooledLogSpreadOf(KeptLogs(def), KeptLogs(cand));
  // The default is the level every candidate run is compared with: one run of it can be off
  // by a whole run's noise and no repeat of the candidate shows that (bench/horovod, resnet50:
  // 1.095x [1.026, 1.153] from one default run and two candidate runs 1% apart was 0.948x in
  // production). So a verdict needs two runs of the default, and the candidate's run-to-run
  // noise from its own repeats or from `across_cv`.
  out.run_to_run_known =
      def_kept.size() >= 2 && (options.across_cv > 0.0 || cand_kept.size() >= 2);
  std::mt19937_64 rng(options.seed);
  std::normal_distribution<double> z(0.0, 1.0);
  std::vector<double> log_ratios;
  const int resamples = std::max(1, options.resamples);
  log_ratios.reserve(static_cast<size_t>(resamples));
  std::vector<double> buffer;
  // One bootstrap draw of a run's log-median: its steps with replacement.
  auto resampled = [&](const RealRun& run) {
    std::uniform_int_distribution<size_t> pick(0, run.step_ms.size() - 1);
    buffer.resize(run.step_ms.size());
    for (double& x : buffer) x = run.step_ms[pick(rng)];
    return std::log(MedianOf(buffer));
  };
  std::vector<size_t> pick(cand_kept.size());
  std::uniform_int_distribution<size_t> pick_run(0, cand_kept.size() - 1);
  for (int b = 0; b < resamples; ++b) {
    std::vector<double> def_level, cand_level;
    for (const auto& [sequence, i] : def_kept) def_level.push_back(resampled(*def.runs[i]));
    for (const auto& [sequence, i] : cand_kept) cand_level.push_back(resampled(*cand.runs[i]));
    // A side of one run: its level moves by the run-to-run noise too.
    if (def_kept.size() == 1) def_level[0] += across_cv * z(rng);
    if (cand_kept.size() == 1) cand_level[0] += across_cv * z(rng);
    for (size_t k = 0; k < pick.size(); ++k) pick[k] = cand_kept.size() > 1 ? pick_run(rng) : k;
    log_ratios.push_back(MedianLogRatio(def_kept, def_level, cand_kept, cand_level, pick));
  }
  std::sort(log_ratios.begin(), log_ratios.end());
  const double tail = (1.0 - options.confidence) / 2.0;
  auto at = [&log_ratios](double q) {
    const size_t i = static_cast<size_t>(q * static_cast<double>(log_ratios.size() - 1) + 0.5);
    return std::exp(log_ratios[std::min(i, log_ratios.size() - 1)]);
  };
  out.speedup.low = at(tail);
  out.speedup.high = at(1.0 - tail);
  return out;
}

}  // namespace autotune::tuner
