#include "executor/fusion_engine.h"

#include <algorithm>
#include <utility>

namespace autotune::executor {

Status FusionEngine::Create(Backend* backend, const NodeLayout* layout, const Workload* workload,
                            TensorMemory* memory, ControlChannel* control, const Knobs& knobs,
                            std::unique_ptr<FusionEngine>* out, Framework framework) {
  std::unique_ptr<FusionEngine> e(new FusionEngine());
  e->backend_ = backend;
  e->layout_ = layout;
  e->workload_ = workload;
  e->knobs_ = knobs;
  e->memory_ = memory;
  e->framework_ = framework;
  if (framework == Framework::kDdp) {
    AUTOTUNE_RETURN_IF_ERROR(CheckDdpWorkload(*workload));
    if (backend->kind() != BackendKind::kMpi) {
      return Status::InvalidArgument(
          "--framework ddp runs on the mpi backend (host memory) only; the nccl backend plays "
          "Horovod's engine");
    }
    int64_t total = 0;
    for (int t = 0; t < memory->size(); ++t) total += memory->input_bytes(t);
    AUTOTUNE_RETURN_IF_ERROR(backend->Allocate(total, &e->area_).WithPrefix("DDP bucket area"));
    const int n = static_cast<int>(workload->tensors.size());
    e->policy_.emplace(*workload, knobs, framework, layout->size);
    e->LayOutBuckets();
    e->ready_us_.assign(n, 0.0);
    e->thread_ = std::thread([raw = e.get()] { raw->Loop(); });
    *out = std::move(e);
    return Status::Ok();
  }
  const int64_t threshold_bytes = knobs.threshold_bytes();

  // The fusion buffer holds the largest multi-member collective: at most the threshold,
  // and never more than the whole workload. Hierarchical allgather without block placement
  // stages whole results in a scratch buffer of the largest allgather.
  int64_t total = 0, largest_allgather = 0, total_allgather = 0;
  for (const TensorSpec& t : workload->tensors) {
    const int64_t b = FusionBytes(t, layout->size);
    total += b;
    if (t.op == Op::kAllgather) {
      largest_allgather = std::max(largest_allgather, b);
      total_allgather += b;
    }
  }
  const int64_t fusion_bytes = std::min(threshold_bytes, total);
  const int64_t scratch_bytes =
      std::max(largest_allgather, std::min(threshold_bytes, total_allgather));
  AUTOTUNE_RETURN_IF_ERROR(FusedExecutor::Create(backend, layout, workload, memory, fusion_bytes,
                                                 knobs.hierarchical_allgather ? scratch_bytes : 0,
                                                 &e->executor_));
  const int n = static_cast<int>(workload->tensors.size());
  e->negotiator_ = std::make_unique<Negotiator>(n, knobs.cache_capacity, control);
  e->policy_.emplace(*workload, threshold_bytes, knobs.num_groups, layout->size);
  e->ready_us_.assign(n, 0.0);
  e->thread_ = std::thread([raw = e.get()] { raw->Loop(); });
  *out = std::move(e);
  return Status::Ok();
}

FusionEngine::~FusionEngine() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    shutdown_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void FusionEngine::BeginStep(SteadyClock::time_point origin) {
  const int n = static_cast<int>(workload_->tensors.size());
  {
    std::lock_guard<std::mutex> lock(mu_);
    origin_ = origin;
    ready_queue_.clear();
    std::fill(ready_us_.begin(), ready_us_.end(), 0.0);
    record_ = EngineStepRecord();
    record_.tensors.resize(n);
    for (int t = 0; t < n; ++t) {
      record_.tensors[t].rank = layout_->rank;
      record_.tensors[t].tensor = t;
    }
    done_count_ = 0;
    collective_seq_ = 0;
    if (negotiator_) negotiator_->BeginStep();
    policy_->Reset();
    ready_order_.clear();
    step_status_ = Status::Ok();
    step_finished_ = false;
  }
  if (progress_ != nullptr) progress_->BeginStep();
  cv_.notify_all();
}

void FusionEngine::MarkReady(int tensor) {
  if (framework_ == Framework::kDdp) {
    const double ready = MicrosSince(origin_);
    if (!knobs_.ddp_gradient_as_bucket_view) {  // DDP's copy in the autograd hook
      const CopySpan copy{area_->bytes_ptr() + area_offset_[tensor], memory_->input(tensor),
                          memory_->input_bytes(tensor)};
      backend_->BatchCopy(std::span<const CopySpan>(&copy, 1));
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      ready_us_[tensor] = ready;
      ready_queue_.push_back(tensor);
      if (progress_ != nullptr) progress_->Submitted(tensor);
    }
    cv_.notify_all();
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  ready_us_[tensor] = MicrosSince(origin_);
  ready_queue_.push_back(tensor);
  if (progress_ != nullptr) progress_->Submitted(tensor);
}

Status FusionEngine::WaitStepFinished(EngineStepRecord* record) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return step_finished_; });
  for (TensorEvent& e : record_.tensors) e.ready_us = ready_us_[e.tensor];
  *record = std::move(record_);
  record_ = EngineStepRecord();
  return step_status_;
}

