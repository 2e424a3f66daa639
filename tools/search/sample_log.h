// What `autotune search` and `autotune record --autotune` share beyond the search loop
// (tuner/knob_search.h): the --autotune-log-file CSV.
#pragma once

#include <fstream>
#include <string>

#include "traces/knobs.h"
#include "traces/status.h"
#include "tuner/knob_search.h"

namespace autotune::cli {

// The CSV of --autotune-log-file: Horovod's columns first (its units: threshold
// in MB, score in bytes per microsecond), then every other knob, the fidelity
// and the score in bytes/s.
class SampleLog {
 public:
  // An empty path: no log, Write does nothing.
  Status Open(const std::string& path);
  void Write(const Knobs& knobs, const std::string& fidelity, double score_bytes_per_s);

 private:
  std::ofstream file_;
};

// Horovod's columns of the log as the help names them: "hierarchical_allreduce,
// hierarchical_allgather, cycle_time_ms, tensor_fusion_threshold in MB" (the knob table's log
// columns in order, each with its summary unit unless its name ends in it).
std::string HorovodLogColumnsText();

// A listener of the search that writes each sample it takes in to `log` (which must outlive
// the search).
tuner::SampleListener LogTo(SampleLog* log);

}  // namespace autotune::cli
