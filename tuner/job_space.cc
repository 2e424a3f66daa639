#include "tuner/job_space.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <utility>

#include "traces/fusion_policy.h"
#include "traces/knob_table.h"

namespace autotune::tuner {
namespace {

constexpr double kBytesPerMb = 1024.0 * 1024.0;

// Cycle time: the shortest period searched is this, or 0.1% of the step time when that is
// shorter (never below the table's minimum). A cycle delays a ready gradient by at most its
// period, so below both a shorter period changes the step by less than its run-to-run noise
// (a few percent) can show, while the background thread's own work per cycle (0.03-0.1 ms in
// the shared fixtures' timelines: wake-up and an empty negotiation) comes more often and takes
// cores from the compute. Horovod's own autotune starts at 1 ms.
constexpr double kShortestCycleMs = 0.5;
constexpr double kShortestCycleStepFraction = 0.001;

std::string Number(double x) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.6g", x);
  return buffer;
}

// The least value at the knob text's precision (RoundToKnobPrecision) that is >= x: a bound
// that a setting written as text and read back never falls below.
double AtLeastAtKnobPrecision(double x) {
  double rounded = RoundToKnobPrecision(x);
  if (rounded >= x) return rounded;
  const double step = std::pow(10.0, std::floor(std::log10(rounded)) - 5.0);
  return RoundToKnobPrecision(rounded + step);
}

// Bytes each kind of tensor (op and dtype: what one fused collective or bucket may hold)
// occupies in a buffer in one step: an allgather its gathered bytes (FusionBytes).
std::map<std::pair<Op, DType>, std::vector<int64_t>> BytesByKind(const Workload& workload,
                                                                 int world_size) {
  std::map<std::pair<Op, DType>, std::vector<int64_t>> kinds;
  for (const TensorSpec& t : workload.tensors) {
    kinds[{t.op, t.dtype}].push_back(FusionBytes(t, world_size));
  }
  for (auto& [kind, bytes] : kinds) std::sort(bytes.begin(), bytes.end());
  return kinds;
}

// The bytes the largest kind reduces in one step.
int64_t StepBytes(const std::map<std::pair<Op, DType>, std::vector<int64_t>>& kinds) {
  int64_t most = 0;
  for (const auto& [kind, bytes] : kinds) {
    int64_t sum = 0;
    for (int64_t b : bytes) sum += b;
    most = std::max(most, sum);
  }
  return most;
}

KnobShape Held(const char* knob, std::string reason) {
  KnobShape shape;
  shape.knob = knob;
  shape.held = true;
  shape.reason = std::move(reason);
  return shape;
}

void ShapeFusion(const JobFacts& job, int world_size, std::vector<KnobShape>* out) {
  const KnobSpec& spec = KnobOfField(&Knobs::fusion_threshold_mb);
  const auto kinds = BytesByKind(job.workload, world_size);
  int64_t smallest_pair = 0;
  for (const auto& [kind, bytes] : kinds) {
    if (bytes.size() < 2) continue;
    const int64_t pair = bytes[0] + bytes[1];
    if (smallest_pair == 0 || pair < smallest_pair) smallest_pair = pair;
  }
  if (smallest_pair == 0) {
    out->push_back(Held(spec.name,
                        "no two tensors of one kind (op and dtype) can share a fusion buffer: "
                        "every threshold behaves as 0"));
    return;
  }
  const double lower = AtLeastAtKnobPrecision(static_cast<double>(smallest_pair) / kBytesPerMb);
  if (lower > spec.max) {
    out->push_back(Held(spec.name, "the two smallest tensors of one kind together (" +
                                       Number(lower) + " MB) exceed the largest threshold (" +
                                       Number(spec.max) + " MB): every threshold behaves as 0"));
    return;
  }
  const double step = AtLeastAtKnobPrecision(static_cast<double>(StepBytes(kinds)) / kBytesPerMb);
  KnobShape shape;
  shape.knob = spec.name;
  shape.scale = Scale::kZeroOrLog;
  shape.lower = lower;
  shape.zero_below = true;
  shape.reason = "a smaller threshold fuses nothing (the two smallest tensors of one kind take " +
                 Number(lower) + " MB together) and behaves as 0; ";
  if (step <= spec.max) {
    shape.upper = step;
    shape.same_above = true;
    shape.reason += "a larger one behaves as " + Number(step) + " MB (the bytes one step reduces)";
  } else {
    shape.upper = spec.max;
    shape.reason +=
        "the knob's range ends below the bytes one step reduces (" + Number(step) + " MB)";
  }
  out->push_back(std::move(shape));
}

void ShapeCycle(const JobFacts& job, std::vector<KnobShape>* out) {
  if (!(job.step_ms > 0.0)) return;
  const KnobSpec& spec = KnobOfField(&Knobs::cycle_time_ms);
  KnobShape shape;
  shape.knob = spec.name;
  shape.scale = Scale::kLog;
  shape.lower = std::max(
      spec.min,
      std::min(kShortestCycleMs, AtLeastAtKnobPrecision(job.step_ms * kShortestCycleStepFraction)));
  shape.upper = std::min(spec.max, RoundToKnobPrecision(job.step_ms));
  if (!(shape.lower < shape.upper)) return;
  char step[32];
  std::snprintf(step, sizeof(step), "%.4g ms", job.step_ms);
  shape.reason = std::string("a shorter cycle changes the step (") + step +
                 ") by less than its noise shows and costs the thread's own work more often";
  if (shape.upper < spec.max) {
    shape.reason +=
        "; a cycle as long as the step collects all its gradients at once, a longer "
        "one only holds them back";
  }
  out->push_back(std::move(shape));
}

void ShapeCache(const JobFacts& job, std::vector<KnobShape>* out) {
  const KnobSpec& spec = KnobOfField(&Knobs::cache_capacity);
  const double tensors = static_cast<double>(job.workload.tensors.size());
  if (tensors > spec.max) return;  // the cache cannot hold them all: every value may differ
  KnobShape shape;
  shape.knob = spec.name;
  shape.scale = Scale::kZeroOrLog;
  shape.integer = true;
  shape.lower = tensors;
  shape.upper = tensors;
  shape.same_above = true;
  shape.reason = "from " + Number(tensors) +
                 " (the tensors one step negotiates) up every capacity caches them all; a "
                 "smaller cache evicts each tensor before it comes back, adding its own work only";
  out->push_back(std::move(shape));
}

// The hierarchical knobs (the table's needs_hierarchy rows) held where they do nothing.
void ShapeHierarchy(const JobFacts& job, Target target, Framework framework,
                    std::vector<KnobShape>* out) {
  bool allgathers = false;
  for (const TensorSpec& t : job.workload.tensors) allgathers |= t.op == Op::kAllgather;
  for (const KnobSpec& spec : KnobTable()) {
    if (!spec.needs_hierarchy || !KnobInFramework(spec, framework)) continue;
    if (target == Target::kCpu) {
      out->push_back(Held(spec.name,
                          "CPU Horovod runs hierarchical collectives flat (they need "
                          "NCCL or DDL)"));
    } else if (job.topology && job.topology->nodes == 1) {
      out->push_back(Held(spec.name, "one node: there is no cross-node step to split off"));
    } else if (job.topology && job.topology->ranks_per_node == 1) {
      out->push_back(Held(spec.name,
                          "one rank per node: there is nothing to combine within a "
                          "node"));
    } else if (spec.needs_allgather && !job.workload.tensors.empty() && !allgathers) {
      out->push_back(Held(spec.name, "the job allgathers no tensors"));
    }
  }
}

// DDP's bucket caps, in MB: a cap above the bytes one step reduces makes one bucket of them all.
void ShapeDdpBuckets(const JobFacts& job, std::vector<KnobShape>* out) {
  const KnobSpec& cap = KnobOfField(&Knobs::ddp_bucket_cap_mb);
  const KnobSpec& first = KnobOfField(&Knobs::ddp_first_bucket_mb);
  const double step_mb =
      job.workload.tensors.empty()
          ? 0.0
          : AtLeastAtKnobPrecision(static_cast<double>(StepBytes(BytesByKind(job.workload, 1))) /
                                   kBytesPerMb);
  const std::string trainer =
      "whole MB, as the Hugging Face Trainer (--" + std::string(cap.hf_trainer_argument) +
      ", an int) and Lightning (DDPStrategy(" + cap.script_keyword + "=...)) take it";
  KnobShape shape;
  shape.knob = cap.name;
  shape.scale = Scale::kLog;
  shape.integer = true;
  shape.lower = std::max(1.0, std::ceil(cap.min));
  shape.upper = std::floor(cap.max);
  shape.reason = trainer;
  if (step_mb > 0.0 && std::ceil(step_mb) <= shape.lower) {
    out->push_back(Held(cap.name, "the bytes one step reduces (" + Number(step_mb) +
                                      " MB) fit one bucket of the least whole cap (1 MB): every "
                                      "cap behaves the same"));
  } else {
    if (step_mb > 0.0 && std::ceil(step_mb) < shape.upper) {
      shape.upper = std::ceil(step_mb);
      shape.same_above = true;
      shape.reason += "; a larger cap behaves as " + Number(shape.upper) +
                      " MB (the bytes one step reduces, rounded up)";
    }
    out->push_back(std::move(shape));
  }
  KnobShape first_shape;
  first_shape.knob = first.name;
  first_shape.scale = Scale::kLog;
  first_shape.lower = first.min;
  first_shape.upper = first.max;
  first_shape.reason =
      "no Hugging Face Trainer or Lightning argument sets it (torch.distributed."
      "_DEFAULT_FIRST_BUCKET_BYTES; `autotune apply` does)";
  if (step_mb > first.min && step_mb < first.max) {
    first_shape.upper = step_mb;
    first_shape.same_above = true;
    first_shape.reason +=
        "; a larger one behaves as " + Number(step_mb) + " MB (the bytes one step reduces)";
  }
  out->push_back(std::move(first_shape));
}

// Position of `knob` in the knob table (the order JobSpace lists its shapes).
size_t TableIndex(const std::string& knob) {
  const auto table = KnobTable();
  for (size_t i = 0; i < table.size(); ++i) {
    if (knob == table[i].name) return i;
  }
  return table.size();
}

// "0 or [a, b]", "{0, b}", "[a, b]", with the unit.
std::string ValuesText(const Dimension& d, const char* unit) {
  std::string text;
  if (d.scale == Scale::kZeroOrLog && d.lower == d.upper) {
    text = "{0, " + Number(d.upper) + "}";
  } else {
    text = (d.scale == Scale::kZeroOrLog ? "0 or [" : "[") + Number(d.lower) + ", " +
           Number(d.upper) + "]";
  }
  if (*unit != '\0') text += std::string(" ") + unit;
  return text;
}

}  // namespace

