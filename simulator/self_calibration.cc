#include "simulator/self_calibration.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "simulator/shared_link.h"

namespace autotune::sim {
namespace {

// Copies smaller than this are dominated by per-tensor overheads, not bandwidth (as in
// trace_calibration.cc).
constexpr int64_t kMinCopyBytes = 64 * 1024;

// (op, scope, size bin): a bin spans a factor of sqrt(2) in bytes.
using BinKey = std::tuple<int, int, int>;
struct Bin {
  std::vector<double> times_us;
  std::vector<double> bytes;
};

bool SameJobShape(const RunInfo& a, const RunInfo& b) {
  return a.topology.SameShape(b.topology) && a.backend == b.backend && a.framework == b.framework;
}

// A collective launched within this of its predecessor's end ran back to back with it.
constexpr double kBackToBackUs = 100.0;

// One collective's time as binned.
struct Point {
  BinKey key;
  double bytes = 0.0;
  double us = 0.0;
  bool alone = false;  // ComputePhase::kAlone
  int previous = -1;   // the point its rank ran just before it, back to back; -1: none
};

// What a collective waited for its predecessor, moved onto the predecessor (one collective in
// flight; why: simulator/README.md, "what a collective waited for"). Per (bin, predecessor's
// bin) with kMinSpillCollectives or more back-to-back followers and a larger predecessor, the
// followers' mean above the lowest such mean of their bin is taken from them, from each in
// proportion to its time above that lowest mean, and added to their predecessors. The total is
// kept.
constexpr int kMinSpillCollectives = 10;

void MoveSpill(std::vector<Point>* points) {
  struct Group {
    std::vector<int> members;
    double mean_us = 0.0;
  };
  std::map<std::pair<BinKey, BinKey>, Group> groups;  // (follower's bin, predecessor's bin)
  for (size_t i = 0; i < points->size(); ++i) {
    const Point& p = (*points)[i];
    if (p.previous < 0) continue;
    groups[{p.key, (*points)[p.previous].key}].members.push_back(static_cast<int>(i));
  }
  std::erase_if(groups, [](const auto& group) {
    return group.second.members.size() < static_cast<size_t>(kMinSpillCollectives);
  });
  std::map<BinKey, double> least_us;  // per follower bin, the lowest group mean
  for (auto& [key, group] : groups) {
    for (int i : group.members) group.mean_us += (*points)[i].us;
    group.mean_us /= static_cast<double>(group.members.size());
    auto [it, inserted] = least_us.emplace(key.first, group.mean_us);
    if (!inserted) it->second = std::min(it->second, group.mean_us);
  }
  // Every move is reckoned from the times as recorded, then made: a predecessor's time grown
  // by what its successors waited does not count as a wait of its own.
  std::vector<double> moved_us(points->size(), 0.0);
  for (const auto& [key, group] : groups) {
    // Only a larger predecessor's (simulator/README.md: a small one does not spread its ends).
    if (std::get<2>(key.second) <= std::get<2>(key.first)) continue;
    const double floor_us = least_us.at(key.first);
    const double spill_us = (group.mean_us - floor_us) * static_cast<double>(group.members.size());
    double above_us = 0.0;
    for (int i : group.members) above_us += std::max(0.0, (*points)[i].us - floor_us);
    if (spill_us <= 0.0 || above_us <= 0.0) continue;
    for (int i : group.members) {
      moved_us[i] = std::max(0.0, (*points)[i].us - floor_us) * spill_us / above_us;
    }
  }
  for (size_t i = 0; i < points->size(); ++i) {
    if (moved_us[i] <= 0.0) continue;
    (*points)[i].us -= moved_us[i];
    (*points)[(*points)[i].previous].us += moved_us[i];
  }
}

// Adds one trace's collectives and copies to bins. Collectives that ran at once (DDP over
// gloo runs two) or queued count the time each took alone under the replay's rule
// (shared_link.h, SoloTimes, all of a collective's time shared: no network model yet). With
// one in flight, what a collective waited for its predecessor is the predecessor's (MoveSpill).
// Where the trace shows kMinSelfCalibrationCollectives or more collectives that ran after the
// step's compute (ComputePhase::kAlone: the network alone), only those make points: a
// collective that ran beside the compute shares the host's cores with it, and its time says
// when it ran as much as what it moved (the real MLP on 4 ranks over 2 cores: its one 1 MB
// tensor, always sent while backward runs, took 28 ms, 3x the calibration, where its 256 KB
// ones sent after took 2 ms, as the calibration). What running beside the compute costs is the
// replay's comm_contention (trace_calibration.h), fitted from the same trace.
void AddTrace(const Trace& trace, double scale, std::map<BinKey, Bin>* bins,
              int* collectives) {
  const int world = trace.run.topology.world_size();
  std::vector<Point> all;
  std::vector<Point> copies;
  std::map<const CollectiveRecord*, int> point_of;  // each record's point, for its successor
  ForEachSoloCollective(
      trace, [](const CollectiveRecord&) { return 0.0; },
      [&](const CollectiveRecord& c, double comm_us, ComputePhase phase,
          const CollectiveRecord* previous) {
        // The calibration counts an allgather by the bytes each rank sends.
        const int64_t message = c.op == Op::kAllgather ? c.bytes / std::max(1, world) : c.bytes;
        const int bin = message > 0 ? SelfCalibrationBin(static_cast<double>(message)) : 0;
        if (message > 0 && std::isfinite(comm_us) && comm_us > 0.0) {
          const Scope scope =
              c.algorithm == Algorithm::kHierarchical ? Scope::kHierarchical : Scope::kWorld;
          Point p{{static_cast<int>(c.op), static_cast<int>(scope), bin},
                  static_cast<double>(message), comm_us, phase == ComputePhase::kAlone};
          if (previous != nullptr && c.start_us - previous->end_us <= kBackToBackUs) {
            auto it = point_of.find(previous);
            if (it != point_of.end()) p.previous = it->second;
          }
          point_of[&c] = static_cast<int>(all.size());
          all.push_back(p);
        }
        const double copy_us = c.copy_in_end_us - c.start_us;
        if (message >= kMinCopyBytes && std::isfinite(copy_us) && copy_us > 0.0) {
          copies.push_back({{static_cast<int>(Op::kAllreduce), static_cast<int>(Scope::kCopy), bin},
                            static_cast<double>(message), copy_us});
        }
      });
  if (CollectivesInFlight(trace.run) == 1) MoveSpill(&all);
  std::vector<Point> alone;
  for (const Point& p : all) {
    if (p.alone) alone.push_back(p);
  }
  const std::vector<Point>& used =
      alone.size() >= static_cast<size_t>(kMinSelfCalibrationCollectives) ? alone : all;
  const std::vector<Point>* const lists[] = {&used, &copies};
  for (const std::vector<Point>* points : lists) {
    for (const Point& p : *points) {
      Bin& bin = (*bins)[p.key];
      bin.times_us.push_back(p.us * scale);
      bin.bytes.push_back(p.bytes);
    }
  }
  *collectives += static_cast<int>(used.size());
}

// The bins of every trace of the first one's shape, each trace's times times its scale (1
// where scales is empty); *runs lists the runs binned.
std::map<BinKey, Bin> BinTraces(std::span<const Trace* const> traces,
                                std::span<const double> scales, int* collectives,
                                std::string* runs) {
  std::map<BinKey, Bin> bins;
  const RunInfo& first = traces.front()->run;
  for (size_t i = 0; i < traces.size(); ++i) {
    const Trace* trace = traces[i];
    if (!SameJobShape(first, trace->run)) continue;
    AddTrace(*trace, i < scales.size() ? scales[i] : 1.0, &bins, collectives);
    *runs += (runs->empty() ? "" : ", ") + std::to_string(trace->run.id);
  }
  return bins;
}

}  // namespace

int SelfCalibrationBin(double bytes) {
  return static_cast<int>(std::floor(2.0 * std::log2(bytes)));
}

std::vector<CollectiveTail> CollectiveTailsFromTraces(std::span<const Trace* const> traces,
                                                      std::span<const double> scales) {
  std::vector<CollectiveTail> out;
  if (traces.empty()) return out;
  int collectives = 0;
  std::string runs;
  const std::map<BinKey, Bin> bins = BinTraces(traces, scales, &collectives, &runs);
  if (collectives < kMinSelfCalibrationCollectives) return out;
  for (const auto& [key, bin] : bins) {
    if (static_cast<Scope>(std::get<1>(key)) != Scope::kWorld || bin.times_us.empty()) continue;
    CollectiveTail t;
    t.op = static_cast<Op>(std::get<0>(key));
    t.bytes = std::max<int64_t>(1, std::llround(Median(bin.bytes)));
    t.bin = std::get<2>(key);
    t.count = static_cast<int>(bin.times_us.size());
    t.median_us = Median(bin.times_us);
    t.mean_us = Mean(bin.times_us);
    out.push_back(t);
  }
  return out;
}

StatusOr<Calibration> CalibrationFromTraces(std::span<const Trace* const> traces,
                                            std::span<const double> scales) {
  if (traces.empty()) return Status::NotFound("no trace to calibrate from");
  const RunInfo& first = traces.front()->run;
  int collectives = 0;
  std::string runs;
  std::map<BinKey, Bin> bins = BinTraces(traces, scales, &collectives, &runs);
  if (collectives < kMinSelfCalibrationCollectives) {
    return Status::NotFound("run " + runs + " shows " + std::to_string(collectives) +
                            " timed collectives, too few to calibrate from (needs " +
                            std::to_string(kMinSelfCalibrationCollectives) + ")");
  }
  Calibration c;
  c.topology = first.topology;
  c.backend = first.backend;
  c.hardware = "the own collectives of run " + runs + (first.hardware.empty() ? "" : "; ") +
               first.hardware;
  const int world = first.topology.world_size();
  for (auto& [key, bin] : bins) {
    CalibrationPoint p;
    p.op = static_cast<Op>(std::get<0>(key));
    p.scope = static_cast<Scope>(std::get<1>(key));
    p.ranks = p.scope == Scope::kCopy ? 1 : world;
    p.bytes = std::max<int64_t>(1, std::llround(Median(bin.bytes)));
    p.repetitions = static_cast<int>(bin.times_us.size());
    p.min_us = *std::min_element(bin.times_us.begin(), bin.times_us.end());
    p.max_us = *std::max_element(bin.times_us.begin(), bin.times_us.end());
    // The mean, stored where a calibrate stores its median: a step pays the sum of its many
    // collectives, whose expectation is the mean; in a loaded job their times are skewed
    // (scheduling hiccups of milliseconds), and a median would miss what the hiccups add.
    p.median_us = Mean(bin.times_us);
    c.points.push_back(p);
  }
  return c;
}

Calibration MergeCalibrations(const Calibration& measured, const Calibration& self) {
  // The byte range the self-calibration covers per curve, widened by one bin.
  std::map<std::tuple<int, int, int>, std::pair<int64_t, int64_t>> covered;
  for (const CalibrationPoint& p : self.points) {
    auto key = std::make_tuple(static_cast<int>(p.op), static_cast<int>(p.scope), p.ranks);
    auto [it, inserted] = covered.emplace(key, std::make_pair(p.bytes, p.bytes));
    if (!inserted) {
      it->second.first = std::min(it->second.first, p.bytes);
      it->second.second = std::max(it->second.second, p.bytes);
    }
  }
  Calibration merged = measured;
  merged.points.clear();
  for (const CalibrationPoint& p : measured.points) {
    auto it = covered.find({static_cast<int>(p.op), static_cast<int>(p.scope), p.ranks});
    const bool inside = it != covered.end() &&
                        p.bytes >= it->second.first / std::sqrt(2.0) &&
                        p.bytes <= it->second.second * std::sqrt(2.0);
    if (!inside) merged.points.push_back(p);
  }
  merged.points.insert(merged.points.end(), self.points.begin(), self.points.end());
  return merged;
}

CalibrationAgreement CompareCalibrations(const Calibration& self, const NetworkModel& measured) {
  std::vector<double> ratios;
  double self_us = 0.0;
  double model_total_us = 0.0;
  const int world = measured.topology().world_size();
  for (const CalibrationPoint& p : self.points) {
    if (p.scope != Scope::kWorld) continue;
    const int64_t fusion_bytes = p.op == Op::kAllgather ? p.bytes * world : p.bytes;
    const double model_us = measured.FlatUs(p.op, fusion_bytes);
    if (model_us <= 0.0) continue;
    ratios.push_back(p.median_us / model_us);
    self_us += p.median_us;
    model_total_us += model_us;
  }
  CalibrationAgreement a;
  if (ratios.empty()) return a;
  a.points = static_cast<int>(ratios.size());
  a.min_ratio = *std::min_element(ratios.begin(), ratios.end());
  a.max_ratio = *std::max_element(ratios.begin(), ratios.end());
  a.time_ratio = self_us / model_total_us;
  return a;
}

}  // namespace autotune::sim
