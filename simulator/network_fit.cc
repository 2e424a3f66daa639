// NetworkModel::Fit: measured curves and least-squares alpha-beta parameters from a
// Calibration.
#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <tuple>

#include "simulator/network_model.h"

namespace autotune::sim {
namespace {

constexpr double kUnlimitedBytesPerUs = 1.0e9;  // a level whose bandwidth never matters

std::string PointName(const Calibration& c, size_t i) {
  const CalibrationPoint& p = c.points[i];
  return "calibration " + std::to_string(c.id) + " point " + std::to_string(i) + " (" +
         OpName(p.op) + " " + ScopeName(p.scope) + " ranks=" + std::to_string(p.ranks) +
         " bytes=" + std::to_string(p.bytes) + ")";
}

// An intercept under this many of its standard errors is not told from 0 by the points.
constexpr double kInterceptSignificance = 2.0;

// Weighted least squares of time = a + c * bytes, weights 1/time^2 (relative error, so the
// small sizes count as much as the large ones). Returns {a, c} with a >= 0 and c >= 0. With
// three or more points, an intercept within kInterceptSignificance standard errors of 0 is
// taken as 0 (the line refitted through the origin): points that all lie where the bytes
// dominate (a job's own fused buffers, megabytes each) cannot tell a latency, and the one
// their scatter gave priced the job's small tensors anywhere from 0 to 3.1 ms a step
// (bench/horovod/README.md, one timeline without a calibrate).
std::pair<double, double> FitLine(const std::vector<MeasuredCurve::Point>& pts) {
  if (pts.size() == 1) return {0.0, pts[0].time_us / pts[0].bytes};
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& p : pts) {
    const double w = 1.0 / (p.time_us * p.time_us);
    sw += w;
    sx += w * p.bytes;
    sy += w * p.time_us;
    sxx += w * p.bytes * p.bytes;
    sxy += w * p.bytes * p.time_us;
  }
  const double det = sw * sxx - sx * sx;
  double a = 0.0, c = 0.0;
  if (det > 0.0) {
    c = (sw * sxy - sx * sy) / det;
    a = (sy - c * sx) / sw;
  }
  bool through_origin = a < 0.0;
  if (c > 0.0 && a > 0.0 && pts.size() >= 3) {
    double rss = 0.0;  // weighted residuals: relative errors squared
    for (const auto& p : pts) {
      const double r = p.time_us - a - c * p.bytes;
      rss += r * r / (p.time_us * p.time_us);
    }
    const double a_se = std::sqrt(rss / static_cast<double>(pts.size() - 2) * sxx / det);
    through_origin = a < kInterceptSignificance * a_se;
  }
  if (!(c > 0.0)) {  // flat or noisy curve: all latency, bandwidth from the largest point
    a = pts.front().time_us;
    c = std::max(0.0, (pts.back().time_us - a) / pts.back().bytes);
  } else if (through_origin) {  // all bandwidth: refit through the origin
    a = 0.0;
    c = sxy / sxx;
  }
  return {a, c};
}

// Alpha-beta parameters from a measured curve whose cost at latency 1 and bandwidth 1 is `unit`
// (AlphaBetaCost of the op on its communicator, or WorldCost).
AlphaBeta FitAlphaBeta(const LinearCost& unit, const MeasuredCurve& curve) {
  auto [fixed_us, us_per_byte] = FitLine(curve.Points());
  AlphaBeta ab;
  ab.latency_us = unit.fixed_us > 0.0 ? fixed_us / unit.fixed_us : 0.0;
  ab.bytes_per_us = (unit.us_per_byte > 0.0 && us_per_byte > 0.0) ? unit.us_per_byte / us_per_byte
                                                                  : kUnlimitedBytesPerUs;
  return ab;
}

AlphaBeta Slowest(const AlphaBeta& a, const AlphaBeta& b) {
  return {std::max(a.latency_us, b.latency_us), std::min(a.bytes_per_us, b.bytes_per_us)};
}

using CurveKey = std::tuple<int, int, int>;  // op, scope, ranks (1 for copies)
using GroupedPoints = std::map<CurveKey, std::vector<MeasuredCurve::Point>>;

// Checks every point of calibration against its topology and groups the points into one
// curve per (op, scope, ranks). Corruption names the point at fault.
Status GroupPoints(const Calibration& calibration, GroupedPoints* grouped) {
  const Topology& topo = calibration.topology;
  for (size_t i = 0; i < calibration.points.size(); ++i) {
    const CalibrationPoint& p = calibration.points[i];
    if (p.ranks < 1 || p.ranks > topo.world_size()) {
      return Status::Corruption(PointName(calibration, i) + ": ranks outside 1.." +
                                std::to_string(topo.world_size()));
    }
    if (p.bytes <= 0 || !std::isfinite(p.median_us) || p.median_us <= 0.0) {
      return Status::Corruption(PointName(calibration, i) +
                                ": needs bytes > 0 and a finite median_us > 0, got " +
                                std::to_string(p.median_us));
    }
    const int ranks = p.scope == Scope::kCopy ? 1 : p.ranks;
    (*grouped)[{static_cast<int>(p.op), static_cast<int>(p.scope), ranks}].push_back(
        {static_cast<double>(p.bytes), p.median_us});
  }
  return Status::Ok();
}

// Fills the levels of one op that have no curve from those that do: the world level from
// the slowest of intra- and cross-node, intra and cross from the world. `have` marks the
// levels fitted from a curve on entry and the levels set on return.
void FillMissingLevels(std::array<AlphaBeta, kNumLevels>& ab, bool have[kNumLevels]) {
  const AlphaBeta& intra = ab[0];
  const AlphaBeta& cross = ab[1];
  if (!have[2]) {
    if (have[0] && have[1])
      ab[2] = Slowest(intra, cross);
    else if (have[1])
      ab[2] = cross;
    else if (have[0])
      ab[2] = intra;
    have[2] = have[0] || have[1];
  }
  if (!have[0] && have[2]) ab[0] = ab[2];
  if (!have[1] && have[2]) ab[1] = ab[2];
}

}  // namespace