const KnobShape* JobSpace::Find(const std::string& knob) const {
  for (const KnobShape& shape : knobs) {
    if (shape.knob == knob) return &shape;
  }
  return nullptr;
}

JobSpace ShapeSpaceForJob(const JobFacts& job, Target target, Framework framework) {
  JobSpace space;
  const int world_size = job.topology ? job.topology->world_size() : 1;
  if (framework == Framework::kHorovod) {
    if (!job.workload.tensors.empty()) {
      ShapeFusion(job, world_size, &space.knobs);
      ShapeCache(job, &space.knobs);
    }
    ShapeCycle(job, &space.knobs);
    ShapeHierarchy(job, target, framework, &space.knobs);
  } else {
    ShapeDdpBuckets(job, &space.knobs);
  }
  std::stable_sort(space.knobs.begin(), space.knobs.end(),
                   [](const KnobShape& a, const KnobShape& b) {
                     return TableIndex(a.knob) < TableIndex(b.knob);
                   });
  return space;
}

std::optional<Dimension> ShapedDimension(const Dimension& table, const KnobShape& shape,
                                         const std::vector<double>& must_hold) {
  Dimension d = table;
  d.kind = shape.integer ? DimensionKind::kInteger : DimensionKind::kContinuous;
  d.scale = shape.scale;
  d.lower = shape.lower;
  d.upper = shape.upper;
  d.same_above = shape.same_above;
  d.zero_below = shape.zero_below;
  for (double v : must_hold) {
    if (shape.integer && v != std::round(v)) return std::nullopt;
    if (shape.scale == Scale::kZeroOrLog && v == 0.0) continue;
    if (shape.same_above && v > d.upper) continue;
    if (shape.zero_below && v > 0.0 && v < d.lower) continue;
    d.lower = std::min(d.lower, v);
    d.upper = std::max(d.upper, v);
  }
  double default_value = table.default_value;
  if (shape.same_above && default_value > d.upper) default_value = d.upper;
  if (shape.zero_below && default_value > 0.0 && default_value < d.lower) default_value = 0.0;
  d.default_value = default_value;
  return d;
}

