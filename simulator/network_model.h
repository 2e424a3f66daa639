// NetworkModel: how long one fused collective takes on a topology.
//
// Two layers. Where the calibration measured the communicator at hand (same size) and the
// message size is covered, the measured median curve is interpolated (linear in bytes). Elsewhere
// a parametric alpha-beta model per level (intra-node, cross-node, world) and per op,
// fitted to the same curves by least squares, gives the cost; outside the covered sizes
// the curve's end point is scaled by the parametric ratio, so the two layers join without
// a jump. The parametric layer is what extrapolates to topologies that were not measured.
//
// Cost formulas (p = communicator size, B = message bytes per rank as the calibration
// stores them: allreduce buffer bytes, allgather bytes each rank sends):
//   allreduce(p, B)      = 2*ceil(log2 p)*latency + 2(p-1)/p * B / bandwidth
//                          (on the world: the bytes one node's link carries, WorldRoute)
//   allgather(p, B)      =   ceil(log2 p)*latency +   (p-1) * B / bandwidth
//                          (= (p-1)/p of the gathered bytes p*B)
//   reduce-scatter(p, B) = allreduce(p, B) / 2 (the first half of a ring/Rabenseifner)
// Hierarchical allreduce of B on N nodes x M ranks:
//   intra reduce-scatter(M, B) + cross allreduce(N, B/M) + intra allgather(M, B/M).
// Hierarchical allgather of per-rank bytes b:
//   intra gather (as allgather(M, b)) + cross allgather(N, M*b) + intra broadcast of
//   N*M*b bytes (as allgather(M, N*b)).
// A measured hierarchical curve, when present, is used as is on its own topology and
// yields a factor (measured / composed) applied to the composition elsewhere.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "simulator/curve.h"
#include "traces/calibration.h"
#include "traces/status.h"
#include "traces/topology.h"
#include "traces/trace.h"
#include "traces/workload.h"

namespace autotune::sim {

// Alpha-beta parameters of one op on one level.
struct AlphaBeta {
  double latency_us = 0.0;      // per algorithm step, microseconds
  double bytes_per_us = 1.0e3;  // bandwidth in bytes per microsecond (1 byte/us = 1 MB/s)
};

enum class Level { kIntra = 0, kCross = 1, kWorld = 2 };
inline constexpr int kNumLevels = 3;
inline constexpr int kNumOps = 2;  // Op::kAllreduce, Op::kAllgather

struct NetworkParams {
  // [op][level]: op 0 = allreduce, 1 = allgather; level as in Level.
  std::array<std::array<AlphaBeta, kNumLevels>, kNumOps> collective;
  // Fusion buffer copy: latency_us per copy, bytes_per_us copy bandwidth.
  AlphaBeta copy{0.0, 4.0e3};
  // Measured hierarchical time over the composed three-step cost, per op (1 = exact).
  std::array<double, kNumOps> hierarchical_factor{1.0, 1.0};

  AlphaBeta& at(Op op, Level level) {
    return collective[static_cast<int>(op)][static_cast<int>(level)];
  }
  const AlphaBeta& at(Op op, Level level) const {
    return collective[static_cast<int>(op)][static_cast<int>(level)];
  }
  // Every op and level gets the same parameters (tests, quick models).
  static NetworkParams Uniform(double latency_us, double bytes_per_us);
};

// Cost of one op on a communicator of size p for message bytes B (see the file comment):
// fixed_us + us_per_byte * B.
struct LinearCost {
  double fixed_us = 0.0;
  double us_per_byte = 0.0;
  double At(double bytes) const { return fixed_us + us_per_byte * bytes; }
};
LinearCost AlphaBetaCost(Op op, int ranks, const AlphaBeta& ab);
// ceil(log2 p) for p >= 1.
int Log2Steps(int ranks);

// How a flat allreduce on the world crosses the links between nodes.
// - kRing (NCCL's and gloo's ring): every node's link carries 2(p-1)/p of the buffer, p the
//   world's ranks: AlphaBetaCost on p ranks.
// - kNodesLast (Open MPI's tuned allreduce for the sizes a job fuses: Rabenseifner's, recursive
//   halving with the partner's distance doubling from 1, then the mirror allgather): with
//   ranks numbered node by node (mpirun's mapping by slot) the first log2 M exchanges stay in
//   a node, and each node's link carries sum over the later ones of M ranks x B / 2^(k+1),
//   twice: 2(N-1)/N of the buffer whatever M is, as an allreduce over the N nodes would. On
//   the emulated cluster a 16 MiB allreduce takes 154 ms on 2x2 and 151 ms on 2x1 (the ring's
//   2(p-1)/p would make 2x2 1.5x slower). Taken only where N and M are powers of two (the
//   derivation's case); elsewhere, and for allgather, the p-rank cost.
enum class WorldRoute { kRing, kNodesLast };
// kNodesLast for Open MPI (kMpi), kRing for the others.
WorldRoute RouteOf(BackendKind library);
// What the route sends over a node's link, for people: "Open MPI's allreduce: 2(N-1)/N of a
// buffer over each node's link on N nodes" or "a ring: 2(p-1)/p of ...".
const char* WorldRouteText(WorldRoute route);
// The parametric cost of one op on the whole world of `topology` under `route`: AlphaBetaCost
// on its N x M ranks, except an allreduce routed kNodesLast on N > 1 nodes of M > 1 ranks (N and
// M powers of two): 2 log2(N M) latencies and 2(N-1)/N bytes on the link per buffer byte.
LinearCost WorldCost(Op op, const Topology& topology, const AlphaBeta& ab, WorldRoute route);

// The three steps of a hierarchical collective, microseconds.
struct HierarchicalSteps {
  double intra_first_us = 0.0;  // reduce-scatter (allreduce) | gather (allgather)
  double cross_us = 0.0;        // cross-node allreduce | allgather
  double intra_last_us = 0.0;   // allgather (allreduce) | broadcast (allgather)
  double factor = 1.0;          // measured / composed, applied to the sum
  double total_us() const { return factor * (intra_first_us + cross_us + intra_last_us); }
};

class NetworkModel {
 public:
  NetworkModel() = default;

