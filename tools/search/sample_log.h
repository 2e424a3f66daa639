// What `autotune search` and `autotune record --autotune` share beyond the search loop
// (tuner/knob_search.h): the --autotune-log-file CSV.
#pragma once

#include <fstream>
#include <string>

#include "traces/fidelity.h"
#include "traces/knobs.h"
#include "traces/status.h"
#include "tuner/knob_search.h"

namespace autotune::cli {

// The CSVs of --autotune-log-file FILE. FILE holds the measured samples in Horovod's own layout
// (formats/horovod_autotune_log.h: its 7 columns exactly as Horovod writes them, threshold in MB,
// score in bytes per microsecond), then, after them, every other knob, the fidelity and the score
// in bytes/s: a reader of Horovod's logs, which reads columns by name or takes the first 7, reads
// it as a Horovod log. The simulated samples go to FILE.simulated.csv (same columns), so that no
// such reader takes a prediction for a measurement. Like Horovod's (LogBestParameters), the log
// ends, once the command has decided, with a row of the setting it wrote (--out), the default when
// nothing beat it beyond noise, scored by that setting's measured samples (their mean); its
// fidelity cell is "best", so a reader that takes a log's last row as the best one (Horovod's
// convention) finds the decision, and `import --horovod-autotune-log` does not take it for a
// sample. No best row when the written setting was never measured (an offline search on
// simulations only).
class SampleLog {
 public:
  // An empty path: no log, Write does nothing. Both files are written afresh (headers).
  Status Open(const std::string& path);
  void Write(const Knobs& knobs, Fidelity fidelity, double score_bytes_per_s);
  // The last row: the decision (see above). Call once, after the last sample.
  void WriteBest(const Knobs& knobs, double measured_score_bytes_per_s);

 private:
  std::ofstream measured_;
  std::ofstream simulated_;
};

// The file of the simulated samples of the log at `path`: "PATH.simulated.csv".
std::string SimulatedLogPath(const std::string& path);

// Horovod's columns of the log as the help names them: "hierarchical_allreduce,
// hierarchical_allgather, torus_allreduce, cache_enabled, cycle_time_ms, tensor_fusion_threshold in
// MB, score".
std::string HorovodLogColumnsText();

// A listener of the search that writes each sample it takes in to `log` (which must outlive the
// search).
tuner::SampleListener LogTo(SampleLog* log);

}  // namespace autotune::cli
