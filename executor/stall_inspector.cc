#include "executor/stall_inspector.h"

#include "executor/launch_status.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <utility>

namespace autotune::executor {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kTag = 7;  // on the inspector's own communicator
enum BeatKind : int64_t { kBeat = 1, kBye = 2 };
constexpr int kBeatWords = 4;  // kind, steps begun, submitted, events
constexpr int kFirstTensorsNamed = 3;

// What rank 0 last heard from one rank.
struct Heard {
  int64_t steps = 0;
  int64_t submitted = 0;
  int64_t events = 0;
  Clock::time_point at;
  bool bye = false;
  // The same progress (when and how it was heard aside).
  bool SameProgress(const Heard& o) const {
    return steps == o.steps && submitted == o.submitted && events == o.events;
  }
};

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::string WholeSeconds(double s) { return std::to_string(static_cast<int64_t>(s + 0.5)); }

}  // namespace

RankProgress::RankProgress(int num_tensors) : order_(std::max(0, num_tensors)) {
  for (std::atomic<int>& slot : order_) slot.store(-1, std::memory_order_relaxed);
}

void RankProgress::BeginStep() {
  submitted_.store(0, std::memory_order_relaxed);
  steps_begun_.fetch_add(1, std::memory_order_relaxed);
  events_.fetch_add(1, std::memory_order_relaxed);
}

void RankProgress::Submitted(int tensor) {
  const int i = submitted_.load(std::memory_order_relaxed);
  if (i < static_cast<int>(order_.size())) order_[i].store(tensor, std::memory_order_relaxed);
  submitted_.store(i + 1, std::memory_order_relaxed);
  events_.fetch_add(1, std::memory_order_relaxed);
}

