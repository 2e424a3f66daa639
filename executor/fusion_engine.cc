#include "executor/fusion_engine.h"

#include <algorithm>
#include <utility>

namespace autotune::executor {

Status FusionEngine::Create(Backend* backend, const NodeLayout* layout, const Workload* workload,
                            TensorMemory* memory, ControlChannel* control, const Knobs& knobs,
                            std::unique_ptr<FusionEngine>* out) {
  std::unique_ptr<FusionEngine> e(new FusionEngine());
  e->backend_ = backend;
  e->layout_ = layout;
  e->workload_ = workload;
  e->knobs_ = knobs;
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
    negotiator_->BeginStep();
    policy_->Reset();
    step_status_ = Status::Ok();
    step_finished_ = false;
  }
  if (progress_ != nullptr) progress_->BeginStep();
  cv_.notify_all();
}

void FusionEngine::MarkReady(int tensor) {
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

}  // namespace autotune::executor
