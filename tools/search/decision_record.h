// A search round's decision as the database keeps it (store/store.h, StoredDecision): made from
// a round's report, shown by `search`, `runs` and `report` as stored rather than recomputed.
#pragma once

#include <string>
#include <vector>

#include "store/store.h"
#include "tools/search/round_files.h"

namespace autotune::cli {

// What a round decided from, as a key: the ids of the measured samples it had, the run, the
// target and the default (with the constants). A later round with the same key has nothing
// new to decide on and shows the stored decision.
std::string EvidenceKey(const RoundReport& report, const std::vector<Sample>& measured);

// Writes d's verdict, speedup interval (when it has one), noise and the real runs the
// comparison used into *out; the settings, command, key and summary stay the caller's
// (search's ToStored below and record --autotune's).
void FillDecisionEvidence(const tuner::Decision& d, StoredDecision* out);

// The round's decision to store: chosen = report.best_knobs (the written setting), the
// candidate, the default, the verdict with its interval and noise, the verdict line, and the
// real runs its comparison used (in the order they ran).
StoredDecision ToStored(const RoundReport& report, const std::string& command,
                        const std::string& evidence_key);

// "decision 3 (search, 2026-11-25T20:10:00Z): KNOBS beats the default: yes, speedup 1.250
// [1.201, 1.302] from 4 real runs (runs 2 default, 3 candidate, ...)"; the runs say "left
// out" where one was (an outlier, or the run a disagreeing pair's cautious reading set aside).
// For search's summary, `runs` and `report`.
std::string DecisionLine(const StoredDecision& decision, Framework framework);

// "candidate K beats the default: VERDICT"; for a candidate that is the default itself, "the
// candidate is the default (K): nothing to compare".
std::string CandidateVerdictLine(const Knobs& candidate, Framework framework, bool is_default,
                                 const std::string& verdict_text);

// The stored decision as JSON (search --json's "decision", runs --json's "decision").
nlohmann::json DecisionToJson(const StoredDecision& decision);

// Stores the round's decision and writes its files (WriteSearchConfigs) as one: the decision
// is committed only once the files are written. When the newest stored decision of the run
// has the same EvidenceKey, it is shown instead: the written setting is the stored one and
// nothing is stored; unless it judged the same candidate and this round's rule gives another
// verdict (the rule changed since: an upgrade), then a note on stderr names both verdicts and
// this round's decision is stored after it. A database that cannot be written (read-only
// media) stores nothing and says so in a note on stderr; the files are still written.
Status DecideAndWrite(const std::string& command, const std::vector<Sample>& measured,
                      RoundReport* report);

}  // namespace autotune::cli