class StallInspector::Impl {
 public:
  Impl(MPI_Comm comm, StallInspectorOptions options, const RankProgress* progress)
      : comm_(comm), options_(std::move(options)), progress_(progress) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    beat_s_ = std::min(1.0, options_.settings.check_s / 4);
    silent_s_ = std::max(3 * beat_s_, 1.0);
  }

  void GatherHosts() {
    char name[MPI_MAX_PROCESSOR_NAME] = {};
    int len = 0;
    MPI_Get_processor_name(name, &len);
    std::vector<char> all(rank_ == 0 ? size_ * MPI_MAX_PROCESSOR_NAME : 0);
    MPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME,
               MPI_CHAR, 0, comm_);
    for (int r = 0; rank_ == 0 && r < size_; ++r) {
      hosts_.emplace_back(all.data() + r * MPI_MAX_PROCESSOR_NAME);
    }
  }

  void StartThread() {
    thread_ = std::thread([this] { rank_ == 0 ? Judge() : Send(); });
  }

  void Stop() {
    if (comm_ == MPI_COMM_NULL) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
    MPI_Comm_free(&comm_);
  }

 private:
  void Fill(int64_t kind, int64_t* beat) const {
    beat[0] = kind;
    beat[1] = progress_->steps_begun();
    beat[2] = progress_->submitted();
    beat[3] = progress_->events();
  }

  // Ranks > 0: a beat every beat_s_ (skipped while the last one is still in flight), then
  // a bye that rank 0 waits for.
  void Send() {
    int64_t beat[kBeatWords];
    MPI_Request request = MPI_REQUEST_NULL;
    std::unique_lock<std::mutex> lock(mu_);
    while (!stopping_) {
      int sent = 1;
      if (request != MPI_REQUEST_NULL) MPI_Test(&request, &sent, MPI_STATUS_IGNORE);
      if (sent) {
        Fill(kBeat, beat);
        MPI_Isend(beat, kBeatWords, MPI_INT64_T, 0, kTag, comm_, &request);
      }
      cv_.wait_for(lock, std::chrono::duration<double>(beat_s_));
    }
    lock.unlock();
    if (request != MPI_REQUEST_NULL) MPI_Wait(&request, MPI_STATUS_IGNORE);
    Fill(kBye, beat);
    MPI_Send(beat, kBeatWords, MPI_INT64_T, 0, kTag, comm_);
  }

  // Rank 0: receives every beat as it comes, judges its own progress and theirs.
  void Judge() {
    heard_.assign(size_, Heard());
    for (Heard& h : heard_) h.at = Clock::now();
    last_change_ = Clock::now();
    int byes = 0;
    int64_t beat[kBeatWords];
    MPI_Request request = MPI_REQUEST_NULL;
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      if (request == MPI_REQUEST_NULL && byes < size_ - 1) {
        MPI_Irecv(beat, kBeatWords, MPI_INT64_T, MPI_ANY_SOURCE, kTag, comm_, &request);
      }
      int arrived = 0;
      MPI_Status status;
      if (request != MPI_REQUEST_NULL) MPI_Test(&request, &arrived, &status);
      if (arrived) {
        byes += Take(status.MPI_SOURCE, beat);
        continue;  // drain what is queued before judging
      }
      if (stopping_ && byes == size_ - 1) break;
      int64_t own[kBeatWords];
      Fill(kBeat, own);
      Take(0, own);
      Evaluate();
      cv_.wait_for(lock, std::chrono::milliseconds(20));
    }
  }

  // Records a beat from rank; returns 1 for a bye.
  int Take(int rank, const int64_t* beat) {
    if (rank < 0 || rank >= size_) return 0;
    Heard now;
    now.steps = beat[1];
    now.submitted = beat[2];
    now.events = beat[3];
    now.at = Clock::now();
    now.bye = beat[0] == kBye;
    if (!now.SameProgress(heard_[rank])) last_change_ = now.at;
    heard_[rank] = now;
    return now.bye ? 1 : 0;
  }

  void Evaluate() {
    const double stalled = SecondsSince(last_change_);
    if (stalled < options_.settings.check_s) {
      warned_ = false;
      return;
    }
    const StallSettings& s = options_.settings;
    if (!warned_) {
      warned_ = true;
      const std::string then =
          s.shutdown_s > 0 ? "; ending the job after " + WholeSeconds(s.shutdown_s) + " s"
                           : " (--stall-shutdown-s 0: waiting)";
      std::fprintf(stderr, "autotune: warning: stall: %s%s\n", Describe(stalled).c_str(),
                   then.c_str());
      std::fflush(stderr);
    }
    if (s.shutdown_s > 0 && stalled >= s.shutdown_s && options_.shutdown) {
      options_.shutdown(Describe(stalled));
    }
  }

  std::string StepName(int64_t steps_begun) const {
    const int64_t index = steps_begun - 1;
    if (index < options_.warmup_steps) {
      return "warm-up " + options_.what + " " + std::to_string(index);
    }
    return options_.what + " " + std::to_string(index - options_.warmup_steps);
  }

  // One line: how long, where, and who holds it up.
  std::string Describe(double stalled) const {
    const Heard* lead = &heard_[0];
    for (const Heard& h : heard_) {
      if (h.steps > lead->steps || (h.steps == lead->steps && h.submitted > lead->submitted)) {
        lead = &h;
      }
    }
    std::string line = "no progress for " + WholeSeconds(stalled) + " s in " +
                       StepName(lead->steps) + ":";
    bool named = false;
    for (int r = 0; r < size_; ++r) {
      const std::string why = Why(heard_[r], *lead);
      if (why.empty()) continue;
      line += std::string(named ? ";" : "") + " rank " + std::to_string(r) + " on " + hosts_[r] +
              " " + why;
      named = true;
    }
    if (!named) line += " every rank is alive and has submitted the same tensors";
    return line;
  }

  // Why rank (as last heard) holds the job up, "" when it does not appear to.
  std::string Why(const Heard& h, const Heard& lead) const {
    std::string why;
    const double quiet = SecondsSince(h.at);
    if (!h.bye && quiet > silent_s_) why = "not heard from for " + WholeSeconds(quiet) + " s";
    std::string held;
    if (h.steps < lead.steps) {
      held = "has not begun " + StepName(lead.steps) + " (the others have submitted " +
             std::to_string(lead.submitted) + " tensors" + FirstTensors(0, "; ", "") + ")";
    } else if (h.submitted < lead.submitted) {
      held = "has not submitted " + std::to_string(lead.submitted - h.submitted) + " of " +
             std::to_string(progress_->num_tensors()) + " tensors" +
             FirstTensors(h.submitted, " (", ")");
    }
    if (!held.empty()) why += (why.empty() ? "" : ", ") + held;
    return why;
  }

  // open + "first: a, b, c" + close from rank 0's latest submission order, from position
  // `from`; "" when no name is known there.
  std::string FirstTensors(int64_t from, const std::string& open, const std::string& close) const {
    std::string names;
    const int n = progress_->num_tensors();
    for (int64_t i = from; i < n && i < from + kFirstTensorsNamed; ++i) {
      const int t = progress_->OrderAt(static_cast<int>(i));
      if (t < 0 || t >= static_cast<int>(options_.tensor_names.size())) break;
      names += (names.empty() ? "" : ", ") + options_.tensor_names[t];
    }
    return names.empty() ? "" : open + "first: " + names + close;
  }

  MPI_Comm comm_;
  StallInspectorOptions options_;
  const RankProgress* progress_;
  int rank_ = 0, size_ = 1;
  double beat_s_ = 1.0, silent_s_ = 3.0;
  std::vector<std::string> hosts_;  // rank 0: host of each rank
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  // Rank 0's thread only.
  std::vector<Heard> heard_;
  Clock::time_point last_change_;
  bool warned_ = false;
};

void EndStalledJob(const std::string& line, const std::string& outcome, double shutdown_s) {
  std::fprintf(stderr, "autotune: error: stall: %s; %s (--stall-shutdown-s %g)\n", line.c_str(),
               outcome.c_str(), shutdown_s);
  std::fflush(stderr);
  NoteLaunchStatus("reported", "stall");
  MPI_Abort(MPI_COMM_WORLD, kStallExitCode);
  std::_Exit(kStallExitCode);
}

Status StallInspector::Start(MPI_Comm world, StallInspectorOptions options,
                             const RankProgress* progress, std::unique_ptr<StallInspector>* out) {
  AUTOTUNE_RETURN_IF_ERROR(ValidateStallSettings(options.settings));
  out->reset(new StallInspector(nullptr));
  if (options.settings.check_s == 0) return Status::Ok();
  int level = 0;
  MPI_Query_thread(&level);
  if (level < MPI_THREAD_MULTIPLE) {
    return Status::NotSupported("the stall check needs MPI_THREAD_MULTIPLE (turn it off with "
                                "--stall-check-s 0)");
  }
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_dup(world, &comm);
  auto impl = std::make_unique<Impl>(comm, std::move(options), progress);
  impl->GatherHosts();
  impl->StartThread();
  (*out)->impl_ = std::move(impl);
  return Status::Ok();
}

StallInspector::StallInspector(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

void StallInspector::Stop() {
  if (impl_) impl_->Stop();
}

StallInspector::~StallInspector() { Stop(); }

}  // namespace autotune::executor
