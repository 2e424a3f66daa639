// Horovod timeline import: the events read by formats/horovod_timeline_events.cc mapped onto a
// Trace as formats/horovod_timeline.h describes.
#include "formats/horovod_timeline.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

#include "formats/horovod_ready_log.h"
#include "formats/horovod_timeline_events.h"
#include "traces/files.h"
#include "traces/fusion_policy.h"
#include "traces/score.h"

namespace autotune {
namespace {

using timeline_internal::Occurrence;
using timeline_internal::Process;
using timeline_internal::ProcessKind;
using timeline_internal::TimelineEvents;

// An import makes one TensorEvent (24 bytes) per tensor, rank and kept step: at most this
// many (about 800 MB), so that a small file naming a rank tick of 65535 cannot take
// gigabytes. A real job above it is imported in parts with max_steps (--max-steps).
constexpr int64_t kMaxImportedTensorEvents = int64_t{1} << 25;
// Ranks of an imported job at most: the largest rank a tick may name is one less.
constexpr int64_t kMaxImportedRanks = int64_t{1} << 16;

// Everything the per-step builders share.
struct Import {
  const ImportOptions* options = nullptr;
  const TimelineEvents* events = nullptr;
  std::vector<const Process*> tensors;  // workload order once MakeWorkload ran
  int steps = 0;                        // complete steps in the file, warm-up included
  std::vector<double> step_start_us;    // per step, in the timeline's microseconds
  std::vector<double> step_end_us;
  Topology topology;
  // The ready log, where given, and each tensor's index in it (tensors it does not name are
  // absent).
  const HorovodReadyLog* ready = nullptr;
  std::unordered_map<const Process*, int> ready_index;
  Workload workload;
  BackendKind backend = BackendKind::kMpi;
};

bool IsReduction(const Process& p) {
  return p.kind == ProcessKind::kAllreduce || p.kind == ProcessKind::kAllgather;
}

int CompletePrefix(const Process& p) {
  int n = 0;
  while (n < static_cast<int>(p.occurrences.size()) && p.occurrences[n].complete()) ++n;
  return n;
}

// The tensors reduced in every step: allreduce/allgather processes that occur as often as
// the most frequent one, or once less (a cut-off file loses part of its last step), when
// that one recurs. Sets in->steps to the steps complete for all of them.
Status SelectRecurring(Import* in) {
  const std::string& source = in->options->source;
  int top = 0;
  for (const auto& [pid, p] : in->events->processes) {
    if (IsReduction(p)) top = std::max(top, static_cast<int>(p.occurrences.size()));
  }
  for (const auto& [pid, p] : in->events->processes) {
    const int n = static_cast<int>(p.occurrences.size());
    if (IsReduction(p) && top >= 2 && n >= std::max(1, top - 1)) in->tensors.push_back(&p);
  }
  if (in->tensors.empty()) {
    return Status::InvalidArgument(source + ": no recurring allreduce/allgather tensors");
  }
  if (in->tensors.size() > kMaxWorkloadTensors) {
    return Status::InvalidArgument(source + ": " + std::to_string(in->tensors.size()) +
                                   " recurring tensors, more than the " +
                                   std::to_string(kMaxWorkloadTensors) + " a workload may have");
  }
  std::sort(in->tensors.begin(), in->tensors.end(),
            [](const Process* a, const Process* b) { return a->order < b->order; });
  in->steps = top;
  for (const Process* p : in->tensors) in->steps = std::min(in->steps, CompletePrefix(*p));
  const int warmup = in->options->warmup_steps;
  if (warmup < 0) return Status::InvalidArgument(source + ": warm-up steps must be >= 0");
  if (in->steps <= warmup) {
    return Status::InvalidArgument(source + ": " + std::to_string(in->steps) +
                                   " complete steps, none left after " + std::to_string(warmup) +
                                   " warm-up steps");
  }
  return Status::Ok();
}

// The given topology, or one node of every rank the ticks name (the missing factor of a
// half-given one); a tick naming a rank outside it is an error at that event.
Status ResolveTopology(Import* in) {
  const TimelineEvents& ev = *in->events;
  const std::string& source = in->options->source;
  Topology t = in->options->topology;
  if (int64_t{std::max(t.nodes, 1)} * std::max(t.ranks_per_node, 1) > kMaxImportedRanks) {
    return Status::InvalidArgument(source + ": topology " + t.key() + " has more than " +
                                   std::to_string(kMaxImportedRanks) + " ranks");
  }
  const int ticked = ev.max_rank_tick + 1;
  if (t.nodes <= 0 || t.ranks_per_node <= 0) {
    if (ticked == 0) {
      return Status::InvalidArgument(source +
                                     ": no rank ticks to count the ranks by; give "
                                     "the nodes and ranks per node");
    }
    const int given = std::max(t.nodes, t.ranks_per_node);
    if (given > 0 && ticked % given != 0) {
      return Status::InvalidArgument(source + ": the rank ticks name " + std::to_string(ticked) +
                                     " ranks, not a multiple of " + std::to_string(given));
    }
    if (t.nodes > 0) {
      t.ranks_per_node = ticked / t.nodes;
    } else if (t.ranks_per_node > 0) {
      t.nodes = ticked / t.ranks_per_node;
    } else {
      t.nodes = 1;
      t.ranks_per_node = ticked;
    }
  }
  if (ticked > 0 && ticked < t.world_size()) {
    return Status::InvalidArgument(source + ": the rank ticks name " + std::to_string(ticked) +
                                   " ranks, but --nodes x --ranks-per-node is " + t.key() + " = " +
                                   std::to_string(t.world_size()) + " ranks");
  }
  if (ticked > t.world_size()) {
    return Status::InvalidArgument(source + ": event " + std::to_string(ev.max_rank_tick_event) +
                                   ": rank tick " + std::to_string(ev.max_rank_tick) +
                                   " outside the " + t.key() + " topology");
  }
  in->topology = t;
  return Status::Ok();
}

// Steps end when their last collective ended; each starts where the previous one ended, the
// first where the latest op before its first negotiation ended (the file's start without).
void FindStepBounds(Import* in) {
  for (int k = 0; k < in->steps; ++k) {
    double end = 0.0;
    for (const Process* p : in->tensors) end = std::max(end, p->occurrences[k].op_end_us);
    in->step_end_us.push_back(end);
  }
  double first_negotiation = in->step_end_us[0];
  for (const Process* p : in->tensors) {
    first_negotiation = std::min(first_negotiation, p->occurrences[0].negotiate_start_us);
  }
  double start = in->events->first_ts_us;
  for (const auto& [pid, p] : in->events->processes) {
    for (const Occurrence& o : p.occurrences) {
      if (o.complete() && o.op_end_us <= first_negotiation) start = std::max(start, o.op_end_us);
    }
  }
  in->step_start_us.push_back(std::min(start, first_negotiation));
  for (int k = 1; k < in->steps; ++k) in->step_start_us.push_back(in->step_end_us[k - 1]);
}

// Rank `rank`'s ready time of tensor p in step k from the ready log, in the timeline's
// microseconds, into *us; false where the log has none.
bool LoggedReadyUs(const Import& in, const Process* p, int k, int rank, double* us) {
  if (in.ready == nullptr) return false;
  const auto it = in.ready_index.find(p);
  if (it == in.ready_index.end()) return false;
  const double r = in.ready->ready_us[rank][k][it->second];
  if (r < 0.0) return false;
  *us = in.ready->step_start_epoch_us[rank][k] - in.events->start_epoch_us + r;
  return true;
}

// Rank 0's ready time as the timeline reads it: its tick where the negotiation went through
// the coordinator, else the negotiation's start (with the response cache, the first cycle in
// which any rank had offered the tensor).
double TimelineRank0ReadyUs(const Occurrence& o) {
  return !o.rank_ready_us.empty() && o.rank_ready_us[0] >= 0.0 ? o.rank_ready_us[0]
                                                               : o.negotiate_start_us;
}

// Another rank's as the timeline reads it: its tick, else the start of the cycle in which the
// negotiation ended (every rank had offered it by then), else the negotiation's end.
double TimelineRankReadyUs(const Occurrence& o, int rank, const std::vector<double>& cycles) {
  if (rank == 0) return TimelineRank0ReadyUs(o);
  if (rank < static_cast<int>(o.rank_ready_us.size()) && o.rank_ready_us[rank] >= 0.0) {
    return o.rank_ready_us[rank];
  }
  auto after = std::upper_bound(cycles.begin(), cycles.end(), o.negotiate_end_us);
  return after == cycles.begin() ? o.negotiate_end_us : *(after - 1);
}

// A rank's ready time of tensor p in step k: the ready log's where it has one, else the
// timeline's reading.
double RankReadyUs(const Import& in, const Process* p, int k, int rank) {
  double logged = 0.0;
  return LoggedReadyUs(in, p, k, rank, &logged)
             ? logged
             : TimelineRankReadyUs(p->occurrences[k], rank, in.events->cycle_starts_us);
}

// How far a logged ready time may lie outside the window the timeline allows it before the two
// clocks are taken not to line up: after the end of the tensor's negotiation (which no rank's
// offer can follow), or before its previous step's allreduce began on rank 0 (no rank's
// allreduce of it, which its next backward pass waits for, ends before rank 0's begins) or, in
// the first step, before the timeline began. The recorder's hook runs just before Horovod's
// own and the clocks of one machine agree; ranks on other machines read their own wall clock.
constexpr double kReadyLogSlackUs = 2000.0;

// Puts the ready log on the timeline: which tensors it names, and that it covers the
// timeline's ranks and steps on a clock that lines up with the timeline's.
Status AttachReadyLog(const HorovodReadyLog& log, Import* in) {
  const std::string& source = in->options->ready_log;
  if (in->events->start_epoch_us < 0.0) {
    return Status::InvalidArgument(in->options->source +
                                   ": no start_time_since_epoch_in_micros (pid 0's metadata) to "
                                   "put the ready log on the timeline's clock");
  }
  const int world = in->topology.world_size();
  if (log.ranks() != world) {
    return Status::InvalidArgument(source + ": " + std::to_string(log.ranks()) +
                                   " ranks, where the timeline's job has " +
                                   std::to_string(world));
  }
  for (int r = 0; r < world; ++r) {
    if (static_cast<int>(log.ready_us[r].size()) < in->steps) {
      return Status::InvalidArgument(source + ": rank " + std::to_string(r) + " logs " +
                                     std::to_string(log.ready_us[r].size()) +
                                     " steps, fewer than the timeline's " +
                                     std::to_string(in->steps));
    }
  }
  std::unordered_map<std::string, int> index;
  for (size_t i = 0; i < log.tensors.size(); ++i) {
    index.emplace(log.tensors[i], static_cast<int>(i));
  }
  for (const Process* p : in->tensors) {
    const char* prefix = p->kind == ProcessKind::kAllgather ? "allgather." : "allreduce.";
    const auto it = index.find(prefix + p->name);
    if (it != index.end()) in->ready_index.emplace(p, it->second);
  }
  if (in->ready_index.empty()) {
    return Status::InvalidArgument(source + ": names none of the timeline's recurring tensors");
  }
  in->ready = &log;
  for (const Process* p : in->tensors) {
    const auto logged = in->ready_index.find(p);
    if (logged == in->ready_index.end()) continue;
    for (int k = 0; k < in->steps; ++k) {
      const double earliest = k > 0 ? p->occurrences[k - 1].op_start_us : 0.0;
      for (int r = 0; r < world; ++r) {
        double us = 0.0;
        if (!LoggedReadyUs(*in, p, k, r, &us)) continue;
        const double late = us - p->occurrences[k].negotiate_end_us;
        const double early = earliest - us;
        if (late > kReadyLogSlackUs || early > kReadyLogSlackUs) {
          char ms[32];
          std::snprintf(ms, sizeof(ms), "%.1f", std::max(late, early) / 1000.0);
          return Status::InvalidArgument(
              source + ": rank " + std::to_string(r) + " logs tensor " +
              log.tensors[logged->second] + " of step " + std::to_string(k) + " ready " + ms +
              (late > kReadyLogSlackUs
                   ? " ms after the timeline's ranks had all offered it"
                   : k > 0 ? " ms before its previous step's allreduce began"
                           : " ms before the timeline began") +
              ": the log's clock does not line up with the timeline's (another run's log, or "
              "ranks on machines whose clocks differ)");
        }
      }
    }
  }
  return Status::Ok();
}

// How much earlier than the timeline's reading the log put the ranks' ready times, over the
// kept steps of the logged tensors.
void SummarizeReadyLog(const Import& in, int end, ImportSummary* summary) {
  summary->ready_logged_tensors = static_cast<int>(in.ready_index.size());
  double sum = 0.0, most = 0.0;
  int64_t cells = 0;
  for (const Process* p : in.tensors) {
    for (int k = in.options->warmup_steps; k < end; ++k) {
      for (int r = 0; r < in.topology.world_size(); ++r) {
        double logged = 0.0;
        if (!LoggedReadyUs(in, p, k, r, &logged)) continue;  // the timeline's reading stands
        const double earlier =
            TimelineRankReadyUs(p->occurrences[k], r, in.events->cycle_starts_us) - logged;
        sum += earlier;
        most = std::max(most, earlier);
        ++cells;
      }
    }
  }
  summary->ready_log_mean_earlier_ms = cells > 0 ? sum / static_cast<double>(cells) / 1000.0 : 0.0;
  summary->ready_log_max_earlier_ms = most / 1000.0;
}

Status TensorSpecOf(const Import& in, const Process& p, TensorSpec* t) {
  const std::string& source = in.options->source;
  Status name = ValidateName(p.name);
  if (!name.ok()) {
    return Status::InvalidArgument(source + ": the tensor name of pid " + std::to_string(p.pid) +
                                   " " + name.message());
  }
  if (!p.has_args) {
    return Status::InvalidArgument(source + ": tensor " + p.name +
                                   ": none of its op's closing events carries dtype and shape");
  }
  Status dtype = ParseDType(p.dtype, &t->dtype);
  if (!dtype.ok()) {
    return Status::InvalidArgument(source + ": event " + std::to_string(p.args_event) + ": " +
                                   dtype.message());
  }
  t->name = p.name;
  t->shape = p.shape;
  t->op = p.kind == ProcessKind::kAllgather ? Op::kAllgather : Op::kAllreduce;
  return Status::Ok();
}

// The workload: the recurring tensors in the first kept step's ready order (rank 0), each
// ready at that time from the step's start; in->tensors reordered to match.
Status MakeWorkload(Import* in) {
  const int first = in->options->warmup_steps;
  const double start = in->step_start_us[first];
  std::stable_sort(in->tensors.begin(), in->tensors.end(), [&](const Process* a, const Process* b) {
    return RankReadyUs(*in, a, first, 0) < RankReadyUs(*in, b, first, 0);
  });
  Workload& w = in->workload;
  w.name = in->options->workload_name;
  if (w.name.empty()) {
    const std::string& source = in->options->source;
    const size_t slash = source.find_last_of('/');
    w.name = slash == std::string::npos ? source : source.substr(slash + 1);
    const size_t dot = w.name.find_last_of('.');
    if (dot != std::string::npos && dot > 0) w.name.resize(dot);
  }
  std::map<std::string, int> seen;
  for (const Process* p : in->tensors) {
    TensorSpec t;
    AUTOTUNE_RETURN_IF_ERROR(TensorSpecOf(*in, *p, &t));
    if (seen[t.name]++ > 0) {
      return Status::InvalidArgument(in->options->source + ": tensor " + t.name +
                                     " is both allreduced and allgathered");
    }
    t.ready_ms = std::max(0.0, (RankReadyUs(*in, p, first, 0) - start) / 1000.0);
    w.backward_ms = std::max(w.backward_ms, t.ready_ms);
    w.tensors.push_back(std::move(t));
  }
  return Status::Ok();
}

// Cycle numbering inside one step: cycle 0 starts at the step's first CYCLE_START mark.
class StepCycles {
 public:
  StepCycles(const std::vector<double>& marks, double step_start_us, double step_end_us)
      : marks_(marks),
        base_(std::lower_bound(marks.begin(), marks.end(), step_start_us) - marks.begin()),
        start_us_(step_start_us),
        any_(base_ < marks.size() && marks[base_] <= step_end_us) {}

