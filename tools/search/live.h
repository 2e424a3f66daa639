// `autotune search --live`: measures the search's proposals itself, running `autotune record`
// through a launcher (or, for a run imported from a real job, that job's own command:
// tools/search/live_job.h), and searches again.
#pragma once

#include "tools/search/offline.h"

namespace autotune::cli {

// Runs offline rounds (RunSearch) and measures each round's proposals, until the
// measured-sample budget is spent or nothing is worth measuring; the process exit code
// (non-zero after one line on stderr). Bagua's time-based flags become step counts by the
// run's median step time.
int RunLive(SearchFlags flags);

}  // namespace autotune::cli
