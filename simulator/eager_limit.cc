#include "simulator/eager_limit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "traces/knob_table.h"

namespace autotune::sim {
namespace {

int OpIndex(Op op) { return op == Op::kAllgather ? 1 : 0; }

// The job's own tail counts where it ran this many collectives of a size or more.
constexpr int kMinTailCollectives = 10;

// The curve at log bytes x, linear between its points, its nearest end's value beyond them; 1
// when empty.
double Interpolate(const std::vector<std::pair<double, double>>& curve, double x) {
  if (curve.empty()) return 1.0;
  if (x <= curve.front().first) return curve.front().second;
  if (x >= curve.back().first) return curve.back().second;
  const auto hi = std::lower_bound(curve.begin(), curve.end(), std::make_pair(x, 0.0));
  const auto lo = hi - 1;
  const double w = (x - lo->first) / (hi->first - lo->first);
  return lo->second + w * (hi->second - lo->second);
}

// A world point's time: its mean where `means`, else its median.
double PointUs(const CalibrationPoint& p, bool means) { return means ? p.mean_us : p.median_us; }

// Whether every world collective point of both calibrates has a mean.
bool BothHaveMeans(const Calibration& a, const Calibration& b) {
  for (const Calibration* c : {&a, &b}) {
    for (const CalibrationPoint& p : c->points) {
      if (p.scope == Scope::kWorld && !(p.mean_us > 0.0)) return false;
    }
  }
  return true;
}

}  // namespace

Status EagerLimitEffect::Fit(int job_limit, const Calibration& base,
                             const std::vector<Calibration>& others, EagerLimitEffect* out) {
  EagerLimitEffect e;
  e.job_limit_ = job_limit;
  e.world_size_ = std::max(1, base.topology.world_size());
  e.base_calibration_id_ = base.id;
  const int64_t job_effective = EffectiveTcpEagerLimit(job_limit);
  for (const Calibration& c : others) {
    if (!c.topology.SameShape(base.topology) || c.backend != base.backend) {
      return Status::InvalidArgument(
          "calibration " + std::to_string(c.id) + " (" + c.topology.key() + ", " +
          BackendName(c.backend) + ") is not of calibration " + std::to_string(base.id) +
          "'s topology and backend (" + base.topology.key() + ", " + BackendName(base.backend) +
          "): no eager-limit ratio between them");
    }
    const int64_t effective = EffectiveTcpEagerLimit(c.mpi_tcp_eager_limit);
    if (effective == job_effective) continue;
    const bool known = std::any_of(e.limits_.begin(), e.limits_.end(), [&](const AtLimit& a) {
      return EffectiveTcpEagerLimit(a.limit) == effective;
    });
    if (known) continue;  // the caller lists the newest first
    AtLimit a;
    a.limit = c.mpi_tcp_eager_limit;
    a.calibration_id = c.id;
    a.means = BothHaveMeans(base, c);
    for (Op op : {Op::kAllreduce, Op::kAllgather}) {
      std::map<int64_t, const CalibrationPoint*> from;  // the base's world points by size
      for (const CalibrationPoint& p : base.points) {
        if (p.scope == Scope::kWorld && p.op == op) from[p.bytes] = &p;
      }
      RatioCurve& curve = a.curves[OpIndex(op)];
      RatioCurve& untailed = a.untailed[OpIndex(op)];
      for (const CalibrationPoint& p : c.points) {
        if (p.scope != Scope::kWorld || p.op != op) continue;
        const auto at = from.find(p.bytes);
        const double to = PointUs(p, a.means);
        if (at == from.end() || !(to > 0.0)) continue;
        const double base_us = PointUs(*at->second, a.means);
        if (!(base_us > 0.0)) continue;
        const double x = std::log(static_cast<double>(p.bytes));
        curve.emplace_back(x, to / base_us);
        untailed.emplace_back(x, to / at->second->median_us);
      }
      std::sort(curve.begin(), curve.end());
      std::sort(untailed.begin(), untailed.end());
    }
    // A calibrate of no size the job's limit's measured says nothing of it: not used.
    if (a.curves[0].empty() && a.curves[1].empty()) continue;
    e.limits_.push_back(std::move(a));
  }
  std::sort(e.limits_.begin(), e.limits_.end(), [](const AtLimit& a, const AtLimit& b) {
    return EffectiveTcpEagerLimit(a.limit) < EffectiveTcpEagerLimit(b.limit);
  });
  *out = std::move(e);
  return Status::Ok();
}

int EagerLimitEffect::Choose(int setting_limit) const {
  const int64_t job = EffectiveTcpEagerLimit(job_limit_);
  const int64_t want = EffectiveTcpEagerLimit(setting_limit);
  int best = -1;
  for (int i = 0; i < static_cast<int>(limits_.size()); ++i) {
    const int64_t at = EffectiveTcpEagerLimit(limits_[i].limit);
    const bool between = want > job ? (at > job && at <= want) : (at < job && at >= want);
    if (!between) continue;
    // Ascending: above the job's limit the last one between is nearest the setting, below it
    // the first.
    if (want > job || best < 0) best = i;
  }
  return best;
}

void EagerLimitEffect::SetJobTails(const std::vector<CollectiveTail>& tails) {
  for (auto& t : tails_) t.clear();
  for (const CollectiveTail& t : tails) {
    if (t.count < kMinTailCollectives || !(t.mean_us > 0.0) || !(t.median_us > 0.0)) continue;
    tails_[OpIndex(t.op)].emplace_back(t.bin, t.median_us / t.mean_us);
  }
}

void EagerLimitEffect::SetJobAtLimit(int limit, const std::vector<CollectiveTail>& at_limit,
                                     const std::vector<CollectiveTail>& at_job_limit) {
  const int64_t effective = EffectiveTcpEagerLimit(limit);
  for (AtLimit& a : limits_) {
    if (EffectiveTcpEagerLimit(a.limit) != effective) continue;
    for (auto& own : a.own) own.clear();
    for (const CollectiveTail& t : at_limit) {
      if (t.count < kMinTailCollectives || !(t.mean_us > 0.0)) continue;
      for (const CollectiveTail& j : at_job_limit) {
        if (j.op == t.op && j.bin == t.bin && j.count >= kMinTailCollectives && j.mean_us > 0.0) {
          a.own[OpIndex(t.op)].emplace_back(t.bin, t.mean_us / j.mean_us);
        }
      }
    }
  }
}

double EagerLimitEffect::Ratio(int index, Op op, int64_t fusion_bytes) const {
  if (index < 0) return 1.0;
  const AtLimit& a = limits_[index];
  const int64_t job = EffectiveTcpEagerLimit(job_limit_);
  const int64_t at = EffectiveTcpEagerLimit(a.limit);
  const int64_t lower = std::min(job, at), higher = std::max(job, at);
  if (2 * fusion_bytes <= lower || fusion_bytes / world_size_ > 2 * higher) return 1.0;
  // The calibration's message bytes per rank (allgather: each rank's part of the output).
  const double message =
      std::max(1.0, static_cast<double>(op == Op::kAllgather ? fusion_bytes / world_size_
                                                              : fusion_bytes));
  double ratio = Interpolate(a.curves[OpIndex(op)], std::log(message));
  const int bin = SelfCalibrationBin(message);
  bool own = false;  // the job itself ran this size at this limit
  for (const auto& [own_bin, own_ratio] : a.own[OpIndex(op)]) {
    if (own_bin == bin) {
      ratio = own_ratio;
      own = true;
      break;
    }
  }
  if (!own && at > job) {  // the stall taken out: the job's own tail where it shows this size
    for (const auto& [tail_bin, median_over_mean] : tails_[OpIndex(op)]) {
      if (tail_bin == bin) {
        ratio = median_over_mean * Interpolate(a.untailed[OpIndex(op)], std::log(message));
        break;
      }
    }
  }
  // A higher limit only takes a rendezvous handshake away and a lower one only adds it: a
  // ratio on the other side of 1 is the calibrates' own noise, a few stalls among their
  // repetitions (bench/horovod: a calibrate at 524288 timed 256 KiB at a mean of 5.94 ms, max
  // 42 ms, its twin at Open MPI's own limit 3.65 ms), and the size is held.
  return at > job ? std::min(1.0, ratio) : std::max(1.0, ratio);
}

std::string EagerLimitEffect::Describe() const {
  std::string text;
  for (int i = 0; i < static_cast<int>(limits_.size()); ++i) {
    // The allreduce at the powers of two where the ratio can differ from 1.
    double low = 1.0, high = 1.0;
    int64_t low_at = 0;
    bool any = false;
    for (int64_t bytes = 1024; bytes <= (int64_t{1} << 30); bytes *= 2) {
      const double r = Ratio(i, Op::kAllreduce, bytes);
      if (r == 1.0) continue;
      if (!any || r < low) {
        low = r;
        low_at = bytes;
      }
      high = any ? std::max(high, r) : r;
      any = true;
    }
    char line[320];
    std::snprintf(line, sizeof(line),
                  "%s%d by calibration %lld against %lld at the job's %d (0: Open MPI's own), "
                  "their %s: the flat allreduce ",
                  text.empty() ? "" : "; ", limits_[i].limit,
                  static_cast<long long>(calibration_id(i)),
                  static_cast<long long>(base_calibration_id()), job_limit_,
                  limits_[i].means ? "means" : "medians");
    text += line;
    if (any) {
      std::snprintf(line, sizeof(line), "%.2f-%.2fx, least at %lld bytes", low, high,
                    static_cast<long long>(low_at));
      text += line;
    } else {
      text += "unchanged at every size";
    }
    const size_t own = limits_[i].own[0].size() + limits_[i].own[1].size();
    if (own > 0) {
      std::snprintf(line, sizeof(line), " (the job's own runs at %d where they show the size: %zu",
                    limits_[i].limit, own);
      text += line;
      text += own == 1 ? " size)" : " sizes)";
    }
  }
  return text;
}

}  // namespace autotune::sim