void FusionEngine::Loop() {
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return shutdown_ || !step_finished_; });
      if (shutdown_) return;
    }
    Status st = RunStep();
    {
      std::lock_guard<std::mutex> lock(mu_);
      step_status_ = st;
      step_finished_ = true;
    }
    cv_.notify_all();
  }
}

Status FusionEngine::RunStep() {
  if (framework_ == Framework::kDdp) return RunDdpStep();
  const int n = static_cast<int>(workload_->tensors.size());
  const auto period = std::chrono::duration_cast<SteadyClock::duration>(
      std::chrono::duration<double, std::milli>(knobs_.cycle_time_ms));
  SteadyClock::time_point next;
  {
    std::lock_guard<std::mutex> lock(mu_);
    next = origin_;
  }
  std::vector<int> newly_ready;
  for (int cycle = 0; done_count_ < n; ++cycle) {
    std::this_thread::sleep_until(next);
    next = SteadyClock::now() + period;
    newly_ready.clear();
    {
      std::lock_guard<std::mutex> lock(mu_);
      newly_ready.swap(ready_queue_);
    }
    AUTOTUNE_RETURN_IF_ERROR(RunCycle(cycle, newly_ready));
    record_.cycles_run = cycle + 1;
  }
  return Status::Ok();
}

Status FusionEngine::RunCycle(int cycle, const std::vector<int>& newly_ready) {
  CycleRecord rec;
  rec.rank = layout_->rank;
  rec.cycle = cycle;
  rec.start_us = MicrosSince(origin_);
  rec.submitted = static_cast<int>(newly_ready.size());
  CycleOutcome outcome;
  AUTOTUNE_RETURN_IF_ERROR(negotiator_->Cycle(newly_ready, &outcome));
  rec.negotiate_end_us = MicrosSince(origin_);
  rec.cache_hits = outcome.cache_hits;
  rec.responses = static_cast<int>(outcome.responses.size());

  const std::vector<FusedCollective> fused = policy_->Cycle(outcome.responses);
  for (const FusedCollective& c : fused) {
    FusedTimes times;
    AUTOTUNE_RETURN_IF_ERROR(executor_->Run(c, knobs_.hierarchical_allreduce,
                                            knobs_.hierarchical_allgather, origin_, &times));
    CollectiveRecord cr;
    cr.rank = layout_->rank;
    cr.seq = collective_seq_++;
    cr.cycle = cycle;
    cr.op = c.op;
    const bool hierarchical =
        c.op == Op::kAllreduce ? knobs_.hierarchical_allreduce : knobs_.hierarchical_allgather;
    cr.algorithm = hierarchical ? Algorithm::kHierarchical : Algorithm::kFlat;
    cr.bytes = c.bytes;
    cr.tensors = c.tensors;
    cr.start_us = times.start_us;
    cr.copy_in_end_us = times.copy_in_end_us;
    cr.comm_end_us = times.comm_end_us;
    cr.end_us = times.end_us;
    record_.collectives.push_back(std::move(cr));
    for (int t : c.tensors) record_.tensors[t].done_us = times.end_us;
    done_count_ += static_cast<int>(c.tensors.size());
    if (progress_ != nullptr) progress_->Advanced();
  }
  rec.collectives = static_cast<int>(fused.size());
  if (rec.submitted > 0 || rec.responses > 0 || rec.collectives > 0) {
    record_.cycles.push_back(rec);
  }
  return Status::Ok();
}

