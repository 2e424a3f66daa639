// The search sections of `autotune report`, one per search: the samples of one workload,
// topology, scale and backend (as `autotune search` selects them). Convergence, every sample
// by fidelity, the chosen setting against the default, simulated against measured, and what
// each knob does.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "store/store.h"
#include "tools/report/page.h"
#include "traces/status.h"

namespace autotune::cli {

// True when two runs belong to one search: same workload, topology shape, scale and backend.
bool SameSearchGroup(const RunInfo& a, const RunInfo& b);

struct SearchGroup {
  RunInfo run;                      // the group's newest measured or imported run
  std::vector<int64_t> trace_runs;  // every measured or imported run of the group
  std::vector<Sample> measured;     // its measured samples, oldest first
  std::vector<Sample> simulated;    // simulated samples of its runs' traces, oldest first
};

// The groups of `runs`' measured and imported runs (one per workload, topology shape, scale
// and backend, in order of first run) that hold at least one sample.
Status LoadSearchGroups(Store& store, const std::vector<RunInfo>& runs,
                        std::vector<SearchGroup>* groups);

// A measured setting and the simulator's prediction of it: the newest simulated sample of the
// same knobs.
struct SimulatedMeasuredPair {
  Knobs knobs;
  double measured_step_ms = 0.0;
  double simulated_step_ms = 0.0;
};
// One pair per measured sample with a simulated sample of its knobs, in measured order.
std::vector<SimulatedMeasuredPair> PairSimulatedWithMeasured(const SearchGroup& group);

// The section of one group. Its plots: convergence (when measured), samples by fidelity,
// chosen against default (ChoiceView), simulated against measured (when pairs exist), and
// the knob effects.
Status SearchSection(Store& store, const SearchGroup& group, ReportSection* section);

// The chosen setting against the default with their uncertainty, by the search's own rules
// (tuner::KnobSearch::Conclude over the group's measured samples and their step times): the
// posterior of each (mean, 95% band), each one's measured scores, the verdict and the speedup
// interval when measured. When no conclusion can be drawn (e.g. nothing measured) view->spec
// stays null and *note says why. Fails only when the store does.
Status ChoiceView(Store& store, const SearchGroup& group, ReportView* view, std::string* note);

}  // namespace autotune::cli
