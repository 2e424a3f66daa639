#include "formats/ddp_trace.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "formats/json_fields.h"
#include "traces/files.h"
#include "traces/score.h"

namespace autotune {
namespace {

using Json = nlohmann::json;

struct Bucket {
  int index = 0;
  std::vector<int> params;  // file parameter indices
  double start_us = 0.0, end_us = 0.0;
};

struct RankStep {
  int64_t start_ns = -1;  // the step's start on the file's clock (version 2); -1: not given
  double forward_end_us = 0.0, end_us = 0.0;
  std::vector<double> ready_us;  // per file parameter; < 0: no gradient
  std::vector<Bucket> buckets;   // launch order
};

struct RankFile {
  std::string path;
  std::string hash;  // of the file's bytes, for the run's source hash
  int world = 0;
  std::string hostname;
  std::string boot_id;  // the kernel whose CLOCK_MONOTONIC gave start_ns; "": none given
  // This rank's clock less rank 0's and the bound on that estimate's error, measured by the
  // recorder at the job's start; offset_error_ns < 0: not measured.
  int64_t offset_ns = 0, offset_error_ns = -1;
  std::string backend;  // the process group's ("gloo", "nccl"); "" in traces from before it
  Json settings;  // bucket_cap_mb, first_bucket_mb, gradient_as_bucket_view
  std::vector<TensorSpec> params;
  std::vector<RankStep> steps;
};

using json_fields::Integer;
using json_fields::Number;

Status ReadParams(const Json& j, const std::string& where, std::vector<TensorSpec>* out) {
  if (!j.is_array() || j.empty()) {
    return Status::InvalidArgument(where + ": \"parameters\" must be a non-empty list");
  }
  for (size_t i = 0; i < j.size(); ++i) {
    const std::string at = where + ": parameters[" + std::to_string(i) + "]";
    const Json& p = j[i];
    TensorSpec t;
    if (!p.is_object() || !p.contains("name") || !p["name"].is_string() || !p.contains("shape") ||
        !p["shape"].is_array() || !p.contains("dtype") || !p["dtype"].is_string()) {
      return Status::InvalidArgument(at + ": needs name, shape and dtype");
    }
    t.name = p["name"].get<std::string>();
    for (const Json& d : p["shape"]) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0) {
        return Status::InvalidArgument(at + ": \"shape\" must hold non-negative integers");
      }
      t.shape.push_back(d.get<int64_t>());
    }
    AUTOTUNE_RETURN_IF_ERROR(ParseDType(p["dtype"].get<std::string>(), &t.dtype).WithPrefix(at));
    out->push_back(std::move(t));
  }
  return Status::Ok();
}

Status ReadStep(const Json& s, size_t params, const std::string& where, RankStep* out) {
  if (s.contains("start_ns")) {
    AUTOTUNE_RETURN_IF_ERROR(Integer(s, "start_ns", where, &out->start_ns));
    if (out->start_ns < 0) {
      return Status::InvalidArgument(where + ": \"start_ns\" must not be negative");
    }
  }
  AUTOTUNE_RETURN_IF_ERROR(Number(s, "forward_end_us", where, &out->forward_end_us));
  AUTOTUNE_RETURN_IF_ERROR(Number(s, "end_us", where, &out->end_us));
  const Json& ready = s.value("ready_us", Json());
  if (!ready.is_array() || ready.size() != params) {
    return Status::InvalidArgument(where + ": \"ready_us\" must hold one time per parameter");
  }
  for (const Json& r : ready) out->ready_us.push_back(r.is_number() ? r.get<double>() : -1.0);
  const Json& buckets = s.value("buckets", Json());
  if (!buckets.is_array()) return Status::InvalidArgument(where + ": \"buckets\" must be a list");
  for (size_t b = 0; b < buckets.size(); ++b) {
    const std::string at = where + " bucket " + std::to_string(b);
    Bucket bucket;
    double index = 0;
    AUTOTUNE_RETURN_IF_ERROR(Number(buckets[b], "index", at, &index));
    bucket.index = static_cast<int>(index);
    AUTOTUNE_RETURN_IF_ERROR(Number(buckets[b], "start_us", at, &bucket.start_us));
    AUTOTUNE_RETURN_IF_ERROR(Number(buckets[b], "end_us", at, &bucket.end_us));
    for (const Json& p : buckets[b].value("parameters", Json::array())) {
      if (!p.is_number_integer() || p.get<int64_t>() < 0 || p.get<size_t>() >= params) {
        return Status::InvalidArgument(at + ": a parameter index is out of range");
      }
      bucket.params.push_back(p.get<int>());
    }
    if (bucket.params.empty()) return Status::InvalidArgument(at + ": no parameters");
    out->buckets.push_back(std::move(bucket));
  }
  return Status::Ok();
}

