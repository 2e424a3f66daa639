// MPI process plumbing shared by record, calibrate, tests and benchmarks: initialization
// with the thread level the executor needs, and agreement on errors across ranks.
#pragma once

#include <mpi.h>

#include "traces/status.h"

namespace autotune::executor {

// The executor's threading contract: during a step only the engine's background thread
// calls MPI, and between steps only the caller's thread, the hand-over ordered by a mutex.
// That is MPI_THREAD_SERIALIZED. The stall check's thread (executor/stall_inspector.h)
// sends and receives beside them: MPI_THREAD_MULTIPLE is asked for, and needed by it only.
inline constexpr int kRequiredThreadLevel = MPI_THREAD_SERIALIZED;
inline constexpr int kRequestedThreadLevel = MPI_THREAD_MULTIPLE;

// Initializes MPI (MPI_Init_thread at kRequestedThreadLevel) unless already initialized,
// and finalizes on destruction what it initialized.
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  // Fails naming the thread level when MPI gives less than kRequiredThreadLevel.
  const Status& status() const { return status_; }

 private:
  bool owns_ = false;
  Status status_;
};

// Fails unless MPI is initialized at kRequiredThreadLevel or better.
Status CheckMpiReady();

// Collective over comm: returns OK when local is OK on every rank, else the status of the
// lowest failing rank, on every rank (its message prefixed "rank N: " when N != 0).
Status AgreeOnStatus(MPI_Comm comm, const Status& local);

}  // namespace autotune::executor
