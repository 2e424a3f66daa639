#include "simulator/network_model.h"

#include <algorithm>
#include <bit>
#include <cstdio>

namespace autotune::sim {
namespace {

int OpIndex(Op op) { return static_cast<int>(op); }

const char* LevelName(int level) {
  static const char* const kNames[] = {"intra", "cross", "world"};
  return kNames[level];
}

}  // namespace

NetworkParams NetworkParams::Uniform(double latency_us, double bytes_per_us) {
  NetworkParams p;
  for (auto& per_op : p.collective) per_op.fill(AlphaBeta{latency_us, bytes_per_us});
  return p;
}

int Log2Steps(int ranks) {
  int steps = 0;
  while ((1 << steps) < ranks) ++steps;
  return steps;
}

LinearCost AlphaBetaCost(Op op, int ranks, const AlphaBeta& ab) {
  if (ranks <= 1) return {};
  const double p = ranks;
  const double inv_bw = 1.0 / ab.bytes_per_us;
  if (op == Op::kAllgather) {
    return {Log2Steps(ranks) * ab.latency_us, (p - 1.0) * inv_bw};
  }
  return {2.0 * Log2Steps(ranks) * ab.latency_us, 2.0 * (p - 1.0) / p * inv_bw};
}

WorldRoute RouteOf(BackendKind library) {
  return library == BackendKind::kMpi ? WorldRoute::kNodesLast : WorldRoute::kRing;
}

const char* WorldRouteText(WorldRoute route) {
  return route == WorldRoute::kNodesLast
             ? "Open MPI's allreduce: 2(N-1)/N of a buffer over each node's link on N nodes"
             : "a ring: 2(p-1)/p of a buffer over each node's link";
}

LinearCost WorldCost(Op op, const Topology& topology, const AlphaBeta& ab, WorldRoute route) {
  const int n = topology.nodes;
  const int m = topology.ranks_per_node;
  if (op != Op::kAllreduce || route != WorldRoute::kNodesLast || n < 2 || m < 2 ||
      !std::has_single_bit(static_cast<unsigned>(n)) ||
      !std::has_single_bit(static_cast<unsigned>(m))) {
    return AlphaBetaCost(op, topology.world_size(), ab);
  }
  return {2.0 * Log2Steps(topology.world_size()) * ab.latency_us,
          2.0 * (n - 1.0) / n / ab.bytes_per_us};
}

NetworkModel NetworkModel::FromParams(const NetworkParams& params, const Topology& topology,
                                      WorldRoute route) {
  NetworkModel m;
  m.params_ = params;
  m.route_ = route;
  m.topology_ = topology;
  m.calibrated_ = topology;
  m.Bind();
  return m;
}

Status NetworkModel::Retarget(const Topology& topology, NetworkModel* out,
                              std::string* assumption) const {
  if (topology.nodes < 1 || topology.ranks_per_node < 1) {
    return Status::InvalidArgument("topology " + topology.key() +
                                   ": nodes and ranks per node must be >= 1");
  }
  if (!curves_.empty()) {
    if (topology.nodes > 1 && calibrated_.nodes == 1) {
      return Status::NotSupported("cannot predict " + topology.key() + " from calibration " +
                                  std::to_string(calibration_id_) + " of " + calibrated_.key() +
                                  ": it has no cross-node curves (calibrate on at least 2 nodes)");
    }
    if (topology.ranks_per_node > 1 && calibrated_.ranks_per_node == 1 && assumption != nullptr) {
      *assumption = "intra-node collectives taken as slow as the measured ones between nodes "
                    "(calibration of " + calibrated_.key() + " has no intra-node link): an "
                    "upper bound on their time";
    } else if (topology.ranks_per_node > 1 && calibrated_.ranks_per_node == 1) {
      return Status::NotSupported(
          "cannot predict " + topology.key() + " from calibration " +
          std::to_string(calibration_id_) + " of " + calibrated_.key() +
          ": it has no intra-node curves (calibrate with at least 2 ranks per node)");
    }
  }
  NetworkModel m = *this;
  m.topology_ = topology;
  m.Bind();
  *out = std::move(m);
  return Status::Ok();
}

int NetworkModel::FindCurve(Op op, Scope scope, int ranks) const {
  for (size_t i = 0; i < curves_.size(); ++i) {
    const CurveEntry& e = curves_[i];
    if (e.op == op && e.scope == scope && (scope == Scope::kCopy || e.ranks == ranks)) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

void NetworkModel::Bind() {
  const int m = topology_.ranks_per_node;
  const int n = topology_.nodes;
  const bool same_shape = topology_.SameShape(calibrated_);
  for (Op op : {Op::kAllreduce, Op::kAllgather}) {
    auto& b = bound_[OpIndex(op)];
    b[0] = {.cost = AlphaBetaCost(op, m, params_.at(op, Level::kIntra)),
            .curve = m > 1 ? FindCurve(op, Scope::kIntra, m) : -1};
    b[1] = {.cost = AlphaBetaCost(op, n, params_.at(op, Level::kCross)),
            .curve = n > 1 ? FindCurve(op, Scope::kCross, n) : -1};
    // A one-node target of a multi-node calibration: the world is one node's ranks.
    const Level world_level = (n == 1 && calibrated_.nodes > 1) ? Level::kIntra : Level::kWorld;
    b[2] = {.cost = world_level == Level::kWorld
                        ? WorldCost(op, topology_, params_.at(op, Level::kWorld), route_)
                        : AlphaBetaCost(op, topology_.world_size(), params_.at(op, world_level)),
            .curve = same_shape ? FindCurve(op, Scope::kWorld, topology_.world_size()) : -1};
    if (b[2].curve < 0 && world_level == Level::kWorld) {
      b[2].shape_curve = FindCurve(op, Scope::kWorld, calibrated_.world_size());
      b[2].shape_cost = WorldCost(op, calibrated_, params_.at(op, Level::kWorld), route_);
    }
    hierarchical_curve_[OpIndex(op)] =
        same_shape ? FindCurve(op, Scope::kHierarchical, topology_.world_size()) : -1;
  }
  copy_ = {.cost = LinearCost{params_.copy.latency_us, 1.0 / params_.copy.bytes_per_us},
           .curve = FindCurve(Op::kAllreduce, Scope::kCopy, 1)};
  if (copy_.curve < 0) copy_.curve = FindCurve(Op::kAllgather, Scope::kCopy, 1);
}

double NetworkModel::Eval(const BoundLevel& level, double bytes) const {
  double us = level.cost.At(bytes);
  if (level.curve >= 0) {
    const MeasuredCurve& c = curves_[level.curve].curve;
    if (c.Covers(bytes)) {
      us = c.TimeUs(bytes);
    } else {
      const double edge = std::clamp(bytes, c.min_bytes(), c.max_bytes());
      const double at_edge = level.cost.At(edge);
      if (at_edge > 0.0) us = c.TimeUs(edge) * (us / at_edge);
    }
  } else if (level.shape_curve >= 0) {
    const MeasuredCurve& c = curves_[level.shape_curve].curve;
    const double at = std::clamp(bytes, c.min_bytes(), c.max_bytes());
    const double line = level.shape_cost.At(at);
    if (line > 0.0) us *= c.TimeUs(at) / line;
  }
  return us;
}

double NetworkModel::LevelUs(Op op, Level level, double message_bytes) const {
  return Eval(bound_[OpIndex(op)][static_cast<int>(level)], message_bytes);
}

double NetworkModel::FlatUs(Op op, int64_t fusion_bytes) const {
  double bytes = static_cast<double>(fusion_bytes);
  if (op == Op::kAllgather) bytes /= topology_.world_size();
  return LevelUs(op, Level::kWorld, bytes);
}

HierarchicalSteps NetworkModel::Hierarchical(Op op, int64_t fusion_bytes) const {
  const double m = topology_.ranks_per_node;
  const double n = topology_.nodes;
  auto level = [&](Op level_op, Level l, double bytes) {
    return Eval(bound_[OpIndex(level_op)][static_cast<int>(l)], bytes);
  };
  auto compose = [&](double bytes) {
    HierarchicalSteps s;
    if (op == Op::kAllreduce) {
      s.intra_first_us = 0.5 * level(Op::kAllreduce, Level::kIntra, bytes);
      s.cross_us = level(Op::kAllreduce, Level::kCross, bytes / m);
      s.intra_last_us = level(Op::kAllgather, Level::kIntra, bytes / m);
    } else {
      const double per_rank = bytes / (m * n);
      s.intra_first_us = level(Op::kAllgather, Level::kIntra, per_rank);
      s.cross_us = level(Op::kAllgather, Level::kCross, m * per_rank);
      s.intra_last_us = level(Op::kAllgather, Level::kIntra, n * per_rank);
    }
    return s;
  };
  const double bytes = static_cast<double>(fusion_bytes);
  HierarchicalSteps steps = compose(bytes);
  const int curve = hierarchical_curve_[OpIndex(op)];
  if (curve < 0) {
    steps.factor = params_.hierarchical_factor[OpIndex(op)];
    return steps;
  }
  // The measured composed collective: the factor that makes the (unscaled) composition
  // equal the curve's value, at the nearest covered size when outside the measured range.
  const MeasuredCurve& c = curves_[curve].curve;
  const double curve_bytes = op == Op::kAllgather ? bytes / (m * n) : bytes;
  const double edge = std::clamp(curve_bytes, c.min_bytes(), c.max_bytes());
  const HierarchicalSteps at_edge = compose(op == Op::kAllgather ? edge * m * n : edge);
  const double composed = at_edge.intra_first_us + at_edge.cross_us + at_edge.intra_last_us;
  steps.factor = composed > 0.0 ? c.TimeUs(edge) / composed : 1.0;
  return steps;
}

double NetworkModel::CopyUs(int64_t bytes) const {
  return Eval(copy_, static_cast<double>(bytes));
}

std::string NetworkModel::Describe() const {
  std::string out;
  char line[256];
  for (Op op : {Op::kAllreduce, Op::kAllgather}) {
    for (int level = 0; level < kNumLevels; ++level) {
      const AlphaBeta& ab = params_.collective[OpIndex(op)][level];
      const BoundLevel& b = bound_[OpIndex(op)][level];
      std::string range = "parametric";
      if (b.curve >= 0) {
        const MeasuredCurve& c = curves_[b.curve].curve;
        std::snprintf(line, sizeof(line), "measured %.0f-%.0f bytes (%d sizes)", c.min_bytes(),
                      c.max_bytes(), c.size());
        range = line;
        // One size cannot tell a latency from a bandwidth (a DDP job's trace with one bucket
        // size: bench/ddp/README.md): say what that leaves out.
        if (c.size() < 2 && ab.latency_us <= 0.0) {
          range += "; one size: its latency is not measured (taken as 0), so more and smaller "
                   "collectives are predicted too fast";
        }
      } else if (b.shape_curve >= 0) {
        const CurveEntry& e = curves_[b.shape_curve];
        std::snprintf(line, sizeof(line),
                      "parametric x the measured %d-rank curve's ratio to its line (%.0f-%.0f "
                      "bytes)", e.ranks, e.curve.min_bytes(), e.curve.max_bytes());
        range = line;
      }
      std::snprintf(line, sizeof(line), "%s %s: latency %.2f us/step, bandwidth %.1f MB/s, %s\n",
                    OpName(op), LevelName(level), ab.latency_us, ab.bytes_per_us, range.c_str());
      out += line;
    }
  }
  std::snprintf(line, sizeof(line),
                "copy: %.2f us + %.1f MB/s; hierarchical factor allreduce %.3f allgather %.3f\n",
                params_.copy.latency_us, params_.copy.bytes_per_us, params_.hierarchical_factor[0],
                params_.hierarchical_factor[1]);
  out += line;
  return out;
}

}  // namespace autotune::sim
