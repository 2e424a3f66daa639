// Internal to the Horovod timeline import (formats/horovod_timeline.h): the timeline's events
// read once, in file order, into per-tensor occurrences and the cycle marks. What is kept
// grows with the number of tensor occurrences, never with the text of the events.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "traces/status.h"

namespace autotune::timeline_internal {

// What a timeline process (one per tensor) does, from its name's prefix.
enum class ProcessKind { kAllreduce, kAllgather, kBroadcast, kOther };

// One negotiation and operation of one tensor. Times in the timeline's microseconds; -1
// where the event did not occur (or had not ended when the file stopped).
struct Occurrence {
  double negotiate_start_us = -1.0;  // NEGOTIATE_* begins (the op's begin without one)
  double negotiate_end_us = -1.0;
  std::vector<double> rank_ready_us;  // per rank from its tick, -1 without; empty: no ticks
  double op_start_us = -1.0;          // ALLREDUCE / ALLGATHER / ... begins
  double activity_start_us = -1.0;    // the first activity inside the op begins
  double op_end_us = -1.0;            // ... ends: the occurrence is complete
  double copy_in_end_us = -1.0;       // MEMCPY_IN_FUSION_BUFFER ends
  double comm_start_us = -1.0;        // first MPI_* / NCCL_* / ... activity begins
  double comm_end_us = -1.0;          // last one ends
  double copy_out_start_us = -1.0;    // MEMCPY_OUT_FUSION_BUFFER begins
  bool nccl = false;                  // a communication activity was NCCL_*

  bool complete() const { return op_end_us >= 0.0; }
};

// An event still open (B without its E yet) on one process.
enum class Frame { kNegotiate, kOp, kCopyIn, kCopyOut, kComm, kOther };

struct Process {
  std::string name;  // the tensor's name, without the "allreduce." prefix
  ProcessKind kind = ProcessKind::kOther;
  int64_t pid = 0;
  int64_t order = 0;  // rank of its first appearance among the processes
  std::vector<Occurrence> occurrences;
  std::vector<Frame> open;  // innermost last
  // From the first op end that carried args: dtype as written, shape, and that event.
  bool has_args = false;
  std::string dtype;
  std::vector<int64_t> shape;
  int64_t args_event = -1;
};

struct TimelineEvents {
  std::unordered_map<int64_t, Process> processes;  // by pid
  std::vector<double> cycle_starts_us;             // CYCLE_START marks, ascending
  double first_ts_us = -1.0;                       // earliest timestamp, -1 without any
  // The wall clock (microseconds since the Unix epoch) at the timeline's ts 0, from pid 0's
  // process_name metadata (start_time_since_epoch_in_micros); -1 where the file has none.
  double start_epoch_us = -1.0;
  int max_rank_tick = -1;                          // highest rank named by a tick
  int64_t max_rank_tick_event = -1;                // the event that named it
  bool truncated = false;                          // the text ended mid-array
  int64_t events = 0;                              // complete events read
};

// Reads text (a JSON array of Chrome-trace events as Horovod writes it) into *out. A text
// that ends inside the array is truncated: the events complete before the cut are read.
// Errors, one line, InvalidArgument: "SOURCE: event K: what" (K counts the array's elements
// from 0), or "SOURCE: not a Horovod timeline (...)" when the text is no array.
Status ReadTimelineEvents(const std::string& text, const std::string& source, TimelineEvents* out);

// Parses a shape as Horovod writes it ("[1000, 2048]", "[]"); false unless every dimension
// is a positive integer.
bool ParseShape(const std::string& text, std::vector<int64_t>* shape);

}  // namespace autotune::timeline_internal
