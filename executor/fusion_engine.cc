#include "executor/fusion_engine.h"

#include <algorithm>
#include <string>
#include <utility>

#include "traces/fusion_policy.h"

namespace autotune::executor {

Status FusionEngine::Create(Backend* backend, const NodeLayout* layout, const Workload* workload,
                            TensorMemory* memory, ControlChannel* control, const Knobs& knobs,
                            std::unique_ptr<FusionEngine>* out, Framework framework) {
  std::unique_ptr<FusionEngine> e(new FusionEngine());
  e->backend_ = backend;
  e->layout_ = layout;
  e->workload_ = workload;
  e->knobs_ = knobs;
  e->schedule_ = MakeStepSchedule(*workload, knobs, framework, layout->size);
  e->gradient_copies_ = e->schedule_->gradient_copies();
  if (e->gradient_copies_.bucket_area) {
    AUTOTUNE_RETURN_IF_ERROR(BucketArea::Create(backend, workload, memory, &e->area_));
    e->area_->LayOut(e->schedule_->buckets());
  } else {
    // The fusion buffer holds the largest multi-member collective: at most the threshold,
    // and never more than the whole workload. Hierarchical allgather without block placement
    // stages whole results in a scratch buffer of the largest allgather.
    const int64_t threshold_bytes = knobs.threshold_bytes();
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
    const bool hierarchical_allgather =
        e->schedule_->AlgorithmOf(Op::kAllgather) == Algorithm::kHierarchical;
    AUTOTUNE_RETURN_IF_ERROR(FusedExecutor::Create(backend, layout, workload, memory, fusion_bytes,
                                                   hierarchical_allgather ? scratch_bytes : 0,
                                                   &e->executor_));
  }
  const int n = static_cast<int>(workload->tensors.size());
  if (e->schedule_->pacing() == Pacing::kNegotiatedCycle) {
    e->negotiator_ = std::make_unique<Negotiator>(n, knobs.cache_capacity, control);
  }
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
    schedule_->Reset();
    ready_order_.clear();
    step_status_ = Status::Ok();
    ready_copy_status_ = Status::Ok();
    step_finished_ = false;
  }
  if (progress_ != nullptr) progress_->BeginStep();
  cv_.notify_all();
}

void FusionEngine::MarkReady(int tensor) {
  const double ready_us = MicrosSince(origin_);
  // On the caller's thread, as DDP's autograd hook copies; a failure ends the step's status.
  const Status copied =
      gradient_copies_.copy_in_when_ready ? area_->CopyIn(tensor) : Status::Ok();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!copied.ok() && ready_copy_status_.ok()) {
      ready_copy_status_ = copied.WithPrefix("copying gradient " + std::to_string(tensor) +
                                             " into its bucket");
    }
    ready_us_[tensor] = ready_us;
    ready_queue_.push_back(tensor);
    if (progress_ != nullptr) progress_->Submitted(tensor);
  }
  cv_.notify_all();
}

Status FusionEngine::WaitStepFinished(EngineStepRecord* record) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return step_finished_; });
  for (TensorEvent& e : record_.tensors) e.ready_us = ready_us_[e.tensor];
  *record = std::move(record_);
  record_ = EngineStepRecord();
  return step_status_.ok() ? ready_copy_status_ : step_status_;
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
  switch (schedule_->pacing()) {
    case Pacing::kNegotiatedCycle:
      AUTOTUNE_RETURN_IF_ERROR(RunCycles());
      break;
    case Pacing::kOnReady:
      AUTOTUNE_RETURN_IF_ERROR(RunOnReady());
      break;
  }
  if (gradient_copies_.copy_back_at_step_end) {
    AUTOTUNE_RETURN_IF_ERROR(area_->CopyAllOut());
    RecordCopyBack(MicrosSince(origin_), &record_.collectives, &record_.tensors);
  }
  // Changed buckets take their places before the next step (AfterStep still reads this one's).
  relayout_ = schedule_->EndStep(ready_order_);
  return Status::Ok();
}

Status FusionEngine::TakeReady(bool wait, std::vector<int>* newly_ready) {
  newly_ready->clear();
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (wait) {
      cv_.wait(lock, [&] { return shutdown_ || !ready_queue_.empty(); });
      if (shutdown_) return Status::Aborted("the engine shut down during a step");
    }
    newly_ready->swap(ready_queue_);
  }
  ready_order_.insert(ready_order_.end(), newly_ready->begin(), newly_ready->end());
  return Status::Ok();
}

Status FusionEngine::RunCycles() {
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
    AUTOTUNE_RETURN_IF_ERROR(TakeReady(false, &newly_ready));
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

  const std::vector<FusedCollective> fused = schedule_->Launch(outcome.responses);
  for (const FusedCollective& c : fused) AUTOTUNE_RETURN_IF_ERROR(Launch(c, cycle));
  rec.collectives = static_cast<int>(fused.size());
  if (rec.submitted > 0 || rec.responses > 0 || rec.collectives > 0) {
    record_.cycles.push_back(rec);
  }
  return Status::Ok();
}

Status FusionEngine::RunOnReady() {
  const int n = static_cast<int>(workload_->tensors.size());
  std::vector<int> newly_ready;
  while (done_count_ < n) {
    AUTOTUNE_RETURN_IF_ERROR(TakeReady(true, &newly_ready));
    for (int t : newly_ready) {
      const int one[1] = {t};
      for (const FusedCollective& c : schedule_->Launch(one)) {
        AUTOTUNE_RETURN_IF_ERROR(Launch(c, collective_seq_));
      }
    }
  }
  return Status::Ok();
}

Status FusionEngine::Launch(const FusedCollective& c, int cycle) {
  const Algorithm algorithm = schedule_->AlgorithmOf(c.op);
  CollectivePhases phases;
  AUTOTUNE_RETURN_IF_ERROR(area_ ? area_->Run(c, algorithm, origin_, &phases)
                                 : executor_->Run(c, algorithm, origin_, &phases));
  record_.collectives.push_back(
      RecordOf(c, algorithm, phases, layout_->rank, collective_seq_++, cycle));
  for (int t : c.tensors) record_.tensors[t].done_us = phases.end_us;
  done_count_ += static_cast<int>(c.tensors.size());
  if (progress_ != nullptr) progress_->Advanced();
  return Status::Ok();
}

Status FusionEngine::PrepareStep() {
  if (!area_) return Status::Ok();
  if (relayout_) {
    area_->LayOut(schedule_->buckets());
    relayout_ = false;
  }
  return gradient_copies_.copy_in_when_ready ? Status::Ok() : area_->CopyAllIn();
}

Status FusionEngine::AfterStep() {
  if (!area_ || gradient_copies_.copy_back_at_step_end) return Status::Ok();
  return area_->CopyAllOut();
}

}  // namespace autotune::executor