Status ReadRank(const std::string& path, int rank, RankFile* out) {
  std::string text;
  AUTOTUNE_RETURN_IF_ERROR(ReadInputFile(path, "DDP trace file (rank " + std::to_string(rank) + ")",
                                         kMaxDdpTraceFileBytes, &text));
  const Json j = Json::parse(text, nullptr, false);
  out->hash = ImportSourceHash(text, ImportOptions());
  if (!j.is_object() || j.value("format", "") != "autotune-ddp-trace") {
    return Status::InvalidArgument(path + ": not an autotune DDP trace (\"format\")");
  }
  out->path = path;
  int64_t world = 0, file_rank = -1;
  AUTOTUNE_RETURN_IF_ERROR(Integer(j, "world_size", path, &world));
  AUTOTUNE_RETURN_IF_ERROR(Integer(j, "rank", path, &file_rank));
  if (file_rank != rank) {
    return Status::InvalidArgument(path + ": \"rank\" is " + std::to_string(file_rank) +
                                   ", not " + std::to_string(rank));
  }
  if (world < 1 || world > kMaxDdpWorldSize) {
    return Status::InvalidArgument(path + ": \"world_size\" must be between 1 and " +
                                   std::to_string(kMaxDdpWorldSize));
  }
  out->world = static_cast<int>(world);
  out->hostname = j.value("hostname", "");
  if (j.contains("clock")) {
    const Json& clock = j["clock"];
    if (!clock.is_object() || !clock.contains("name") || !clock["name"].is_string() ||
        !clock.contains("boot_id") || !clock["boot_id"].is_string()) {
      return Status::InvalidArgument(path + ": \"clock\" must give \"name\" and \"boot_id\"");
    }
    // Only the host's monotonic clock is known to be one clock for every process of a kernel.
    if (clock["name"].get<std::string>() == "CLOCK_MONOTONIC") {
      out->boot_id = clock["boot_id"].get<std::string>();
      if (clock.contains("offset_to_rank0_ns") || clock.contains("offset_error_ns")) {
        const std::string at = path + ": \"clock\"";
        AUTOTUNE_RETURN_IF_ERROR(Integer(clock, "offset_to_rank0_ns", at, &out->offset_ns));
        AUTOTUNE_RETURN_IF_ERROR(Integer(clock, "offset_error_ns", at, &out->offset_error_ns));
        if (out->offset_error_ns < 0) {
          return Status::InvalidArgument(at + ": \"offset_error_ns\" must not be negative");
        }
      }
    }
  }
  if (j.contains("backend")) {
    if (!j["backend"].is_string()) {
      return Status::InvalidArgument(path + ": key 'backend' must be a string");
    }
    out->backend = j["backend"].get<std::string>();
  }
  for (const char* key : {"bucket_cap_mb", "first_bucket_mb", "gradient_as_bucket_view"}) {
    if (!j.contains(key)) return Status::InvalidArgument(path + ": missing \"" + key + "\"");
    const bool flag = std::string(key) == "gradient_as_bucket_view";
    if (flag ? !j[key].is_boolean() : !j[key].is_number()) {
      return Status::InvalidArgument(path + ": key '" + key + "' must be " +
                                     (flag ? "true or false" : "a number"));
    }
    out->settings[key] = j[key];
  }
  AUTOTUNE_RETURN_IF_ERROR(ReadParams(j.value("parameters", Json()), path, &out->params));
  const Json& steps = j.value("steps", Json());
  if (!steps.is_array()) return Status::InvalidArgument(path + ": \"steps\" must be a list");
  for (size_t k = 0; k < steps.size(); ++k) {
    RankStep step;
    AUTOTUNE_RETURN_IF_ERROR(
        ReadStep(steps[k], out->params.size(), path + ": step " + std::to_string(k), &step));
    out->steps.push_back(std::move(step));
  }
  return Status::Ok();
}