bool NetworkModel::FitCollectives() {
  const Topology& topo = calibrated_;
  const int level_ranks[kNumLevels] = {topo.ranks_per_node, topo.nodes, topo.world_size()};
  const Scope level_scope[kNumLevels] = {Scope::kIntra, Scope::kCross, Scope::kWorld};
  bool any_allreduce = false;
  for (Op op : {Op::kAllreduce, Op::kAllgather}) {
    bool have[kNumLevels] = {false, false, false};
    for (int level = 0; level < kNumLevels; ++level) {
      if (level_ranks[level] < 2) continue;
      const int idx = FindCurve(op, level_scope[level], level_ranks[level]);
      if (idx < 0) continue;
      const AlphaBeta unit{1.0, 1.0};
      const LinearCost unit_cost = level == static_cast<int>(Level::kWorld)
                                       ? WorldCost(op, topo, unit, route_)
                                       : AlphaBetaCost(op, level_ranks[level], unit);
      params_.collective[static_cast<int>(op)][level] =
          FitAlphaBeta(unit_cost, curves_[idx].curve);
      have[level] = true;
    }
    auto& ab = params_.collective[static_cast<int>(op)];
    FillMissingLevels(ab, have);
    if (op == Op::kAllreduce) {
      any_allreduce = have[2];
    } else if (!have[2]) {
      // No allgather curves: per link, an allgather moves bytes like an allreduce does.
      ab = params_.collective[static_cast<int>(Op::kAllreduce)];
    }
  }
  return any_allreduce;
}

void NetworkModel::FitCopy() {
  const int copy = FindCurve(Op::kAllreduce, Scope::kCopy, 1);
  const int copy_any = copy >= 0 ? copy : FindCurve(Op::kAllgather, Scope::kCopy, 1);
  if (copy_any >= 0) {
    auto [fixed_us, us_per_byte] = FitLine(curves_[copy_any].curve.Points());
    params_.copy = {fixed_us, us_per_byte > 0.0 ? 1.0 / us_per_byte : kUnlimitedBytesPerUs};
  }
}

void NetworkModel::FitHierarchicalFactors() {
  for (Op op : {Op::kAllreduce, Op::kAllgather}) {
    const int idx = hierarchical_curve_[static_cast<int>(op)];
    if (idx < 0) continue;
    std::vector<double> ratios;
    NetworkModel composed = *this;
    composed.hierarchical_curve_[static_cast<int>(op)] = -1;
    composed.params_.hierarchical_factor[static_cast<int>(op)] = 1.0;
    for (const auto& p : curves_[idx].curve.Points()) {
      const double fusion_bytes = op == Op::kAllgather ? p.bytes * topology_.world_size() : p.bytes;
      const double c = composed.HierarchicalUs(op, static_cast<int64_t>(fusion_bytes));
      if (c > 0.0) ratios.push_back(p.time_us / c);
    }
    if (ratios.empty()) continue;
    std::sort(ratios.begin(), ratios.end());
    params_.hierarchical_factor[static_cast<int>(op)] =
        std::clamp(ratios[ratios.size() / 2], 0.25, 4.0);
  }
}

Status NetworkModel::Fit(const Calibration& calibration, NetworkModel* out) {
  return Fit(calibration, RouteOf(calibration.backend), out);
}

Status NetworkModel::Fit(const Calibration& calibration, WorldRoute route, NetworkModel* out) {
  const std::string name = "calibration " + std::to_string(calibration.id);
  const Topology& topo = calibration.topology;
  if (topo.nodes < 1 || topo.ranks_per_node < 1) {
    return Status::Corruption(name + ": topology " + topo.key() + " is not valid");
  }
  if (calibration.points.empty()) {
    return Status::InvalidArgument(name + " has no points");
  }
  GroupedPoints grouped;
  AUTOTUNE_RETURN_IF_ERROR(GroupPoints(calibration, &grouped));

  NetworkModel m;
  m.calibrated_ = topo;
  m.topology_ = topo;
  m.calibration_id_ = calibration.id;
  m.route_ = route;
  for (auto& [key, pts] : grouped) {
    CurveEntry e;
    e.op = static_cast<Op>(std::get<0>(key));
    e.scope = static_cast<Scope>(std::get<1>(key));
    e.ranks = std::get<2>(key);
    e.curve = MeasuredCurve(std::move(pts));
    m.curves_.push_back(std::move(e));
  }

  if (!m.FitCollectives() && topo.world_size() > 1) {
    return Status::InvalidArgument(name + " (" + topo.key() +
                                   ") has no allreduce curve on the world, intra-node or "
                                   "cross-node communicators");
  }
  m.FitCopy();
  m.Bind();
  m.FitHierarchicalFactors();
  m.Bind();
  *out = std::move(m);
  return Status::Ok();
}

}  // namespace autotune::sim
