#include "simulator/shared_link.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "simulator/prepared_trace.h"
#include "traces/step_schedule.h"

namespace autotune::sim {
namespace {

// Remaining work below this is done (microseconds of a part run alone).
constexpr double kEpsilonUs = 1e-9;

enum class Part { kBefore, kShared, kAfter, kDone };

struct Flight {
  int job = 0;
  Part part = Part::kBefore;
  double remaining_us = 0.0;  // of the current part, at the part's own (unshared) rate
};

// Moves f past every part with no work left at time t.
void Advance(std::span<const LinkJob> jobs, double t, Flight* f, std::vector<LinkRun>* runs) {
  LinkRun& r = (*runs)[f->job];
  while (f->part != Part::kDone && f->remaining_us <= kEpsilonUs) {
    switch (f->part) {
      case Part::kBefore:
        r.shared_start_us = t;
        f->part = Part::kShared;
        f->remaining_us = jobs[f->job].shared_us;
        break;
      case Part::kShared:
        r.shared_end_us = t;
        f->part = Part::kAfter;
        f->remaining_us = jobs[f->job].after_us;
        break;
      case Part::kAfter:
        r.end_us = t;
        f->part = Part::kDone;
        break;
      case Part::kDone:
        break;
    }
  }
}

}  // namespace

std::vector<LinkRun> ShareLink(std::span<const LinkJob> jobs, int slots,
                               const LinkSlowdown& slowdown) {
  const bool slows = slowdown.factor > 1.0;
  slots = std::max(1, slots);
  const int n = static_cast<int>(jobs.size());
  std::vector<LinkRun> runs(n);
  std::vector<Flight> active;
  active.reserve(slots);
  double t = n > 0 ? jobs[0].earliest_us : 0.0;
  int next = 0;
  while (next < n || !active.empty()) {
    if (active.empty()) t = std::max(t, jobs[next].earliest_us);
    // Admit the launches that have arrived while a slot is free.
    while (next < n && static_cast<int>(active.size()) < slots && jobs[next].earliest_us <= t) {
      runs[next].start_us = t;
      Flight f{next, Part::kBefore, jobs[next].before_us};
      Advance(jobs, t, &f, &runs);
      if (f.part != Part::kDone) active.push_back(f);
      ++next;
    }
    if (active.empty()) continue;
    // The next event: a part ends, or a launch arrives at a free slot.
    int sharing = 0;
    for (const Flight& f : active) sharing += f.part == Part::kShared;
    const bool slow = slows && t < slowdown.slow_until_us;
    auto rate_of = [&](const Flight& f) {
      const double speed = slow && f.part != Part::kAfter ? 1.0 / slowdown.factor : 1.0;
      return f.part == Part::kShared ? speed / sharing : speed;
    };
    double event = std::numeric_limits<double>::infinity();
    if (next < n && static_cast<int>(active.size()) < slots) event = jobs[next].earliest_us;
    if (slow) event = std::min(event, slowdown.slow_until_us);
    for (const Flight& f : active) event = std::min(event, t + f.remaining_us / rate_of(f));
    const double dt = event - t;
    for (Flight& f : active) f.remaining_us -= dt * rate_of(f);
    t = event;
    for (Flight& f : active) Advance(jobs, t, &f, &runs);
    active.erase(std::remove_if(active.begin(), active.end(),
                                [](const Flight& f) { return f.part == Part::kDone; }),
                 active.end());
  }
  return runs;
}

std::vector<double> SoloTimes(std::span<const RecordedFlight> flights, int slots) {
  slots = std::max(1, slots);
  const int n = static_cast<int>(flights.size());
  // Each collective's start (a slot free) and the start of its shared part.
  std::vector<double> start(n), shared_start(n);
  std::vector<double> earlier_ends;
  for (int i = 0; i < n; ++i) {
    double s = flights[i].launch_us;
    if (static_cast<int>(earlier_ends.size()) >= slots) {
      std::vector<double> ends = earlier_ends;
      std::nth_element(ends.begin(), ends.begin() + (slots - 1), ends.end(), std::greater<>());
      s = std::max(s, ends[slots - 1]);
    }
    start[i] = s;
    shared_start[i] = std::min(s + std::max(0.0, flights[i].fixed_us), flights[i].end_us);
    earlier_ends.push_back(flights[i].end_us);
  }
  // Sweep the boundaries: between two, every collective in its shared part gets
  // 1/m of it.
  std::vector<double> cuts;
  for (int i = 0; i < n; ++i) {
    if (flights[i].end_us <= shared_start[i]) continue;
    cuts.push_back(shared_start[i]);
    cuts.push_back(flights[i].end_us);
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  std::vector<double> solo(n, 0.0);
  for (int i = 0; i < n; ++i) {
    if (flights[i].end_us > start[i]) solo[i] = shared_start[i] - start[i];
  }
  for (size_t k = 0; k + 1 < cuts.size(); ++k) {
    const double a = cuts[k], b = cuts[k + 1];
    int m = 0;
    for (int i = 0; i < n; ++i) m += shared_start[i] <= a && flights[i].end_us >= b;
    if (m == 0) continue;
    for (int i = 0; i < n; ++i) {
      if (shared_start[i] <= a && flights[i].end_us >= b) solo[i] += (b - a) / m;
    }
  }
  return solo;
}

double FixedPartUs(const NetworkModel& network, Op op, Algorithm algorithm, int64_t fusion_bytes) {
  if (algorithm == Algorithm::kHierarchical) return 0.0;
  const int world = network.topology().world_size();
  const double fixed = AlphaBetaCost(op, world, network.params().at(op, Level::kWorld)).fixed_us;
  return std::clamp(fixed, 0.0, network.CollectiveUs(op, algorithm, fusion_bytes));
}

int CollectivesInFlight(const RunInfo& run) {
  return MakeRunSchedule(run, run.knobs, run.topology)->max_in_flight();
}

std::vector<const CollectiveRecord*> RankCollectives(const StepTrace& step, int rank) {
  std::vector<const CollectiveRecord*> out;
  for (const CollectiveRecord& c : step.collectives) {
    if (c.rank == rank) out.push_back(&c);
  }
  std::stable_sort(
      out.begin(), out.end(), [](const CollectiveRecord* a, const CollectiveRecord* b) {
        return a->start_us != b->start_us ? a->start_us < b->start_us : a->seq < b->seq;
      });
  return out;
}

std::vector<int> CollectiveRanks(const StepTrace& step) {
  std::set<int> ranks;
  for (const CollectiveRecord& c : step.collectives) ranks.insert(c.rank);
  return {ranks.begin(), ranks.end()};
}

void ForEachSoloCollective(const Trace& trace,
                           const std::function<double(const CollectiveRecord&)>& fixed_us,
                           const SoloVisit& visit) {
  const int slots = CollectivesInFlight(trace.run);
  std::vector<RecordedFlight> flights;
  for (const StepTrace& step : trace.steps) {
    const double compute_end_us = ComputeEndUs(trace.run, step);
    auto phase_of = [&](const CollectiveRecord& c) {
      if (c.copy_in_end_us >= compute_end_us) return ComputePhase::kAlone;
      return c.comm_end_us <= compute_end_us ? ComputePhase::kBeside : ComputePhase::kAcross;
    };
    for (int rank : CollectiveRanks(step)) {
      const std::vector<const CollectiveRecord*> records = RankCollectives(step, rank);
      flights.clear();
      for (const CollectiveRecord* c : records) {
        flights.push_back({c->copy_in_end_us, c->comm_end_us, fixed_us(*c)});
      }
      const std::vector<double> solo = SoloTimes(flights, slots);
      for (size_t i = 0; i < records.size(); ++i) {
        ComputePhase phase = phase_of(*records[i]);
        // With one in flight, records that overlap were queued: SoloTimes takes the wait off
        // exactly (its time from the previous one's end), so the time alone is measured.
        if (phase == ComputePhase::kAlone && slots > 1) {
          const double from = records[i]->copy_in_end_us;
          const double to = records[i]->comm_end_us;
          double beside_another_us = 0.0;
          for (size_t j = 0; j < records.size(); ++j) {
            if (j == i) continue;
            beside_another_us += std::max(
                0.0, std::min(to, records[j]->comm_end_us) -
                         std::max(from, records[j]->copy_in_end_us));
          }
          if (beside_another_us > 0.5 * (to - from)) phase = ComputePhase::kShared;
        }
        visit(*records[i], solo[i], phase, i > 0 ? records[i - 1] : nullptr);
      }
    }
  }
}

}  // namespace autotune::sim
