// `autotune import --horovod-autotune-log FILE --run N`: the rows of a user's past Horovod autotune
// run (HOROVOD_AUTOTUNE_LOG) become measured samples of run N's job.
#pragma once

#include <cstdint>
#include <string>

namespace autotune::cli {

struct AutotuneLogImport {
  std::string log;      // the CSV Horovod wrote (formats/horovod_autotune_log.h)
  int64_t job_run = 0;  // the job's measured or imported run: workload, topology, backend,
                        // scale and the knobs the log does not hold come from it
  std::string db;
  bool again = false;  // store the samples of a log imported before once more
  bool json = false;
};

// Reads the log and run N, then stores in one transaction a run of kind imported that holds the
// log's samples (no steps; incomplete, its end reason saying so) and one measured sample per row,
// with N's workload and topology, so that `search --run N` blends them. A log imported before for
// the same run is reused unless `again`. Prints a summary (or one JSON object) and returns the exit
// code; a bad log or run prints one error line, exits 1 and leaves the database as it was.
int ImportHorovodAutotuneLog(const AutotuneLogImport& in);

}  // namespace autotune::cli