Status ReadRanks(const std::string& dir, std::vector<RankFile>* ranks) {
  RankFile first;
  AUTOTUNE_RETURN_IF_ERROR(ReadRank(dir + "/rank0.json", 0, &first));
  const int world = first.world;
  ranks->push_back(std::move(first));
  for (int r = 1; r < world; ++r) {
    RankFile f;
    AUTOTUNE_RETURN_IF_ERROR(ReadRank(dir + "/rank" + std::to_string(r) + ".json", r, &f));
    const RankFile& zero = ranks->front();
    if (f.world != world || f.settings != zero.settings || f.backend != zero.backend ||
        f.params.size() != zero.params.size()) {
      return Status::InvalidArgument(f.path +
                                     ": another job's file (world size, backend, DDP settings "
                                     "or parameters differ from rank 0's)");
    }
    ranks->push_back(std::move(f));
  }
  return Status::Ok();
}

Status ToKnobs(const Json& settings, const std::string& where, Knobs* knobs) {
  knobs->ddp_bucket_cap_mb = settings["bucket_cap_mb"].get<double>();
  knobs->ddp_first_bucket_mb = settings["first_bucket_mb"].get<double>();
  knobs->ddp_gradient_as_bucket_view = settings["gradient_as_bucket_view"].get<bool>();
  return knobs->Validate().WithPrefix(where);
}

// Which parameters the run's tensors are: those rank 0 got gradients for, by their ready
// time in the first kept step. order[i] = the file parameter of tensor i; tensor_of the
// inverse (-1: no gradient).
struct TensorOrder {
  std::vector<int> order;
  std::vector<int> tensor_of;
};

TensorOrder OrderTensors(const RankFile& zero, int first) {
  const RankStep& lead = zero.steps[first];
  TensorOrder t;
  for (size_t p = 0; p < zero.params.size(); ++p) {
    if (lead.ready_us[p] >= 0) t.order.push_back(static_cast<int>(p));
  }
  std::stable_sort(t.order.begin(), t.order.end(),
                   [&](int a, int b) { return lead.ready_us[a] < lead.ready_us[b]; });
  t.tensor_of.assign(zero.params.size(), -1);
  for (size_t i = 0; i < t.order.size(); ++i) t.tensor_of[t.order[i]] = static_cast<int>(i);
  return t;
}

// The workload from rank 0's kept steps [first, end): medians of the phases and ready times.
Workload MakeDdpWorkload(const RankFile& zero, const TensorOrder& t, int first, int end,
                         const std::string& name) {
  Workload w;
  w.name = name.empty() ? "ddp-job" : name;
  std::vector<double> forward, backward, optimizer;
  std::vector<std::vector<double>> ready(t.order.size());
  for (int k = first; k < end; ++k) {
    const RankStep& s = zero.steps[k];
    double last_ready = 0.0, last_done = 0.0;
    for (size_t i = 0; i < t.order.size(); ++i) {
      const double r = std::max(0.0, s.ready_us[t.order[i]] - s.forward_end_us);
      ready[i].push_back(r);
      last_ready = std::max(last_ready, r);
    }
    for (const Bucket& b : s.buckets) last_done = std::max(last_done, b.end_us);
    forward.push_back(s.forward_end_us / 1e3);
    backward.push_back(last_ready / 1e3);
    const double compute_and_comm = std::max(last_done, s.forward_end_us + last_ready);
    optimizer.push_back(std::max(0.0, s.end_us - compute_and_comm) / 1e3);
  }
  w.forward_ms = Median(forward);
  w.optimizer_ms = Median(optimizer);
  double previous = 0.0;
  for (size_t i = 0; i < t.order.size(); ++i) {
    TensorSpec spec = zero.params[t.order[i]];
    spec.ready_ms = std::max(previous, Median(ready[i]) / 1e3);  // kept in ready order
    previous = spec.ready_ms;
    w.tensors.push_back(std::move(spec));
  }
  // Registration: the kept parameters' order in the file, 0 .. n-1.
  std::vector<int> by_file(t.order.begin(), t.order.end());
  std::sort(by_file.begin(), by_file.end());
  for (size_t r = 0; r < by_file.size(); ++r) {
    w.tensors[t.tensor_of[by_file[r]]].registration = static_cast<int>(r);
  }
  w.backward_ms = std::max(Median(backward), previous);
  return w;
}

