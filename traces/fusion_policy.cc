#include "traces/fusion_policy.h"

#include <algorithm>

namespace autotune {

int64_t FusionBytes(const TensorSpec& t, int world_size) {
  return t.op == Op::kAllgather ? t.bytes() * world_size : t.bytes();
}

CollectiveCopies FusionBufferCopies(const FusedCollective& c) {
  const bool single = c.tensors.size() == 1;
  return {.copy_in = true, .copy_out = !single, .in_output = single};
}

namespace fusion_internal {

std::vector<FusedCollective> PackResponses(std::span<const ReadyTensor> responses,
                                           int64_t threshold_bytes) {
  std::vector<FusedCollective> out;
  for (const ReadyTensor& r : responses) {
    bool fits = false;
    if (!out.empty()) {
      const FusedCollective& last = out.back();
      fits = threshold_bytes > 0 && last.op == r.op && last.dtype == r.dtype &&
             last.group == r.group && last.bytes + r.bytes <= threshold_bytes;
    }
    if (!fits) {
      FusedCollective fresh;
      fresh.op = r.op;
      fresh.dtype = r.dtype;
      fresh.group = r.group;
      out.push_back(std::move(fresh));
    }
    out.back().bytes += r.bytes;
    out.back().tensors.push_back(r.tensor);
  }
  return out;
}

std::vector<int> AssignGroups(const Workload& w, int num_groups) {
  const int n = static_cast<int>(w.tensors.size());
  std::vector<int> group_of(n, -1);
  if (num_groups <= 0 || n == 0) return group_of;
  bool all_explicit = std::all_of(w.tensors.begin(), w.tensors.end(),
                                  [](const TensorSpec& t) { return t.group >= 0; });
  if (all_explicit) {
    for (int i = 0; i < n; ++i) group_of[i] = w.tensors[i].group;
    return group_of;
  }
  const int groups = std::min(num_groups, n);
  for (int i = 0; i < n; ++i) {
    group_of[i] = static_cast<int>(static_cast<int64_t>(i) * groups / n);
  }
  return group_of;
}

GroupGate::GroupGate(std::vector<int> group_of) : group_of_(std::move(group_of)) {
  int max_group = -1;
  for (int g : group_of_) max_group = std::max(max_group, g);
  group_size_.assign(max_group + 1, 0);
  for (int g : group_of_) {
    if (g >= 0) ++group_size_[g];
  }
  Reset();
}

void GroupGate::Reset() {
  group_ready_.assign(group_size_.size(), 0);
  held_.assign(group_size_.size(), {});
}

void GroupGate::Admit(std::span<const int> newly_ready, std::vector<int>* released) {
  released->clear();
  for (int t : newly_ready) {
    int g = group_of_[t];
    if (g < 0) {
      released->push_back(t);
      continue;
    }
    held_[g].push_back(t);
    if (++group_ready_[g] == group_size_[g]) {
      released->insert(released->end(), held_[g].begin(), held_[g].end());
      held_[g].clear();
    }
  }
  std::sort(released->begin(), released->end());
}

}  // namespace fusion_internal

using fusion_internal::AssignGroups;
using fusion_internal::PackResponses;
using fusion_internal::ReadyTensor;

FusionPolicy::FusionPolicy(const Workload& workload, int64_t threshold_bytes, int num_groups,
                           int world_size)
    : threshold_bytes_(threshold_bytes), gate_(AssignGroups(workload, num_groups)) {
  const int n = static_cast<int>(workload.tensors.size());
  response_of_.resize(n);
  for (int t = 0; t < n; ++t) {
    const TensorSpec& spec = workload.tensors[t];
    ReadyTensor& r = response_of_[t];
    r.tensor = t;
    r.op = spec.op;
    r.dtype = spec.dtype;
    r.bytes = FusionBytes(spec, world_size);
    r.group = gate_.group_of(t);
  }
  released_.reserve(n);
  responses_.reserve(n);
}

std::vector<FusedCollective> FusionPolicy::Cycle(std::span<const int> newly_ready) {
  gate_.Admit(newly_ready, &released_);
  responses_.clear();
  for (int t : released_) responses_.push_back(response_of_[t]);
  return PackResponses(responses_, threshold_bytes_);
}

void FusionPolicy::Reset() { gate_.Reset(); }

int64_t HorovodFusionThresholdBytes(int64_t threshold_bytes, int local_size) {
  if (local_size < 1) return threshold_bytes;
  constexpr int64_t kFloat64Bytes = 8;
  constexpr int64_t kFusionBufferAtomicUnit = 64;
  const int64_t unit = local_size * kFloat64Bytes * kFusionBufferAtomicUnit;
  return (threshold_bytes + unit - 1) / unit * unit;
}

HorovodCycleSchedule::HorovodCycleSchedule(const Workload& workload, const Knobs& knobs,
                                           int world_size, int local_size)
    : fusion_(workload, HorovodFusionThresholdBytes(knobs.threshold_bytes(), local_size),
              knobs.num_groups, world_size),
      hierarchical_allreduce_(knobs.hierarchical_allreduce),
      hierarchical_allgather_(knobs.hierarchical_allgather) {}

std::unique_ptr<StepSchedule> HorovodCycleSchedule::Clone() const {
  return std::make_unique<HorovodCycleSchedule>(*this);
}

std::vector<FusedCollective> HorovodCycleSchedule::Launch(std::span<const int> newly_ready) {
  return fusion_.Cycle(newly_ready);
}

Algorithm HorovodCycleSchedule::AlgorithmOf(Op op) const {
  const bool hierarchical =
      op == Op::kAllreduce ? hierarchical_allreduce_ : hierarchical_allgather_;
  return hierarchical ? Algorithm::kHierarchical : Algorithm::kFlat;
}

CollectiveCopies HorovodCycleSchedule::CopiesOf(const FusedCollective& c) const {
  return FusionBufferCopies(c);
}

const std::vector<std::vector<int>>& HorovodCycleSchedule::buckets() const {
  static const std::vector<std::vector<int>> kNone;
  return kNone;
}

void HorovodCycleSchedule::Reset() { fusion_.Reset(); }

bool HorovodCycleSchedule::EndStep(std::span<const int> /*ready_order*/) {
  fusion_.Reset();
  return false;
}

}  // namespace autotune
