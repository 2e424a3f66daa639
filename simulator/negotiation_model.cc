#include "simulator/negotiation_model.h"

#include <algorithm>
#include <cmath>

namespace autotune::sim {
namespace {

// Bytes of one coordinator request (a tensor index plus framing), and of a small message.
constexpr double kRequestBytes = 8.0;
constexpr int64_t kSmallMessageBytes = 64;

struct Line {
  double intercept = 0.0;        // trimmed mean residual: what cycles cost on average
  double slope = 0.0;
};

// Mean of v without the lowest and highest `trim` fraction.
double TrimmedMean(std::vector<double> v, double trim) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t cut = static_cast<size_t>(trim * v.size());
  double sum = 0.0;
  for (size_t i = cut; i < v.size() - cut; ++i) sum += v[i];
  return sum / static_cast<double>(v.size() - 2 * cut);
}

// Slope: Theil-Sen (median of pairwise slopes), robust to the scheduling hiccups a busy
// machine shows. Intercept: 10%-trimmed mean of the residuals; negotiation costs add up
// over a step's cycles, so their mean, not their median, is what a step pays. Both >= 0.
Line RobustLine(const std::vector<double>& x, const std::vector<double>& y) {
  const size_t n = x.size();
  // Bounded work on long traces: a deterministic subsample of at most 400 points.
  const size_t stride = std::max<size_t>(1, n / 400);
  std::vector<double> slopes;
  for (size_t i = 0; i < n; i += stride) {
    for (size_t j = i + stride; j < n; j += stride) {
      if (x[j] != x[i]) slopes.push_back((y[j] - y[i]) / (x[j] - x[i]));
    }
  }
  Line line;
  line.slope = std::max(0.0, Median(std::move(slopes)));
  std::vector<double> residual(n);
  for (size_t i = 0; i < n; ++i) residual[i] = y[i] - line.slope * x[i];
  line.intercept = std::max(0.0, TrimmedMean(residual, 0.1));
  return line;
}

}  // namespace

NegotiationModel NegotiationModel::Prior(const NetworkModel& network, int num_tensors) {
  const int world = network.topology().world_size();
  NegotiationParams p;
  const int64_t bit_bytes = std::max<int64_t>(8, (num_tensors + 1 + 63) / 64 * 8);
  p.bits_fixed_us = network.FlatUs(Op::kAllreduce, bit_bytes);
  // Gather of the request lists plus broadcast of the agreed list: two small collectives.
  p.round_fixed_us = 2.0 * network.FlatUs(Op::kAllreduce, kSmallMessageBytes);
  const double world_bw = network.params().at(Op::kAllgather, Level::kWorld).bytes_per_us;
  p.uncached_per_tensor_us = kRequestBytes * world / std::max(world_bw, 1e-9);
  NegotiationModel m(p);
  m.provenance_ = "prior";
  return m;
}

NegotiationModel NegotiationModel::Fit(const Trace& trace, const NetworkModel& network) {
  const int num_tensors = static_cast<int>(trace.run.workload.tensors.size());
  NegotiationModel model = Prior(network, num_tensors);
  const NegotiationParams prior = model.params_;
  const bool cache_on = trace.run.knobs.cache_capacity > 0;
  // Every tensor hits in steady state (recorded steps follow warm-up steps).
  const bool all_cached = cache_on && trace.run.knobs.cache_capacity >= num_tensors;

  // Cycles with only the bit-vector allreduce, and cycles with a coordinator round.
  std::vector<double> bits_x, bits_y, round_x, round_y;
  for (const StepTrace& step : trace.steps) {
    for (const CycleRecord& c : step.cycles) {
      const double us = c.negotiate_end_us - c.start_us;
      if (!std::isfinite(us) || us < 0.0) continue;
      const int offered = std::max(c.responses, c.submitted);
      if (all_cached) {
        bits_x.push_back(offered);
        bits_y.push_back(us);
      } else {
        round_x.push_back(offered);
        round_y.push_back(us);
      }
    }
  }
  constexpr size_t kMinCycles = 3;
  NegotiationParams p = prior;
  bool bits_fitted = false, round_fitted = false;
  if (bits_x.size() >= kMinCycles) {
    const Line line = RobustLine(bits_x, bits_y);
    p.bits_fixed_us = line.intercept;
    p.cached_per_tensor_us = line.slope;
    bits_fitted = true;
  }
  if (round_x.size() >= kMinCycles) {
    // With the cache on, a round cycle also paid for the bits.
    if (cache_on) {
      for (double& y : round_y) y = std::max(0.0, y - p.bits_fixed_us);
    }
    const Line line = RobustLine(round_x, round_y);
    p.round_fixed_us = line.intercept;
    p.uncached_per_tensor_us = std::max(line.slope, 0.0);
    round_fitted = true;
  }
  // A kind of cycle the trace never ran keeps its prior, scaled like the fitted kind.
  if (bits_fitted && !round_fitted && prior.bits_fixed_us > 0.0) {
    const double scale = p.bits_fixed_us / prior.bits_fixed_us;
    p.round_fixed_us = prior.round_fixed_us * scale;
  } else if (round_fitted && !bits_fitted && prior.round_fixed_us > 0.0) {
    const double scale = p.round_fixed_us / prior.round_fixed_us;
    p.bits_fixed_us = prior.bits_fixed_us * scale;
  }
  model.params_ = p;
  model.cpu_bound_ = prior;
  model.provenance_ = std::string("bits ") + (bits_fitted ? "fitted" : "prior") + ", round " +
                      (round_fitted ? "fitted" : "prior");
  return model;
}

NegotiationModel NegotiationModel::Retarget(const NetworkModel& from,
                                            const NetworkModel& to) const {
  if (from.topology().SameShape(to.topology())) return *this;
  auto ratio = [&](double a, double b) { return a > 0.0 ? b / a : 1.0; };
  const double small = ratio(from.FlatUs(Op::kAllreduce, kSmallMessageBytes),
                             to.FlatUs(Op::kAllreduce, kSmallMessageBytes));
  const double world = ratio(from.topology().world_size(), to.topology().world_size());
  NegotiationModel m = *this;
  for (NegotiationParams* p : {&m.params_, &m.cpu_bound_}) {
    p->bits_fixed_us *= small;
    p->round_fixed_us *= small;
    p->uncached_per_tensor_us *= world;
    p->cached_per_tensor_us *= small;
  }
  return m;
}

}  // namespace autotune::sim