// How long each of rank 0's buckets of step k ran as a collective (by its position): the
// shortest of its times on the ranks that ran it (the same DDP bucket index). An allreduce
// begins when the last rank launches it and ends on every rank at about the same moment, so
// each earlier rank's time includes its wait for the last one (rank skew: resnet18's 27.5 MB
// bucket took 747 ms from rank 0's launch and 607 ms from the last rank's, bench/ddp/README.md).
// The replay launches each bucket at the slowest rank's ready time and prices it from there.
std::vector<double> BucketTimesUs(const std::vector<RankFile>& ranks, int k) {
  const std::vector<Bucket>& own = ranks.front().steps[k].buckets;
  std::vector<double> shortest(own.size());
  std::map<int, size_t> position;  // DDP bucket index -> rank 0's launch position
  for (size_t b = 0; b < own.size(); ++b) {
    shortest[b] = std::max(0.0, own[b].end_us - own[b].start_us);
    position.emplace(own[b].index, b);
  }
  for (size_t r = 1; r < ranks.size(); ++r) {
    for (const Bucket& other : ranks[r].steps[k].buckets) {
      const auto it = position.find(other.index);
      if (it == position.end()) continue;
      shortest[it->second] =
          std::min(shortest[it->second], std::max(0.0, other.end_us - other.start_us));
    }
  }
  return shortest;
}

// Whether rank f's clock is rank 0's own (the same kernel's monotonic clock): its offset is 0.
bool OnRankZerosKernel(const RankFile& f, const RankFile& zero) {
  return !f.boot_id.empty() && f.boot_id == zero.boot_id;
}

// How the ranks' step starts can be put on rank 0's clock: every file gives each of steps
// [first, end) its start on its host's monotonic clock, and every rank either runs on rank 0's
// kernel (offset 0) or measured its clock's offset from rank 0's.
RankClocks SharedClock(const std::vector<RankFile>& ranks, int first, int end) {
  RankClocks clocks;
  clocks.kind = RankClocks::kOneKernel;
  for (const RankFile& f : ranks) {
    if (f.boot_id.empty()) return RankClocks();
    for (int k = first; k < end; ++k) {
      if (f.steps[k].start_ns < 0) return RankClocks();
    }
    if (OnRankZerosKernel(f, ranks.front())) continue;
    if (f.offset_error_ns < 0) return RankClocks();
    clocks.kind = RankClocks::kMeasuredOffsets;
    clocks.offset_error_us =
        std::max(clocks.offset_error_us, static_cast<double>(f.offset_error_ns) / 1e3);
  }
  return clocks;
}

// Each rank's offset from rank 0's clock in step k (us): its step start, less its clock's
// measured offset where it ran on another kernel, less rank 0's; or an error where a rank's
// step began more than rank 0's step lasts away from it: the files' steps do not line up (a
// rank that ran an extra forward call).
Status ClockOffsetsUs(const std::vector<RankFile>& ranks, int k, std::vector<double>* out) {
  const RankStep& zero = ranks.front().steps[k];
  out->assign(ranks.size(), 0.0);
  for (size_t r = 1; r < ranks.size(); ++r) {
    const RankFile& f = ranks[r];
    const int64_t on_rank_zeros =
        f.steps[k].start_ns - (OnRankZerosKernel(f, ranks.front()) ? 0 : f.offset_ns);
    (*out)[r] = static_cast<double>(on_rank_zeros - zero.start_ns) / 1e3;
    if (std::fabs((*out)[r]) > zero.end_us) {
      std::ostringstream msg;
      msg << ranks[r].path << ": step " << k << " starts " << (*out)[r] / 1e3
          << " ms from rank 0's, which lasts " << zero.end_us / 1e3
          << " ms: the ranks' steps do not line up";
      return Status::InvalidArgument(msg.str());
    }
  }
  return Status::Ok();
}

// Where each of rank 0's buckets of step k began on rank 0's clock (by its position): when the
// last rank that ran it (the same DDP bucket index) launched it, each rank's launch moved by
// its offset; never after rank 0's end.
std::vector<double> LastLaunchesUs(const std::vector<RankFile>& ranks, int k,
                                   const std::vector<double>& offset_us) {
  const std::vector<Bucket>& own = ranks.front().steps[k].buckets;
  std::vector<double> last(own.size());
  std::map<int, size_t> position;  // DDP bucket index -> rank 0's launch position
  for (size_t b = 0; b < own.size(); ++b) {
    last[b] = own[b].start_us;
    position.emplace(own[b].index, b);
  }
  for (size_t r = 1; r < ranks.size(); ++r) {
    for (const Bucket& other : ranks[r].steps[k].buckets) {
      const auto it = position.find(other.index);
      if (it != position.end()) {
        last[it->second] = std::max(last[it->second], other.start_us + offset_us[r]);
      }
    }
  }
  for (size_t b = 0; b < own.size(); ++b) last[b] = std::min(last[b], own[b].end_us);
  return last;
}

