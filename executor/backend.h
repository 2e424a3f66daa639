// Backend: the small table of primitives the executor needs from a collective library.
//
// In the nccl-tests spirit, a backend (MPI on host memory; NCCL on device memory)
// only fills in these primitives; the fusion engine, the hierarchical compositions
// (executor/hierarchical.h), the workload player and calibration are written once on top
// of them and never know which backend runs. Adding a backend never touches the engine.
//
// Memory: every pointer passed to a primitive is backend memory from Allocate() (host for
// MPI, device for NCCL), possibly offset. Host memory crosses in and out only through
// Upload/Download.
//
// Communicator levels: kWorld (all ranks), kIntra (the ranks of this node), kCross (one
// rank per node: the ranks with this rank's local rank, node order). Rank(level) and
// Size(level) give this rank's place in each.
//
// Ordering and timing: primitives may be asynchronous (enqueued on the backend's stream);
// they run in call order. Synchronize() returns when everything issued so far is finished,
// so a host clock read after Synchronize() times the work before it. The engine and the
// calibration harness time only that way.
//
// Threading: a backend object is used by one thread at a time (the executor's background
// thread during a step, the calling thread between steps).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "traces/backend_kind.h"
#include "traces/status.h"
#include "traces/workload.h"

namespace autotune::executor {

enum class Level { kWorld, kIntra, kCross };
const char* LevelName(Level level);  // "world" | "intra" | "cross"

// One copy of bytes between two backend buffers (copy-in to or copy-out of a fusion
// buffer). Regions of one batch never overlap each other.
struct CopySpan {
  void* dst = nullptr;
  const void* src = nullptr;
  int64_t bytes = 0;
};

// Backend memory. Frees itself through the backend that allocated it; the backend must
// outlive it.
class Buffer {
 public:
  Buffer() = default;
  virtual ~Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  virtual void* data() = 0;
  virtual int64_t bytes() const = 0;
  char* bytes_ptr() { return static_cast<char*>(data()); }
};

class Backend {
 public:
  virtual ~Backend() = default;

  // Which library this is: RunInfo::backend and Calibration::backend.
  virtual BackendKind kind() const = 0;
  // BackendName(kind()): "mpi" | "nccl".
  const char* name() const { return BackendName(kind()); }
  // CPU / GPU model and library version, for RunInfo::hardware.
  virtual std::string hardware() const = 0;

  virtual int Rank(Level level) const = 0;
  virtual int Size(Level level) const = 0;

  // --- memory -----------------------------------------------------------------------
  // Allocates bytes (>= 0) in the backend's memory space. Contents are unspecified.
  virtual Status Allocate(int64_t bytes, std::unique_ptr<Buffer>* out) = 0;
  // Host -> backend and backend -> host copies; synchronous (return when done).
  virtual Status Upload(const void* host_src, void* dst, int64_t bytes) = 0;
  virtual Status Download(const void* src, void* host_dst, int64_t bytes) = 0;
  // Sets bytes of backend memory to the byte value (stale-result poisoning in tests).
  virtual Status Fill(void* dst, int value, int64_t bytes) = 0;
  // Batched copies between backend buffers (fusion copy-in / copy-out).
  virtual Status BatchCopy(std::span<const CopySpan> copies) = 0;

  // --- collectives, in place on the communicator of `level` --------------------------
  // Sum of buf[0, count) over the ranks of level, left in buf on every rank.
  // dtype: every DType; float16/bfloat16 are summed exactly as the library can.
  virtual Status Allreduce(Level level, void* buf, int64_t count, DType dtype) = 0;
  // buf holds Size(level) blocks of block_bytes; this rank's block (index Rank(level)) is
  // filled on entry; on return every block holds its owner's data.
  virtual Status Allgather(Level level, void* buf, int64_t block_bytes) = 0;
  // buf holds Size(level) blocks of count elements. On return this rank's block (index
  // Rank(level)) holds the sum over ranks of that block; the other blocks are unspecified.
  virtual Status ReduceScatter(Level level, void* buf, int64_t count, DType dtype) = 0;
  // Copies buf[0, bytes) of rank `root` of level to every rank of level.
  virtual Status Broadcast(Level level, void* buf, int64_t bytes, int root) = 0;
  // buf holds Size(level) blocks of block_bytes; each rank's own block is filled. On
  // return the root holds every rank's block; other ranks' buffers are unchanged.
  virtual Status Gather(Level level, void* buf, int64_t block_bytes, int root) = 0;

  // --- ordering -----------------------------------------------------------------------
  // Waits until every primitive issued so far on this rank has finished.
  virtual Status Synchronize() = 0;
  // Blocks until every rank of level has called Barrier (used between timed regions).
  virtual Status Barrier(Level level) = 0;
};

}  // namespace autotune::executor
