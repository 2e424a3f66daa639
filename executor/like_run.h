// `record --like-run N`: the workload of a stored run (recorded, or a real job's imported
// timeline) as the executor replays it, derived by traces/workload_from_trace.h.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "store/store.h"
#include "traces/status.h"
#include "traces/workload.h"

namespace autotune::executor {

struct LikeRun {
  Workload workload;                 // the run's tensors with its compute and ready times
  std::vector<double> rank_lead_ms;  // per rank of the run: how much earlier than the slowest
  double scale = 1.0;                // the run's own --scale (already in the workload)
};

// Reads run run_id's trace from store and derives its workload. Errors are prefixed
// "--like-run N: " (NotFound when the run is not there).
Status LoadLikeRun(Store* store, int64_t run_id, LikeRun* out);

// Collective over comm: every rank gets rank 0's *like (which rank 0 loaded with status
// `loaded`). Returns the status agreed by every rank; *like is valid only when OK.
Status ShareLikeRun(MPI_Comm comm, const Status& loaded, LikeRun* like);

}  // namespace autotune::executor