// Step k of the files: every rank's tensor times, rank 0's buckets, each starting when its last
// rank joined it. With offset_us (one per rank: SharedClock) every rank's times are put on rank
// 0's clock and a bucket starts at its last launch there (LastLaunchesUs); without, each rank's
// times stay on its own clock and a bucket runs its shortest time over the ranks
// (BucketTimesUs) before rank 0's end.
StepTrace MakeDdpStep(const std::vector<RankFile>& ranks, const TensorOrder& t, const Workload& w,
                      int k, int first, int64_t bytes, const std::vector<double>& offset_us) {
  const RankFile& zero = ranks.front();
  StepTrace st;
  st.step = k - first;
  st.step_ms = zero.steps[k].end_us / 1e3;
  st.backward_start_us = zero.steps[k].forward_end_us;
  st.bytes = bytes;
  st.score_bytes_per_s = ScoreBytesPerSecond(static_cast<double>(bytes), st.step_ms / 1e3);
  for (int r = 0; r < zero.world; ++r) {
    const RankStep& s = ranks[r].steps[k];
    const double shift = offset_us.empty() ? 0.0 : offset_us[r];
    std::vector<double> done(zero.params.size(), 0.0);
    for (const Bucket& b : s.buckets) {
      for (int p : b.params) done[p] = b.end_us;
    }
    for (size_t i = 0; i < t.order.size(); ++i) {
      const int p = t.order[i];
      const double ready = std::max(0.0, s.ready_us[p] + shift);
      st.tensors.push_back({r, static_cast<int>(i), ready, std::max(done[p] + shift, ready)});
    }
  }
  const RankStep& s = zero.steps[k];
  std::vector<double> start_us;
  if (offset_us.empty()) {
    const std::vector<double> shortest_us = BucketTimesUs(ranks, k);
    for (size_t b = 0; b < s.buckets.size(); ++b) {
      start_us.push_back(std::max(s.buckets[b].end_us, s.buckets[b].start_us) - shortest_us[b]);
    }
  } else {
    start_us = LastLaunchesUs(ranks, k, offset_us);
  }
  for (size_t b = 0; b < s.buckets.size(); ++b) {
    CollectiveRecord c;
    c.seq = static_cast<int>(b);
    c.cycle = s.buckets[b].index;
    c.op = Op::kAllreduce;
    c.algorithm = Algorithm::kFlat;
    for (int p : s.buckets[b].params) {
      if (t.tensor_of[p] < 0) continue;
      c.tensors.push_back(t.tensor_of[p]);
      c.bytes += w.tensors[t.tensor_of[p]].bytes();
    }
    c.comm_end_us = c.end_us = std::max(s.buckets[b].end_us, s.buckets[b].start_us);
    c.start_us = c.copy_in_end_us = start_us[b];
    st.collectives.push_back(std::move(c));
  }
  return st;
}

// The run's description: kind, framework, knobs from the files, topology from the flags or
// the host names.
Status DescribeDdpRun(const ImportOptions& options, const std::vector<RankFile>& ranks,
                      const Workload& w, int first, RunInfo* run) {
  const RankFile& zero = ranks.front();
  run->kind = RunKind::kImported;
  run->framework = Framework::kDdp;
  run->command = options.command;
  run->workload = w;
  run->knobs = options.knobs;
  AUTOTUNE_RETURN_IF_ERROR(ToKnobs(zero.settings, zero.path, &run->knobs));
  std::set<std::string> hosts;
  for (const RankFile& f : ranks) hosts.insert(f.hostname);
  Topology& topo = run->topology;
  topo.nodes = options.topology.nodes > 0 ? options.topology.nodes : static_cast<int>(hosts.size());
  topo.ranks_per_node = options.topology.ranks_per_node > 0 ? options.topology.ranks_per_node
                                                            : std::max(1, zero.world / topo.nodes);
  if (topo.world_size() != zero.world) {
    return Status::InvalidArgument(options.source + ": --nodes x --ranks-per-node is " +
                                   std::to_string(topo.world_size()) + " ranks; the trace has " +
                                   std::to_string(zero.world));
  }
  topo.hosts.assign(hosts.begin(), hosts.end());
  topo.hosts.resize(topo.nodes);
  // NCCL's process group runs the job on GPUs; gloo (and a trace from before the field) on
  // the host's CPUs.
  run->backend = zero.backend == "nccl" ? BackendKind::kNccl : BackendKind::kMpi;
  run->hardware = "PyTorch DDP trace " + options.source +
                  (zero.backend.empty() ? "" : " (" + zero.backend + ")");
  run->warmup_steps = first;
  return Status::Ok();
}

