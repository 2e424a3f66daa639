// WriteHorovodTimeline: a Trace as the Chrome-trace JSON Horovod writes under
// HOROVOD_TIMELINE (with HOROVOD_TIMELINE_MARK_CYCLES), event for event in its vocabulary:
// pid 0 carries the start time, every tensor is a process "allreduce.NAME" whose
// process_name/process_sort_index metadata precede its first event; per step and tensor a
// NEGOTIATE_* span holding one zero-length "X" tick per rank ("0".."N-1"), then the op span
// (ALLREDUCE/ALLGATHER) enclosing MEMCPY_IN_FUSION_BUFFER, the library's activity
// (MPI_ALLREDUCE, NCCL_ALLREDUCE, ...) and MEMCPY_OUT_FUSION_BUFFER, its closing "E" carrying
// dtype and shape; a global "i" CYCLE_START per recorded cycle. Timestamps are whole
// microseconds from the timeline's start, as Horovod writes them.
//
// Time mapping: step k starts where step k-1 ended (its start plus its step_ms, or its last
// event when that is later); a trace time t of step k is written at start_k + t. Every
// member of a fused collective gets the collective's phases (as in Horovod, each fused
// tensor's process shows the whole fused operation). Two collectives of a step never start
// in the same microsecond (a reader groups tensors by their op's start), and per process the
// timestamps never go back: where a recorded time would break either (rounding, clocks of
// other ranks), it is moved forward by the least amount that keeps them.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <ctime>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "formats/horovod_timeline.h"

namespace autotune {
namespace {

using Event = nlohmann::ordered_json;

// The names Horovod gives the phases of one op.
struct OpNames {
  std::string negotiate;  // NEGOTIATE_ALLREDUCE
  std::string op;         // ALLREDUCE
  std::string activity;   // MPI_ALLREDUCE / NCCL_ALLREDUCE
};

OpNames NamesOf(Op op, BackendKind backend) {
  const std::string upper = op == Op::kAllgather ? "ALLGATHER" : "ALLREDUCE";
  const std::string library = backend == BackendKind::kNccl ? "NCCL_" : "MPI_";
  return {"NEGOTIATE_" + upper, upper, library + upper};
}

// "[1000, 2048]", as Horovod's TensorShape::DebugString; "[]" for a scalar.
std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

// created_at ("2026-11-23T17:59:37Z") in microseconds since the epoch; 0 when unparsable.
int64_t EpochMicros(const std::string& created_at) {
  std::tm tm = {};
  if (strptime(created_at.c_str(), "%Y-%m-%dT%H:%M:%S", &tm) == nullptr) return 0;
  return static_cast<int64_t>(timegm(&tm)) * 1000000;
}

// A collective's phases on the timeline's clock (microseconds from its start).
struct Phases {
  double start = 0.0;
  double copy_in_end = 0.0;
  double comm_end = 0.0;
  double end = 0.0;
  bool fused = false;  // more than one member, or copies that took time: show the copies
};

// Events in the order they are produced, sorted by time once at the end (stable, so events
// of one process at the same microsecond keep their order).
class TimelineBuilder {
 public:
  explicit TimelineBuilder(const Trace& trace)
      : trace_(trace), last_ts_(trace.run.workload.tensors.size() + 1, 0) {}

  // Writes one step starting at offset_us; returns where the next step starts.
  double AddStep(const StepTrace& step, double offset_us);
  std::string Finish() const;

 private:
  std::vector<Phases> CollectivePhases(const StepTrace& step, double offset_us);
  void AddNegotiation(const StepTrace& step, int tensor, const CollectiveRecord* first,
                      double offset_us, double latest_us,
                      const std::vector<const TensorEvent*>& ranks);
  void AddOp(int tensor, const CollectiveRecord& c, const Phases& p);
  // Time-stamps an event of process pid: whole microseconds, never before its last event.
  int64_t Stamp(int pid, double us);
  void Push(int64_t ts, Event event) { events_.push_back({ts, std::move(event)}); }
  void Begin(int pid, const std::string& name, double us);
  void End(int pid, double us, Event args = nullptr);

