#include "tuner/run_comparison.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>

#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>

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
  bool disagreeing = false;    // two runs that disagree (rule 2)
  std::vector<bool> set_aside;  // left out by rule 2's cautious reading, once it decided
};

// Rule 2: marks outliers among three or more runs; two runs that disagree ask for a third.
void FindOutliers(Side* side) {
  const size_t n = side->log_median.size();
  side->outlier.assign(n, false);
  side->set_aside.assign(n, false);
  if (n == 2) {
    side->disagreeing = std::fabs(side->log_median[0] - side->log_median[1]) >
                        std::log1p(kDisagreeingRuns);
    side->ask_remeasure = side->disagreeing;
    return;
  }
  if (n < 3) return;
  const double center = MedianOf(side->log_median);
  std::vector<double> deviations;
  for (double l : side->log_median) deviations.push_back(std::fabs(l - center));
  const double spread = std::max(1.4826 * MedianOf(deviations), kMinRunSpread);
  size_t outliers = 0;
  for (size_t i = 0; i < n; ++i) {
    if (deviations[i] > kOutlierModifiedZ * spread) {
      side->outlier[i] = true;
      ++outliers;
    }
  }
  side->ask_remeasure =
      outliers > 0 && n - outliers < static_cast<size_t>(kKeptRunsAfterAnOutlier);
}

// Rule 2's drift: the least-squares slope of a side's kept log-medians per place in the
// sequence, where two or more kept runs span a stretch of it and one lies within [from, to];
// nothing otherwise.
std::optional<double> DriftSlope(const Side& side, int64_t from, int64_t to) {
  double n = 0.0, mean_x = 0.0, mean_y = 0.0;
  bool within = false;
  for (size_t i = 0; i < side.log_median.size(); ++i) {
    if (side.outlier[i]) continue;
    n += 1.0;
    mean_x += static_cast<double>(side.sequence[i]);
    mean_y += side.log_median[i];
    within = within || (side.sequence[i] >= from && side.sequence[i] <= to);
  }
  if (n < 2.0 || !within) return std::nullopt;
  mean_x /= n;
  mean_y /= n;
  double sxx = 0.0, sxy = 0.0;
  for (size_t i = 0; i < side.log_median.size(); ++i) {
    if (side.outlier[i]) continue;
    const double dx = static_cast<double>(side.sequence[i]) - mean_x;
    sxx += dx * dx;
    sxy += dx * (side.log_median[i] - mean_y);
  }
  if (sxx <= 0.0) return std::nullopt;
  return sxy / sxx;
}

// Rule 2's drift: whether a side's disagreeing pair is the other side's drift over the pair's
// stretch: the same way, at least half as much, and no more than kDisagreeingRuns left.
bool PairIsDrift(const Side& side, const Side& other) {
  if (!side.disagreeing) return false;
  const int64_t from = std::min(side.sequence[0], side.sequence[1]);
  const int64_t to = std::max(side.sequence[0], side.sequence[1]);
  const std::optional<double> slope = DriftSlope(other, from, to);
  if (!slope) return false;
  const double moved = side.log_median[1] - side.log_median[0];
  const double drift = *slope * static_cast<double>(side.sequence[1] - side.sequence[0]);
  return moved * drift > 0.0 && std::fabs(drift) >= std::fabs(moved) / 2.0 &&
         std::fabs(moved - drift) <= std::log1p(kDisagreeingRuns);
}