// The summary the store's FinishRun would compute, and the import's.
void Summarize(Trace* trace, ImportSummary* summary) {
  RunInfo& run = trace->run;
  std::vector<double> step_ms, collectives;
  std::vector<int64_t> step_bytes;
  for (const StepTrace& st : trace->steps) {
    step_ms.push_back(st.step_ms);
    step_bytes.push_back(st.bytes);
    collectives.push_back(static_cast<double>(st.collectives.size()));
  }
  run.steps_planned = run.steps_recorded = static_cast<int>(trace->steps.size());
  run.complete = true;
  run.step_ms_median = Median(step_ms);
  run.step_ms_p95 = Percentile(step_ms, 95);
  run.score_bytes_per_s = ScoreBytesPerSecond(step_bytes, step_ms);
  if (summary == nullptr) return;
  *summary = ImportSummary();
  summary->steps = run.steps_recorded;
  summary->tensors = static_cast<int>(run.workload.tensors.size());
  summary->bytes_per_step = trace->steps.front().bytes;
  summary->step_ms_median = run.step_ms_median;
  summary->collectives_per_step = static_cast<int>(std::lround(Median(collectives)));
}

}  // namespace

Status LoadDdpTrace(const ImportOptions& options, Trace* trace, ImportSummary* summary) {
  std::error_code ec;
  if (!std::filesystem::is_directory(options.source, ec)) {
    return Status::IoError("cannot read DDP trace " + options.source +
                           (std::filesystem::exists(options.source, ec)
                                ? ": not a folder (give the folder of rank<R>.json files)"
                                : ": no such folder"));
  }
  std::vector<RankFile> ranks;
  try {
    AUTOTUNE_RETURN_IF_ERROR(ReadRanks(options.source, &ranks));
  } catch (const Json::exception& e) {  // a value of the wrong type the checks above missed
    std::string what = e.what();
    if (what.rfind("[json.exception.", 0) == 0 && what.find("] ") != std::string::npos) {
      what = what.substr(what.find("] ") + 2);
    }
    return Status::InvalidArgument(options.source + ": a value of the wrong type: " + what);
  }
  const RankFile& zero = ranks.front();
  size_t steps = zero.steps.size();
  for (const RankFile& f : ranks) steps = std::min(steps, f.steps.size());
  const int first = options.warmup_steps;
  int end = static_cast<int>(steps);
  if (options.max_steps > 0) end = std::min(end, first + options.max_steps);
  if (end <= first) {
    return Status::InvalidArgument(options.source + ": " + std::to_string(steps) +
                                   " complete steps on every rank; nothing is left after " +
                                   std::to_string(first) + " warm-up steps");
  }
  const TensorOrder order = OrderTensors(zero, first);
  if (order.order.empty()) {
    return Status::InvalidArgument(zero.path + ": step " + std::to_string(first) +
                                   ": no parameter got a gradient (every \"ready_us\" is null)");
  }
  const Workload w = MakeDdpWorkload(zero, order, first, end, options.workload_name);
  Trace out;
  AUTOTUNE_RETURN_IF_ERROR(DescribeDdpRun(options, ranks, w, first, &out.run));
  int64_t bytes = 0;
  for (const TensorSpec& t : w.tensors) bytes += t.bytes();
  const RankClocks clocks = SharedClock(ranks, first, end);
  std::vector<double> offset_us;
  for (int k = first; k < end; ++k) {
    if (clocks.kind != RankClocks::kOwn) {
      AUTOTUNE_RETURN_IF_ERROR(ClockOffsetsUs(ranks, k, &offset_us));
    }
    out.steps.push_back(MakeDdpStep(ranks, order, w, k, first, bytes, offset_us));
    if (out.steps.back().step_ms <= 0) {
      return Status::InvalidArgument(zero.path + ": step " + std::to_string(k) +
                                     " has no positive duration");
    }
  }
  AUTOTUNE_RETURN_IF_ERROR(CheckImportedTrace(out, options.source));
  std::string content;
  for (const RankFile& f : ranks) content += f.hash;
  out.run.source_hash = ImportSourceHash(content, options);
  Summarize(&out, summary);
  if (summary != nullptr) summary->clocks = clocks;
  *trace = std::move(out);
  return Status::Ok();
}

}  // namespace autotune