std::string JobSpaceNote(const KnobShape& shape, const Space& space) {
  const int i = space.IndexOf(shape.knob);
  const KnobSpec* spec = FindKnob(shape.knob);
  const Dimension& d = space.dimension(i);
  if (shape.held || space.is_constant(i)) {
    return shape.knob + " held at " + space.ValueText(space.Default(), i) + ": " + shape.reason;
  }
  std::string note = shape.knob + " searched in " + ValuesText(d, spec ? spec->unit : "");
  return note + ": " + shape.reason;
}

namespace {

// Allreduces above this size are left alone: their messages are rendezvous either way, and
// measured here without a tail (1 and 4 MiB, bench/executor/README.md).
constexpr int64_t kSmallAllreduceBytes = 1024 * 1024;
// Room for Open MPI's message header (ob1's match header is tens of bytes).
constexpr int64_t kHeaderBytes = 1024;

// The largest allreduce (bytes) the setting sends of at most kSmallAllreduceBytes, 0 when
// its allreduces are larger or not known.
int64_t LargestSmallAllreduce(const Knobs& knobs, const JobFacts& job) {
  const int64_t threshold = knobs.threshold_bytes();
  if (threshold > kSmallAllreduceBytes) return 0;
  int64_t largest_tensor = 0;
  for (const TensorSpec& t : job.workload.tensors) {
    if (t.op != Op::kAllreduce || t.bytes() > kSmallAllreduceBytes) continue;
    largest_tensor = std::max(largest_tensor, t.bytes());
  }
  if (largest_tensor == 0) return 0;  // no small allreduce tensor known
  return std::max(threshold, largest_tensor);
}

// The eager limit the rule sets (0: none).
int64_t CompanionEagerLimit(const Knobs& knobs, const JobFacts& job, BackendKind backend,
                            Framework framework) {
  if (backend != BackendKind::kMpi || framework != Framework::kHorovod) return 0;
  if (!job.topology || job.topology->nodes < 2) return 0;
  if (knobs.mpi_tcp_eager_limit != 0) return 0;
  const int64_t largest = LargestSmallAllreduce(knobs, job);
  if (largest == 0) return 0;
  const int64_t message = largest / 2 + kHeaderBytes;
  int64_t limit = kOpenMpiTcpEagerLimit;
  while (limit < message) limit *= 2;
  return limit > kOpenMpiTcpEagerLimit ? limit : 0;
}

}  // namespace

Knobs WithCompanionKnobs(const Knobs& knobs, const JobFacts& job, BackendKind backend,
                         Framework framework) {
  Knobs out = knobs;
  const int64_t limit = CompanionEagerLimit(knobs, job, backend, framework);
  if (limit > 0) out.mpi_tcp_eager_limit = static_cast<int>(limit);
  return out;
}

std::string CompanionNote(const Knobs& knobs, const JobFacts& job, BackendKind backend,
                          Framework framework) {
  Knobs bare = knobs;
  bare.mpi_tcp_eager_limit = 0;
  const int64_t limit = CompanionEagerLimit(bare, job, backend, framework);
  if (limit == 0 || limit != knobs.mpi_tcp_eager_limit) return "";
  const int64_t largest = LargestSmallAllreduce(knobs, job);
  return std::string(KnobOfField(&Knobs::mpi_tcp_eager_limit).name) + " " +
         std::to_string(limit) + " with it: its allreduces of up to " +
         std::to_string(largest) + " bytes send messages of up to " +
         std::to_string(largest / 2) +
         " bytes, which Open MPI's TCP default (" + std::to_string(kOpenMpiTcpEagerLimit) +
         ", header included) sends by rendezvous";
}

}  // namespace autotune::tuner