// Clears the disagreement of the sides whose pair is drift; true when one was.
bool TakeOffSharedDrift(Side* def, Side* cand) {
  // Both judged on the sides as they came, before either is cleared.
  const bool def_drift = PairIsDrift(*def, *cand);
  const bool cand_drift = PairIsDrift(*cand, *def);
  if (def_drift) def->disagreeing = def->ask_remeasure = false;
  if (cand_drift) cand->disagreeing = cand->ask_remeasure = false;
  return def_drift || cand_drift;
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

// Rule 3: the weights of the kept default runs (in sequence order) in the default's log
// level at `sequence`: the runs just before and just after it, interpolated linearly (the
// nearer one alone at either end).
std::vector<double> DefaultWeights(int64_t sequence,
                                   const std::vector<std::pair<int64_t, size_t>>& kept) {
  std::vector<double> weights(kept.size(), 0.0);
  size_t after = 0;
  while (after < kept.size() && kept[after].first <= sequence) ++after;
  if (after == 0) {
    weights.front() = 1.0;
  } else if (after == kept.size()) {
    weights.back() = 1.0;
  } else {
    const size_t before = after - 1;
    const double span = static_cast<double>(kept[after].first - kept[before].first);
    const double t = static_cast<double>(sequence - kept[before].first) / span;
    weights[before] = 1.0 - t;
    weights[after] = t;
  }
  return weights;
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
  RunToRunNoise noise() const {
    if (degrees_ <= 0) return {};
    return {std::sqrt((squares_ + kRunToRunCvPriorDegrees * kRunToRunCvPrior * kRunToRunCvPrior) /
                      (degrees_ + kRunToRunCvPriorDegrees)),
            degrees_ + kRunToRunCvPriorDegrees};
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

// The within-run noise of a run's log-median: the asymptotic standard error of a median,
// sqrt(pi / 2) * sigma / sqrt(n), with sigma the steps' robust spread (1.4826 MAD) relative to
// their median. 0 for a run of one step (unknown).
double MedianLogStandardError(const std::vector<double>& steps) {
  if (steps.size() < 2) return 0.0;
  const double median = MedianOf(steps);
  std::vector<double> deviations;
  for (double x : steps) deviations.push_back(std::fabs(x - median));
  const double sigma = 1.4826 * MedianOf(deviations) / median;
  return std::sqrt(M_PI / 2.0) * sigma / std::sqrt(static_cast<double>(steps.size()));
}

// Rule 4's a_j: the weight each kept default run carries in the mean of the candidate runs'
// interpolated default levels.
std::vector<double> MeanDefaultWeights(const std::vector<int64_t>& candidate_sequences,
                                       const std::vector<std::pair<int64_t, size_t>>& def_kept) {
  std::vector<double> weight(def_kept.size(), 0.0);
  const double m = static_cast<double>(candidate_sequences.size());
  for (int64_t sequence : candidate_sequences) {
    const std::vector<double> w = DefaultWeights(sequence, def_kept);
    for (size_t j = 0; j < w.size(); ++j) weight[j] += w[j] / m;
  }
  return weight;
}

using KeptRuns = std::vector<std::pair<int64_t, size_t>>;  // (sequence, index), as Kept's

// Rule 4 over the given kept runs of each side, at the given run-to-run noise.
SpeedupInterval Interval(const Side& def, const KeptRuns& def_kept, const Side& cand,
                         const KeptRuns& cand_kept, const RunToRunNoise& noise,
                         double confidence) {
  // A run's log-median varies by the run-to-run noise, or by its own within-run noise where
  // that is larger (a run far noisier inside than the repeats were).
  auto run_variance = [&noise](const RealRun& run) {
    const double se = MedianLogStandardError(run.step_ms);
    return std::max(noise.cv * noise.cv, se * se);
  };
  // The mean log ratio sum_k (sum_j w_kj d_j - c_k) / m, whose variance is
  // sum_j a_j^2 var(d_j) + sum_k var(c_k) / m^2 with a_j = sum_k w_kj / m.
  const double m = static_cast<double>(cand_kept.size());
  std::vector<int64_t> cand_sequences;
  for (const auto& kept : cand_kept) cand_sequences.push_back(kept.first);
  const std::vector<double> weight = MeanDefaultWeights(cand_sequences, def_kept);  // a_j
  double log_ratio = 0.0;
  double variance = 0.0;
  for (size_t j = 0; j < def_kept.size(); ++j) {
    log_ratio += weight[j] * def.log_median[def_kept[j].second];
  }
  for (const auto& [sequence, i] : cand_kept) {
    log_ratio -= cand.log_median[i] / m;
    variance += run_variance(*cand.runs[i]) / (m * m);
  }
  for (size_t j = 0; j < def_kept.size(); ++j) {
    variance += weight[j] * weight[j] * run_variance(*def.runs[def_kept[j].second]);
  }
  // Student's t at the run-to-run noise's degrees of freedom; with none measured anywhere,
  // the steps alone (the normal's quantile; never decides: run_to_run_known is false).
  const double tail = (1.0 - confidence) / 2.0;
  const double quantile =
      noise.cv > 0.0
          ? boost::math::quantile(boost::math::complement(
                boost::math::students_t(std::max(noise.degrees, 1.0)), tail))
          : boost::math::quantile(boost::math::complement(boost::math::normal(), tail));
  const double half_width = quantile * std::sqrt(variance);
  SpeedupInterval interval;
  interval.confidence = confidence;
  interval.speedup = std::exp(log_ratio);
  interval.low = std::exp(log_ratio - half_width);
  interval.high = std::exp(log_ratio + half_width);
  return interval;
}

// A disagreeing pair's kept runs less the one that favours the candidate: the default keeps
// its faster run (faster = true), the candidate its slower one. Other sides' kept runs as
// they are.
KeptRuns Cautious(const Side& side, const KeptRuns& kept, bool faster) {
  if (!side.disagreeing) return kept;
  const auto pick = std::min_element(kept.begin(), kept.end(), [&](const auto& a, const auto& b) {
    const double la = side.log_median[a.second], lb = side.log_median[b.second];
    return faster ? la < lb : la > lb;
  });
  return {*pick};
}

// Marks the kept runs the cautious reading left out as set aside.
void MarkSetAside(Side* side, const KeptRuns& kept, const KeptRuns& cautious) {
  for (const auto& [sequence, i] : kept) {
    side->set_aside[i] = std::none_of(cautious.begin(), cautious.end(),
                                      [i = i](const auto& c) { return c.second == i; });
  }
}

// What the sides ask for before they can decide (rule 2), the default's first; a disagreeing
// pair asks only while the cautious reading has not settled it.
Remeasure Asked(const Side& def, const Side& cand, bool pairs_settled) {
  auto asks = [pairs_settled](const Side& side) {
    return side.ask_remeasure && !(pairs_settled && side.disagreeing);
  };
  return asks(def) ? Remeasure::kDefault : asks(cand) ? Remeasure::kCandidate : Remeasure::kNone;
}

// Every run of both sides with a step, in sequence order.
std::vector<ComparedRun> Compared(const Side& def, const Side& cand) {
  std::vector<ComparedRun> runs;
  for (const Side* side : {&def, &cand}) {
    for (size_t i = 0; i < side->runs.size(); ++i) {
      ComparedRun r;
      r.role = side == &def ? RunRole::kDefault : RunRole::kCandidate;
      r.run_id = side->runs[i]->run_id;
      r.sequence = side->sequence[i];
      r.steps = static_cast<int>(side->runs[i]->step_ms.size());
      r.median_ms = std::exp(side->log_median[i]);
      r.outlier = side->outlier[i];
      r.set_aside = side->set_aside[i];
      runs.push_back(r);
    }
  }
  std::stable_sort(runs.begin(), runs.end(), [](const ComparedRun& a, const ComparedRun& b) {
    return a.sequence < b.sequence;
  });
  return runs;
}

}  // namespace

double RatioVarianceFactor(const std::vector<RunRole>& roles_in_sequence) {
  std::vector<std::pair<int64_t, size_t>> def_kept;
  std::vector<int64_t> candidates;
  for (size_t i = 0; i < roles_in_sequence.size(); ++i) {
    const auto sequence = static_cast<int64_t>(i);
    if (roles_in_sequence[i] == RunRole::kDefault) {
      def_kept.emplace_back(sequence, def_kept.size());
    } else {
      candidates.push_back(sequence);
    }
  }
  if (def_kept.empty() || candidates.empty()) return std::numeric_limits<double>::infinity();
  double factor = 1.0 / static_cast<double>(candidates.size());
  for (double a : MeanDefaultWeights(candidates, def_kept)) factor += a * a;
  return factor;
}

RunToRunNoise RunToRun(const std::vector<RealRuns>& settings) {
  PooledLogSpread pooled;
  for (const RealRuns& runs : settings) pooled.Add(KeptLogs(MakeSide(runs, RunRole::kDefault)));
  return pooled.noise();
}

RunComparison CompareRuns(const RealRuns& default_runs, const RealRuns& candidate_runs,
                          const CompareOptions& options) {
  RunComparison out;
  out.speedup.confidence = options.confidence;
  Side def = MakeSide(default_runs, RunRole::kDefault);
  Side cand = MakeSide(candidate_runs, RunRole::kCandidate);
  out.drift_explained = TakeOffSharedDrift(&def, &cand);
  out.remeasure = Asked(def, cand, false);
  const auto def_kept = Kept(def);
  const auto cand_kept = Kept(cand);
  if (def_kept.empty() || cand_kept.empty()) {
    out.runs = Compared(def, cand);
    return out;
  }
  out.valid = true;
  // The run-to-run noise: as given, else what this comparison's own repeats show.
  RunToRunNoise noise{options.across_cv, options.across_degrees};
  if (noise.cv <= 0.0) {
    PooledLogSpread pooled;
    pooled.Add(KeptLogs(def));
    pooled.Add(KeptLogs(cand));
    noise = pooled.noise();
  }
  out.speedup = Interval(def, def_kept, cand, cand_kept, noise, options.confidence);
  // The default is the level every candidate run is compared with: one run of it can be off
  // by a whole run's noise and no repeat of the candidate shows that (bench/horovod, resnet50:
  // 1.095x [1.026, 1.153] from one default run and two candidate runs 1% apart was 0.948x in
  // production). The same holds for one run of the candidate: a run that came out fast as a
  // whole cannot be told from a faster setting until the setting runs again (bench/horovod,
  // heldout_convnet: 1.244x [1.015, 1.526] from one candidate run between two default runs
  // that agreed by chance, 1.095x [0.900, 1.331] over 5 alternating runs). So a verdict needs
  // two kept runs of each; `across_cv` (other settings' repeats) still sets the noise.
  out.run_to_run_known = def_kept.size() >= 2 && cand_kept.size() >= 2;
  // Rule 2's cautious reading of two runs that disagree (see run_comparison.h).
  if (def.disagreeing || cand.disagreeing) {
    const KeptRuns def_cautious = Cautious(def, def_kept, true);
    const KeptRuns cand_cautious = Cautious(cand, cand_kept, false);
    const SpeedupInterval cautious =
        Interval(def, def_cautious, cand, cand_cautious, noise, options.confidence);
    if (cautious.Faster()) {
      out.speedup = cautious;
      out.disagreement_set_aside = true;
      out.remeasure = Asked(def, cand, true);
      MarkSetAside(&def, def_kept, def_cautious);
      MarkSetAside(&cand, cand_kept, cand_cautious);
    }
  }
  out.runs = Compared(def, cand);
  return out;
}

}  // namespace autotune::tuner