  bool any() const { return any_; }  // the step has marks
  // The cycle running at time t (0 before the first mark).
  int Of(double t) const {
    const auto after = std::upper_bound(marks_.begin(), marks_.end(), t) - marks_.begin();
    return static_cast<int>(std::max<std::ptrdiff_t>(0, after - 1 - base_));
  }
  double StartUs(int cycle) const {  // from the step's start
    const size_t i = base_ + cycle;
    return i < marks_.size() ? marks_[i] - start_us_ : 0.0;
  }

 private:
  const std::vector<double>& marks_;
  size_t base_;
  double start_us_;
  bool any_;
};

// When the first activity inside the op began (its end without one).
double ActivityStartUs(const Occurrence& o) {
  return o.activity_start_us >= 0.0 ? o.activity_start_us : o.op_end_us;
}

// The step's fused collectives, in start order. Horovod begins the ops of one response's
// tensors one after another (microseconds apart) before any of their activities begins, so
// a tensor whose op begins by the first activity of the collective being formed joins it.
void AddCollectives(const Import& in, int k, const StepCycles& cycles, StepTrace* st) {
  const double s = in.step_start_us[k];
  std::vector<std::pair<double, int>> starts;  // op start, tensor
  for (size_t t = 0; t < in.tensors.size(); ++t) {
    starts.emplace_back(in.tensors[t]->occurrences[k].op_start_us, static_cast<int>(t));
  }
  std::sort(starts.begin(), starts.end());
  const int world = in.topology.world_size();
  for (size_t i = 0; i < starts.size();) {
    CollectiveRecord c;
    c.seq = static_cast<int>(st->collectives.size());
    c.op = in.workload.tensors[starts[i].second].op;
    const bool hierarchical = c.op == Op::kAllreduce ? in.options->knobs.hierarchical_allreduce
                                                     : in.options->knobs.hierarchical_allgather;
    if (hierarchical && in.backend == BackendKind::kNccl) c.algorithm = Algorithm::kHierarchical;
    c.cycle = cycles.Of(starts[i].first);
    c.start_us = starts[i].first - s;
    double activity_us = ActivityStartUs(in.tensors[starts[i].second]->occurrences[k]);
    for (; i < starts.size() && starts[i].first <= activity_us &&
           in.workload.tensors[starts[i].second].op == c.op;
         ++i) {
      const int t = starts[i].second;
      const Occurrence& o = in.tensors[t]->occurrences[k];
      activity_us = std::min(activity_us, ActivityStartUs(o));
      c.tensors.push_back(t);
      c.bytes += FusionBytes(in.workload.tensors[t], world);
      const double comm_start = o.comm_start_us >= 0.0    ? o.comm_start_us
                                : o.copy_in_end_us >= 0.0 ? o.copy_in_end_us
                                                          : o.op_start_us;
      const double comm_end = o.comm_end_us >= 0.0         ? o.comm_end_us
                              : o.copy_out_start_us >= 0.0 ? o.copy_out_start_us
                                                           : o.op_end_us;
      c.copy_in_end_us = std::max(c.copy_in_end_us, comm_start - s);
      c.comm_end_us = std::max(c.comm_end_us, comm_end - s);
      c.end_us = std::max(c.end_us, o.op_end_us - s);
    }
    st->collectives.push_back(std::move(c));
  }
}

// One record per cycle of the step that had work: a tensor offered or agreed, or a
// collective launched in it.
void AddCycles(const Import& in, int k, const StepCycles& cycles, StepTrace* st) {
  if (!cycles.any()) return;
  std::map<int, CycleRecord> records;
  auto record = [&](int cycle) -> CycleRecord& {
    auto [it, added] = records.try_emplace(cycle);
    if (added) {
      it->second.cycle = cycle;
      it->second.start_us = it->second.negotiate_end_us = cycles.StartUs(cycle);
    }
    return it->second;
  };
  const double s = in.step_start_us[k];
  for (const Process* p : in.tensors) {
    const Occurrence& o = p->occurrences[k];
    ++record(cycles.Of(o.negotiate_start_us)).submitted;
    CycleRecord& agreed = record(cycles.Of(o.negotiate_end_us));
    ++agreed.responses;
    if (o.rank_ready_us.empty()) ++agreed.cache_hits;
    agreed.negotiate_end_us = std::max(agreed.negotiate_end_us, o.negotiate_end_us - s);
  }
  for (const CollectiveRecord& c : st->collectives) ++record(c.cycle).collectives;
  for (auto& [cycle, r] : records) st->cycles.push_back(r);
}

StepTrace BuildStep(const Import& in, int k) {
  StepTrace st;
  const double s = in.step_start_us[k];
  st.step = k - in.options->warmup_steps;
  st.step_ms = (in.step_end_us[k] - s) / 1000.0;
  const std::vector<double>& marks = in.events->cycle_starts_us;
  for (size_t t = 0; t < in.tensors.size(); ++t) {
    const Occurrence& o = in.tensors[t]->occurrences[k];
    const double done = std::max(0.0, o.op_end_us - s);
    st.bytes += FusionBytes(in.workload.tensors[t], in.topology.world_size());
    for (int rank = 0; rank < in.topology.world_size(); ++rank) {
      const double ready = std::clamp(RankReadyUs(in, in.tensors[t], k, rank) - s, 0.0, done);
      st.tensors.push_back({rank, static_cast<int>(t), ready, done});
    }
  }
  st.score_bytes_per_s = ScoreBytesPerSecond(static_cast<double>(st.bytes), st.step_ms / 1000.0);
  const StepCycles cycles(marks, s, in.step_end_us[k]);
  AddCollectives(in, k, cycles, &st);
  AddCycles(in, k, cycles, &st);
  return st;
}

// The run's description and summary, as the store's FinishRun would compute them.
void Describe(const Import& in, Trace* trace, ImportSummary* summary) {
  RunInfo& run = trace->run;
  run.kind = RunKind::kImported;
  run.command = in.options->command;
  run.workload = in.workload;
  run.knobs = in.options->knobs;
  run.topology = in.topology;
  run.backend = in.backend;
  run.hardware = "horovod timeline " + in.options->source;
  run.warmup_steps = in.options->warmup_steps;
  run.steps_planned = run.steps_recorded = static_cast<int>(trace->steps.size());
  run.complete = true;
  std::vector<double> step_ms, collectives;
  std::vector<int64_t> bytes;
  for (const StepTrace& st : trace->steps) {
    step_ms.push_back(st.step_ms);
    bytes.push_back(st.bytes);
    collectives.push_back(static_cast<double>(st.collectives.size()));
  }
  run.step_ms_median = Median(step_ms);
  run.step_ms_p95 = Percentile(step_ms, 95);
  run.score_bytes_per_s = ScoreBytesPerSecond(bytes, step_ms);
  summary->steps = run.steps_recorded;
  summary->tensors = static_cast<int>(in.workload.tensors.size());
  summary->bytes_per_step = trace->steps.front().bytes;
  summary->step_ms_median = run.step_ms_median;
  summary->collectives_per_step = static_cast<int>(std::lround(Median(collectives)));
  summary->truncated = in.events->truncated;
}

}  // namespace

Status ParseHorovodTimeline(const std::string& text, const ImportOptions& options, Trace* trace,
                            ImportSummary* summary, const HorovodReadyLog* ready) {
  TimelineEvents events;
  AUTOTUNE_RETURN_IF_ERROR(timeline_internal::ReadTimelineEvents(text, options.source, &events));
  Import in;
  in.options = &options;
  in.events = &events;
  AUTOTUNE_RETURN_IF_ERROR(SelectRecurring(&in));
  AUTOTUNE_RETURN_IF_ERROR(ResolveTopology(&in));
  FindStepBounds(&in);
  if (ready != nullptr) AUTOTUNE_RETURN_IF_ERROR(AttachReadyLog(*ready, &in));
  for (const Process* p : in.tensors) {
    for (int k = 0; k < in.steps; ++k) {
      if (p->occurrences[k].nccl) in.backend = BackendKind::kNccl;
    }
  }
  AUTOTUNE_RETURN_IF_ERROR(MakeWorkload(&in));
  Trace out;
  const int end = options.max_steps > 0
                      ? std::min(in.steps, options.warmup_steps + options.max_steps)
                      : in.steps;
  const int64_t cells = static_cast<int64_t>(in.tensors.size()) * in.topology.world_size() *
                        (end - options.warmup_steps);
  if (cells > kMaxImportedTensorEvents) {
    return Status::InvalidArgument(
        options.source + ": " + std::to_string(in.tensors.size()) + " tensors x " +
        std::to_string(in.topology.world_size()) + " ranks x " +
        std::to_string(end - options.warmup_steps) + " steps are more than " +
        std::to_string(kMaxImportedTensorEvents) + " per-rank tensor times; import fewer steps");
  }
  for (int k = options.warmup_steps; k < end; ++k) {
    out.steps.push_back(BuildStep(in, k));
    if (out.steps.back().step_ms <= 0.0) {
      return Status::InvalidArgument(options.source + ": step " + std::to_string(k) +
                                     " ends before it starts (its collectives overlap the "
                                     "previous step's)");
    }
  }
  ImportSummary s;
  Describe(in, &out, &s);
  if (ready != nullptr) SummarizeReadyLog(in, end, &s);
  AUTOTUNE_RETURN_IF_ERROR(CheckImportedTrace(out, options.source));
  out.run.source_hash = ImportSourceHash(text, options);
  // The log is part of the source (without copying a timeline of up to 1 GiB to hash both).
  if (ready != nullptr) {
    out.run.source_hash += ";ready " + ImportSourceHash(ready->content_hash, ImportOptions());
  }
  *trace = std::move(out);
  if (summary) *summary = s;
  return Status::Ok();
}

Status LoadHorovodTimeline(const ImportOptions& options, Trace* trace, ImportSummary* summary) {
  std::string text;
  AUTOTUNE_RETURN_IF_ERROR(
      ReadInputFile(options.source, "timeline", kMaxTimelineFileBytes, &text));
  if (options.ready_log.empty()) return ParseHorovodTimeline(text, options, trace, summary);
  HorovodReadyLog ready;
  AUTOTUNE_RETURN_IF_ERROR(ReadHorovodReadyLog(options.ready_log, &ready));
  return ParseHorovodTimeline(text, options, trace, summary, &ready);
}

}  // namespace autotune