  struct Timed {
    int64_t ts;
    Event event;
  };
  const Trace& trace_;
  std::vector<int64_t> last_ts_;  // per pid (tensor + 1); pid 0 holds no timed events
  std::vector<Timed> events_;
  int64_t last_ts_overall_ = 0;
  double last_collective_start_ = -1.0;  // whole microseconds
};

int64_t TimelineBuilder::Stamp(int pid, double us) {
  const int64_t ts = std::max<int64_t>(std::llround(std::max(us, 0.0)), last_ts_[pid]);
  last_ts_[pid] = ts;
  last_ts_overall_ = std::max(last_ts_overall_, ts);
  return ts;
}

void TimelineBuilder::Begin(int pid, const std::string& name, double us) {
  const int64_t ts = Stamp(pid, us);
  Push(ts, Event{{"ph", "B"}, {"name", name}, {"ts", ts}, {"pid", pid}});
}

void TimelineBuilder::End(int pid, double us, Event args) {
  const int64_t ts = Stamp(pid, us);
  Event e{{"ph", "E"}, {"ts", ts}, {"pid", pid}};
  if (!args.is_null()) e["args"] = std::move(args);
  Push(ts, std::move(e));
}

std::vector<Phases> TimelineBuilder::CollectivePhases(const StepTrace& step, double offset_us) {
  std::vector<Phases> phases(step.collectives.size());
  std::vector<size_t> order(step.collectives.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return step.collectives[a].seq < step.collectives[b].seq;
  });
  for (size_t i : order) {
    const CollectiveRecord& c = step.collectives[i];
    Phases& p = phases[i];
    // Whole microseconds apart after rounding: a reader tells collectives apart by start.
    p.start =
        std::max(std::round(offset_us + std::max(c.start_us, 0.0)), last_collective_start_ + 1.0);
    p.copy_in_end = std::max(offset_us + c.copy_in_end_us, p.start);
    p.comm_end = std::max(offset_us + c.comm_end_us, p.copy_in_end);
    p.end = std::max(offset_us + c.end_us, p.comm_end);
    p.fused = c.tensors.size() > 1 || c.copy_in_end_us > c.start_us || c.end_us > c.comm_end_us;
    last_collective_start_ = p.start;
  }
  return phases;
}

// NEGOTIATE_* from rank 0's readiness to the negotiation's end (the latest rank's readiness,
// or the end of the negotiation of the cycle that launched `first`, the first collective
// holding the tensor, when later), no later than latest_us (that op's start); one tick per
// rank at its readiness (rank 0's where a rank has no event).
void TimelineBuilder::AddNegotiation(const StepTrace& step, int tensor,
                                     const CollectiveRecord* first, double offset_us,
                                     double latest_us,
                                     const std::vector<const TensorEvent*>& ranks) {
  const int pid = tensor + 1;
  const TensorEvent* own = ranks[0];
  for (const TensorEvent* e : ranks) {
    if (own == nullptr && e != nullptr) own = e;
  }
  const double begin =
      std::min(own != nullptr ? offset_us + std::max(own->ready_us, 0.0) : latest_us, latest_us);
  std::vector<std::pair<double, int>> ticks;
  double end = begin;
  for (size_t r = 0; r < ranks.size(); ++r) {
    const TensorEvent* e = ranks[r] != nullptr ? ranks[r] : own;
    const double ready = e != nullptr ? offset_us + e->ready_us : begin;
    ticks.push_back({std::clamp(ready, begin, latest_us), static_cast<int>(r)});
    end = std::max(end, ready);
  }
  for (const CycleRecord& cycle : step.cycles) {
    if (first != nullptr && cycle.cycle == first->cycle) {
      end = std::max(end, offset_us + cycle.negotiate_end_us);
    }
  }
  end = std::clamp(end, begin, latest_us);
  std::stable_sort(ticks.begin(), ticks.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  Begin(pid, NamesOf(trace_.run.workload.tensors[tensor].op, trace_.run.backend).negotiate, begin);
  for (const auto& [us, rank] : ticks) {
    const int64_t ts = Stamp(pid, std::min(us, end));
    Push(ts,
         Event{{"ph", "X"}, {"name", std::to_string(rank)}, {"ts", ts}, {"pid", pid}, {"dur", 0}});
  }
  End(pid, end);
}

void TimelineBuilder::AddOp(int tensor, const CollectiveRecord& c, const Phases& p) {
  const int pid = tensor + 1;
  const TensorSpec& spec = trace_.run.workload.tensors[tensor];
  const OpNames names = NamesOf(c.op, trace_.run.backend);
  Begin(pid, names.op, p.start);
  if (p.fused) {
    Begin(pid, "MEMCPY_IN_FUSION_BUFFER", p.start);
    End(pid, p.copy_in_end);
  }
  Begin(pid, names.activity, p.copy_in_end);
  End(pid, p.comm_end);
  if (p.fused) {
    Begin(pid, "MEMCPY_OUT_FUSION_BUFFER", p.comm_end);
    End(pid, p.end);
  }
  End(pid, p.end, Event{{"dtype", DTypeName(spec.dtype)}, {"shape", ShapeText(spec.shape)}});
}

double TimelineBuilder::AddStep(const StepTrace& step, double offset_us) {
  const int tensors = static_cast<int>(trace_.run.workload.tensors.size());
  const int world = std::max(1, trace_.run.topology.world_size());
  for (const CycleRecord& cycle : step.cycles) {
    const int64_t ts = std::llround(std::max(offset_us + cycle.start_us, 0.0));
    last_ts_overall_ = std::max(last_ts_overall_, ts);
    Push(ts, Event{{"ph", "i"}, {"name", "CYCLE_START"}, {"ts", ts}, {"s", "g"}});
  }
  // Per tensor: its events on every rank, and the collectives it is a member of.
  std::vector<std::vector<const TensorEvent*>> ranks(tensors,
                                                     std::vector<const TensorEvent*>(world));
  std::vector<bool> seen(tensors, false);
  for (const TensorEvent& e : step.tensors) {
    if (e.tensor < 0 || e.tensor >= tensors || e.rank < 0 || e.rank >= world) continue;
    ranks[e.tensor][e.rank] = &e;
    seen[e.tensor] = true;
  }
  std::vector<std::vector<size_t>> member_of(tensors);
  for (size_t i = 0; i < step.collectives.size(); ++i) {
    for (int t : step.collectives[i].tensors) {
      if (t >= 0 && t < tensors) member_of[t].push_back(i);
    }
  }
  const std::vector<Phases> phases = CollectivePhases(step, offset_us);
  for (int t = 0; t < tensors; ++t) {
    if (!seen[t] && member_of[t].empty()) continue;
    std::sort(member_of[t].begin(), member_of[t].end(),
              [&](size_t a, size_t b) { return phases[a].start < phases[b].start; });
    const CollectiveRecord* first =
        member_of[t].empty() ? nullptr : &step.collectives[member_of[t][0]];
    const double latest =
        first == nullptr ? offset_us + step.step_ms * 1000.0 : phases[member_of[t][0]].start;
    AddNegotiation(step, t, first, offset_us, latest, ranks[t]);
    for (size_t i : member_of[t]) AddOp(t, step.collectives[i], phases[i]);
  }
  return std::max(offset_us + step.step_ms * 1000.0, static_cast<double>(last_ts_overall_));
}

std::string TimelineBuilder::Finish() const {
  std::vector<const Timed*> sorted;
  sorted.reserve(events_.size());
  for (const Timed& t : events_) sorted.push_back(&t);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Timed* a, const Timed* b) { return a->ts < b->ts; });
  const std::vector<TensorSpec>& specs = trace_.run.workload.tensors;
  std::string out = "[\n";
  auto append = [&out](const Event& e) {
    if (out.size() > 2) out += ",\n";
    out += e.dump();
  };
  auto metadata = [&](int pid, Event name_args) {
    append(Event{{"name", "process_name"}, {"ph", "M"}, {"pid", pid}, {"args", name_args}});
    append(Event{{"name", "process_sort_index"},
                 {"ph", "M"},
                 {"pid", pid},
                 {"args", {{"sort_index", pid}}}});
  };
  auto process_name = [&](int pid) {
    const TensorSpec& spec = specs[pid - 1];
    return Event{{"name", std::string(OpName(spec.op)) + "." + spec.name}};
  };
  metadata(0, Event{{"start_time_since_epoch_in_micros", EpochMicros(trace_.run.created_at)}});
  std::vector<bool> named(specs.size() + 1, false);
  for (const Timed* t : sorted) {
    const auto pid = t->event.find("pid");
    if (pid != t->event.end() && !named[pid->get<int>()]) {
      named[pid->get<int>()] = true;
      metadata(pid->get<int>(), process_name(pid->get<int>()));
    }
    append(t->event);
  }
  // Tensors without events in any step still get their process.
  for (size_t pid = 1; pid < named.size(); ++pid) {
    if (!named[pid]) metadata(static_cast<int>(pid), process_name(static_cast<int>(pid)));
  }
  return out + "\n]\n";
}

}  // namespace

std::string WriteHorovodTimeline(const Trace& trace) {
  TimelineBuilder builder(trace);
  double offset_us = 0.0;
  for (const StepTrace& step : trace.steps) offset_us = builder.AddStep(step, offset_us);
  return builder.Finish();
}

}  // namespace autotune
