// A Horovod job's ready log: each rank's gradient-ready times as autotune's
// recorder (python/autotune_torch/horovod_ready.py) wrote them, one file per
// rank, DIR/rank<R>.json:
//   {"format": "autotune-horovod-ready", "version": 1, "rank", "size",
//   "hostname",
//    "clock": "CLOCK_REALTIME", "tensors": [timeline names, "allreduce.NAME"],
//    "steps": [{"start_ns", "ready_us": [per tensor from start_ns; null where
//    none]}]}
// The timeline import (formats/horovod_timeline.h) takes each rank's ready
// times from it where Horovod's timeline can only bound them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "traces/status.h"

namespace autotune {

struct HorovodReadyLog {
  std::vector<std::string> tensors;  // the timeline's names, in rank 0's file order
  // step_start_epoch_us[rank][step]: the step's start, microseconds since the
  // Unix epoch.
  std::vector<std::vector<double>> step_start_epoch_us;
  // ready_us[rank][step][tensor] (tensors in rank 0's order): from that step's
  // start; < 0: no gradient that step.
  std::vector<std::vector<std::vector<double>>> ready_us;
  std::string content_hash;  // of every file's bytes, in rank order

  int ranks() const { return static_cast<int>(ready_us.size()); }
};

// The largest rank file read.
inline constexpr int64_t kMaxHorovodReadyFileBytes = int64_t{256} << 20;

// Reads DIR/rank0.json .. rank<size-1>.json. Errors, one line: IoError "cannot
// read ready log DIR: ..." for a missing folder or file; InvalidArgument "FILE:
// what is wrong" for a file that is not a ready log, names another rank or
// size, another clock, or tensors other than rank 0's, or whose steps are
// malformed.
Status ReadHorovodReadyLog(const std::string& dir, HorovodReadyLog* out);

}  // namespace autotune