  // A purely parametric model bound to topology (no measured curves), its world routed as
  // `route` says.
  static NetworkModel FromParams(const NetworkParams& params, const Topology& topology,
                                 WorldRoute route = WorldRoute::kRing);
  // Fits the model to a calibration and binds it to the calibration's topology; the world's
  // route is RouteOf(calibration.backend), or `route` where given (a job's own collectives
  // are recorded as mpi under DDP, whose gloo runs a ring: RouteOf(CollectiveLibrary(run))).
  // On the calibrated shape the route changes nothing (the fitted line is the same); it says
  // how the world's cost moves to another shape. InvalidArgument/Corruption name the
  // calibration and the point at fault.
  static Status Fit(const Calibration& calibration, NetworkModel* out);
  static Status Fit(const Calibration& calibration, WorldRoute route, NetworkModel* out);
  // The same model predicting another topology (curves are kept for communicators of a
  // calibrated size). NotSupported when the topology needs a level never measured
  // (cross-node on a one-node calibration, intra-node on one rank per node). With
  // `assumption`, a missing intra-node level is not refused: it takes the world level's
  // parameters (an intra-node link is no slower than the network between nodes, so the
  // prediction bounds those collectives from above) and *assumption says so in one line.
  Status Retarget(const Topology& topology, NetworkModel* out,
                  std::string* assumption = nullptr) const;

  const Topology& topology() const { return topology_; }
  const Topology& calibrated_topology() const { return calibrated_; }
  const NetworkParams& params() const { return params_; }
  int64_t calibration_id() const { return calibration_id_; }
  WorldRoute route() const { return route_; }

  // One fused collective on the world. fusion_bytes as FusionBytes() counts it: the
  // buffer for allreduce, the gathered output (world_size x per-rank) for allgather.
  double CollectiveUs(Op op, Algorithm algorithm, int64_t fusion_bytes) const {
    return algorithm == Algorithm::kHierarchical ? HierarchicalUs(op, fusion_bytes)
                                                 : FlatUs(op, fusion_bytes);
  }
  double FlatUs(Op op, int64_t fusion_bytes) const;
  double HierarchicalUs(Op op, int64_t fusion_bytes) const {
    return Hierarchical(op, fusion_bytes).total_us();
  }
  HierarchicalSteps Hierarchical(Op op, int64_t fusion_bytes) const;
  // One op on one level's communicator, message bytes per rank as the calibration counts.
  double LevelUs(Op op, Level level, double message_bytes) const;
  // Copying bytes into (or out of) the fusion buffer on one rank.
  double CopyUs(int64_t bytes) const;

  // One line per level and op: latency, bandwidth, measured range used.
  std::string Describe() const;

 private:
  struct CurveEntry {
    Op op = Op::kAllreduce;
    Scope scope = Scope::kWorld;
    int ranks = 0;
    MeasuredCurve curve;
  };
  // A level bound to the current topology: the parametric cost and the curve, if any. A
  // world level of another communicator size than was measured has no curve of its own; it
  // takes the measured world curve's ratio to its own parametric cost (shape_cost) at each
  // size, as the hierarchical factor carries over: the measured curve's departure from the
  // alpha-beta line (a protocol switch, a job's collectives slowed by its compute) is taken
  // to hold on a larger world of the same links.
  struct BoundLevel {
    LinearCost cost;
    int curve = -1;        // index into curves_, -1 = parametric only
    int shape_curve = -1;  // with curve -1: the measured world curve whose ratio applies
    LinearCost shape_cost{};
  };

  // Fit steps, in order; calibrated_ and curves_ are set. Fits params_.collective from the
  // curves of the calibrated levels; returns whether an allreduce level was fitted.
  bool FitCollectives();
  // Fits params_.copy from a copy curve, if any.
  void FitCopy();
  // REQUIRES: bound. Sets params_.hierarchical_factor from the measured hierarchical curves.
  void FitHierarchicalFactors();
  void Bind();
  int FindCurve(Op op, Scope scope, int ranks) const;
  double Eval(const BoundLevel& level, double bytes) const;

  NetworkParams params_;
  Topology topology_;
  Topology calibrated_;
  WorldRoute route_ = WorldRoute::kRing;
  int64_t calibration_id_ = 0;
  std::vector<CurveEntry> curves_;
  // Bound for topology_, [op][level]; plus the world hierarchical curves and the copy.
  std::array<std::array<BoundLevel, kNumLevels>, kNumOps> bound_;
  std::array<int, kNumOps> hierarchical_curve_{-1, -1};
  BoundLevel copy_;
};

}  // namespace autotune::sim
