// What `autotune search` writes and prints about one round: the config files (--out and the
// proposals, YAML), the --json document and the prose summary. The decisions are the search
// loop's (tuner/search_loop.h); these functions only present them.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "store/store.h"
#include "traces/knobs.h"
#include "traces/status.h"
#include "traces/trace.h"
#include "tuner/knob_search.h"
#include "tuner/search_loop.h"

namespace autotune::cli {

// One round of the search, as the presenters need it.
struct RoundReport {
  std::string db;           // --db
  std::string out;          // --out: the best setting's file
  RunInfo run;              // the run searched from
  tuner::SpaceScope scope;  // the target, and whether the on-request knobs were searched
  int measured = 0;
  int simulated = 0;
  int skipped_measured = 0;  // measured samples of another scale or backend, or a moved constant
  double rho = 1.0;
  tuner::SearchLoop::Conclusion conclusion;
  Knobs best_knobs;       // the setting written to `out`: conclusion.written()
  Knobs candidate_knobs;  // the setting judged against the default: conclusion.candidate
  Knobs default_knobs;
  std::vector<Knobs> proposal_knobs;        // one per conclusion.proposals
  std::vector<std::string> proposal_files;  // set by WriteSearchConfigs, as written
  // The decision as stored (tools/search/decision_record.h), id 0 when it was not: either
  // this round's, or the run's stored one with the same evidence (decision_reused), which
  // the summary, --json and best.yaml then show instead of the round's.
  StoredDecision decision;
  bool decision_reused = false;
};

// "1.234 GB/s": a score for people (4 significant digits).
std::string Gbps(double bytes_per_s);
// "" when not stopped, else StopReasonName(stop): the text of --json's stop_reason.
std::string StopText(tuner::StopReason stop);
// How `setting` is known: "measured Nx", "predicted by co-kriging, not measured yet" (with
// measured samples elsewhere in the report) or "simulated only, not measured yet".
std::string Evidence(const RoundReport& report, const tuner::Reported& setting);
// The one line of the verdict. When the candidate beats the default: "best: KNOBS beats the
// default: steps P% shorter (speedup S, C% interval [L, H]; noise ±X%)"; otherwise "no setting
// beats the default beyond noise (±X%); keeping the defaults", X the measured noise (the
// larger coefficient of variation of step times, within samples or across repeats), or
// "(noise not measured yet)" without measured step times. A reused stored decision's line is
// the stored one.
std::string VerdictLine(const RoundReport& report);
// The verdict line of the round's own decision (the one stored).
std::string RoundVerdictLine(const RoundReport& report);
// The comment that heads every file of a round that searched the knobs searched on request
// (the knob table's `searched` column), "" otherwise: for each such knob that a training
// script takes (its `script_call`), its value must be passed there (num_groups=N to
// hvd.DistributedOptimizer; at the default: not passed); `apply` cannot set it.
std::string GroupsNote(const RoundReport& report, const Knobs& knobs);
// OUT.nextI.yaml for OUT.yaml (or OUT.yml, or OUT without either): proposal I's file (1-based).
std::string ProposalPath(const std::string& out, int index);

// Writes the best setting to report->out and each proposal to ProposalPath(out, i), each with
// its provenance; appends each proposal's path to report->proposal_files once written.
Status WriteSearchConfigs(RoundReport* report);
// The --json document (one object).
nlohmann::json SearchJson(const RoundReport& report);
// The prose summary: the run, the best setting, what to measure next, why it stops.
void PrintSearchSummary(const RoundReport& report, std::ostream& out);

}  // namespace autotune::cli