void FusionEngine::LayOutBuckets() {
  area_offset_.assign(workload_->tensors.size(), 0);
  int64_t offset = 0;
  for (const std::vector<int>& bucket : policy_->ddp()->buckets()) {
    for (int t : bucket) {
      area_offset_[t] = offset;
      offset += memory_->input_bytes(t);
    }
  }
}

std::vector<CopySpan> FusionEngine::AreaCopies(bool to_area) {
  std::vector<CopySpan> copies;
  for (int t = 0; t < memory_->size(); ++t) {
    char* place = area_->bytes_ptr() + area_offset_[t];
    if (to_area) {
      copies.push_back({place, memory_->input(t), memory_->input_bytes(t)});
    } else {
      copies.push_back({memory_->output(t), place, memory_->input_bytes(t)});
    }
  }
  return copies;
}

Status FusionEngine::PrepareStep() {
  if (framework_ != Framework::kDdp) return Status::Ok();
  if (relayout_) {
    LayOutBuckets();
    relayout_ = false;
  }
  if (!knobs_.ddp_gradient_as_bucket_view) return Status::Ok();
  return backend_->BatchCopy(AreaCopies(true));
}

Status FusionEngine::AfterStep() {
  if (framework_ != Framework::kDdp || !knobs_.ddp_gradient_as_bucket_view) return Status::Ok();
  return backend_->BatchCopy(AreaCopies(false));
}

Status FusionEngine::RunBucket(const FusedCollective& c, std::vector<double>* comm_end_of_tensor) {
  CollectiveRecord cr;
  cr.rank = layout_->rank;
  cr.seq = collective_seq_++;
  cr.cycle = cr.seq;  // buckets start in bucket order: the bucket index
  cr.op = Op::kAllreduce;
  cr.algorithm = Algorithm::kFlat;
  cr.bytes = c.bytes;
  cr.tensors = c.tensors;
  cr.start_us = MicrosSince(origin_);
  cr.copy_in_end_us = cr.start_us;  // copied in by MarkReady, on the player's thread
  char* buf = area_->bytes_ptr() + area_offset_[c.tensors.front()];
  AUTOTUNE_RETURN_IF_ERROR(
      backend_->Allreduce(Level::kWorld, buf, c.bytes / DTypeSize(c.dtype), c.dtype));
  AUTOTUNE_RETURN_IF_ERROR(backend_->Synchronize());
  cr.comm_end_us = MicrosSince(origin_);
  cr.end_us = cr.comm_end_us;
  for (int t : c.tensors) (*comm_end_of_tensor)[t] = cr.comm_end_us;
  record_.collectives.push_back(std::move(cr));
  done_count_ += static_cast<int>(c.tensors.size());
  if (progress_ != nullptr) progress_->Advanced();
  return Status::Ok();
}

Status FusionEngine::RunDdpStep() {
  const int n = static_cast<int>(workload_->tensors.size());
  std::vector<int> newly_ready;
  std::vector<double> comm_end(n, 0.0);
  while (done_count_ < n) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return shutdown_ || !ready_queue_.empty(); });
      if (shutdown_) return Status::Aborted("the engine shut down during a step");
      newly_ready.clear();
      newly_ready.swap(ready_queue_);
    }
    for (int t : newly_ready) {
      ready_order_.push_back(t);
      const int one[1] = {t};
      for (const FusedCollective& c : policy_->Cycle(one)) {
        AUTOTUNE_RETURN_IF_ERROR(RunBucket(c, &comm_end));
      }
    }
  }
  double done = record_.collectives.empty() ? 0.0 : record_.collectives.back().end_us;
  if (!knobs_.ddp_gradient_as_bucket_view) {  // DDP's finalize: results back to the gradients
    AUTOTUNE_RETURN_IF_ERROR(backend_->BatchCopy(AreaCopies(false)));
    done = MicrosSince(origin_);
    if (!record_.collectives.empty()) record_.collectives.back().end_us = done;
  }
  for (int t = 0; t < n; ++t) {
    record_.tensors[t].done_us = knobs_.ddp_gradient_as_bucket_view ? comm_end[t] : done;
  }
  const bool rebuilding = !policy_->ddp()->rebuilt();
  policy_->EndStep(ready_order_);
  // The new buckets take their places before the next step (AfterStep still reads this one's).
  relayout_ = rebuilding && policy_->ddp()->rebuilt();
  return Status::Ok();
}

}  // namespace autotune::executor
