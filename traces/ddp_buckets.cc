#include "traces/ddp_buckets.h"

#include <algorithm>
#include <string>

namespace autotune {

std::vector<std::vector<int>> AssignDdpBuckets(const Workload& w, std::span<const int> order,
                                               int64_t first_cap_bytes, int64_t cap_bytes) {
  struct Open {
    DType dtype;
    std::vector<int> members;
    int64_t bytes = 0;
    bool first = true;  // the dtype's next bucket is its first (first_cap_bytes applies)
  };
  std::vector<Open> open;  // one per dtype, in order of appearance
  std::vector<std::vector<int>> out;
  for (int t : order) {
    const TensorSpec& spec = w.tensors[t];
    auto it = std::find_if(open.begin(), open.end(),
                           [&](const Open& o) { return o.dtype == spec.dtype; });
    if (it == open.end()) {
      it = open.insert(open.end(),
                       Open{.dtype = spec.dtype, .members = {}, .bytes = 0, .first = true});
    }
    it->members.push_back(t);
    it->bytes += spec.bytes();
    if (it->bytes >= (it->first ? first_cap_bytes : cap_bytes)) {
      out.push_back(std::move(it->members));
      it->members.clear();
      it->bytes = 0;
      it->first = false;
    }
  }
  for (Open& o : open) {
    if (!o.members.empty()) out.push_back(std::move(o.members));
  }
  return out;
}

int DdpCollectivesInFlight(CollectiveRunner runner) {
  switch (runner) {
    case CollectiveRunner::kHostLibrary:
      return 2;
    case CollectiveRunner::kNcclLibrary:
    case CollectiveRunner::kExecutor:
      break;
  }
  return 1;
}

Status CheckDdpWorkload(const Workload& w) {
  for (const TensorSpec& t : w.tensors) {
    if (t.op != Op::kAllreduce) {
      return Status::InvalidArgument("workload " + w.name + ": tensor " + t.name + " is an " +
                                     OpName(t.op) +
                                     "; DDP allreduces gradients only (framework ddp)");
    }
  }
  return Status::Ok();
}

DdpBucketPolicy::DdpBucketPolicy(const Workload& workload, int64_t first_cap_bytes,
                                 int64_t cap_bytes)
    : first_cap_bytes_(first_cap_bytes), cap_bytes_(cap_bytes) {
  for (const TensorSpec& t : workload.tensors) {
    bytes_.push_back(t.bytes());
    dtype_.push_back(t.dtype);
  }
  const std::vector<int> registration = RegistrationOrder(workload);
  buckets_ = AssignDdpBuckets(workload, registration, first_cap_bytes, cap_bytes);
  // torch sorts the up-front buckets by their earliest registered member, then reverses them.
  std::vector<int> position(registration.size());
  for (size_t i = 0; i < registration.size(); ++i) position[registration[i]] = static_cast<int>(i);
  auto earliest = [&](const std::vector<int>& b) {
    int p = static_cast<int>(position.size());
    for (int t : b) p = std::min(p, position[t]);
    return p;
  };
  std::stable_sort(buckets_.begin(), buckets_.end(),
                   [&](const auto& a, const auto& b) { return earliest(a) > earliest(b); });
  Index();
}

void DdpBucketPolicy::Index() {
  bucket_of_.assign(bytes_.size(), -1);
  for (size_t b = 0; b < buckets_.size(); ++b) {
    for (int t : buckets_[b]) bucket_of_[t] = static_cast<int>(b);
  }
  Reset();
}

void DdpBucketPolicy::Reset() {
  pending_.resize(buckets_.size());
  for (size_t b = 0; b < buckets_.size(); ++b) pending_[b] = static_cast<int>(buckets_[b].size());
  next_bucket_ = 0;
}

std::vector<FusedCollective> DdpBucketPolicy::Ready(std::span<const int> newly_ready) {
  for (int t : newly_ready) --pending_[bucket_of_[t]];
  std::vector<FusedCollective> out;
  const int n = static_cast<int>(buckets_.size());
  for (; next_bucket_ < n && pending_[next_bucket_] == 0; ++next_bucket_) {
    FusedCollective c;
    c.op = Op::kAllreduce;
    c.dtype = dtype_[buckets_[next_bucket_].front()];
    c.tensors = buckets_[next_bucket_];
    for (int t : c.tensors) c.bytes += bytes_[t];
    out.push_back(std::move(c));
  }
  return out;
}

void DdpBucketPolicy::EndStep(std::span<const int> ready_order) {
  if (!rebuilt_ && ready_order.size() == bytes_.size()) {
    Workload shape;  // AssignDdpBuckets reads sizes and dtypes only
    shape.tensors.resize(bytes_.size());
    for (size_t t = 0; t < bytes_.size(); ++t) {
      shape.tensors[t].dtype = dtype_[t];
      shape.tensors[t].shape = {bytes_[t] / DTypeSize(dtype_[t])};
    }
    buckets_ = AssignDdpBuckets(shape, ready_order, first_cap_bytes_, cap_bytes_);
    rebuilt_ = true;
    Index();
    return;
  }
  Reset();
}

DdpBucketSchedule::DdpBucketSchedule(const Workload& workload, const Knobs& knobs,
                                     int in_flight, bool host_copies)
    : policy_(workload, knobs.ddp_first_bucket_bytes(), knobs.ddp_bucket_cap_bytes()),
      bucket_view_(knobs.ddp_gradient_as_bucket_view),
      in_flight_(std::max(1, in_flight)),
      host_copies_(host_copies) {}

std::unique_ptr<StepSchedule> DdpBucketSchedule::Clone() const {
  return std::make_unique<DdpBucketSchedule>(*this);
}

std::vector<FusedCollective> DdpBucketSchedule::Launch(std::span<const int> newly_ready) {
  return policy_.Ready(newly_ready);
}

GradientCopies DdpBucketSchedule::gradient_copies() const {
  const bool copies = !bucket_view_ && host_copies_;
  return {.bucket_area = true, .copy_in_when_ready = copies, .copy_back_at_step_end = copies};
}

void DdpBucketSchedule::Reset() { policy_.Reset(); }

bool DdpBucketSchedule::EndStep(std::span<const int> ready_order) {
  const bool rebuilt_before = policy_.rebuilt();
  policy_.EndStep(ready_order);
  return !rebuilt_before && policy_.rebuilt();
}

}  // namespace autotune
