// Horovod's autotune log (HOROVOD_AUTOTUNE_LOG, horovodrun --autotune-log-file): the CSV that
// Horovod's ParameterManager writes on rank 0, out and in.
//
// Its layout (Horovod 0.28.1, horovod/common/parameter_manager.cc, Initialize, LogParameters and
// LogBestParameters): the header
//   hierarchical_allreduce,hierarchical_allgather,torus_allreduce,cache_enabled,cycle_time_ms,
//   tensor_fusion_threshold,score
// then one row per tuned sample, booleans as 0/1, numbers as a C++ stream writes a double (6
// significant digits), a space after the torus_allreduce cell ("0,0,0, 1,5,4,123.4"); the threshold
// is in MB (1 MB = 1048576 bytes) and the score in bytes per microsecond (the bytes of the tensors
// a rank reduced or gathered during the sample / the sample's microseconds). When its tuning ends,
// a last row written the same way holds the best setting and its score.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "traces/knobs.h"
#include "traces/status.h"

namespace autotune {

// The fidelity cell of the last row of autotune's own log: the setting the command decided on
// (Horovod's final best row, marked; tools/search/sample_log.h).
inline constexpr const char* kHorovodLogBestFidelity = "best";

// Horovod's header, its 7 columns without a newline.
std::string HorovodLogHeader();

// One row of Horovod's 7 columns for `knobs` scored `score_bytes_per_s`, without a newline:
// torus_allreduce is 0 (autotune has no torus allreduce), cache_enabled is cache_capacity > 0, the
// score is written in bytes per microsecond.
std::string HorovodLogRow(const Knobs& knobs, double score_bytes_per_s);

// A row of a log read back.
struct HorovodLogEntry {
  int line = 0;  // in the file, 1-based (the header is line 1)
  Knobs knobs;
  double score_bytes_per_s = 0.0;  // Horovod's score x 1e6
};

struct HorovodLog {
  std::vector<HorovodLogEntry> samples;  // the measured rows, in file order
  // The final best row, when Horovod's tuning ended: the last row, whose score repeats the best
  // earlier row's exactly (Horovod writes it with no other mark); in autotune's own log, the
  // last row whose fidelity is "best". Not a sample.
  std::optional<HorovodLogEntry> best;
  std::vector<int> torus_lines;  // rows with torus_allreduce 1, left out (no such knob here)
};

// Reads the log at `path`. Columns are found by name, so a log of an older Horovod (without
// torus_allreduce) and autotune's own --autotune-log-file (more columns after Horovod's, a
// "fidelity" column among them) read as well; a row whose fidelity is "simulated" is refused, and
// one whose fidelity is "best" (autotune's decision) is the log's best row and must be its last
// (in a log with a fidelity column no other row is taken for the best one, whatever its score).
// Each row's knobs are `base` (the knobs the log does not hold) with the log's settings applied:
// cache_enabled 1 keeps base's cache capacity (Knobs' default when base has none), 0 makes it 0.
// Errors are one line naming the file and, for a bad row, its line: "PATH line 3: cycle_time_ms
// \"x\" is not a number"; an empty log or one without rows is an error too.
Status ReadHorovodAutotuneLog(const std::string& path, const Knobs& base, HorovodLog* out);

}  // namespace autotune
