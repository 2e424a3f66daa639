#include "tools/search/decision_record.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "traces/files.h"
#include "tuner/search_policy.h"

namespace autotune::cli {

std::string EvidenceKey(const RoundReport& report, const std::vector<Sample>& measured) {
  std::vector<int64_t> ids;
  for (const Sample& s : measured) ids.push_back(s.id);
  std::sort(ids.begin(), ids.end());
  std::string key = "run=" + std::to_string(report.run.id) +
                    ";target=" + tuner::TargetName(report.scope.target) +
                    ";tune_groups=" + (report.scope.tune_on_request ? "1" : "0") + ";samples=";
  for (size_t i = 0; i < ids.size(); ++i) key += (i ? "," : "") + std::to_string(ids[i]);
  return key + ";default=" + KnobsToJson(report.default_knobs).dump();
}

void FillDecisionEvidence(const tuner::Decision& d, StoredDecision* out) {
  out->verdict = tuner::VerdictName(d.verdict);
  out->has_speedup = d.has_speedup && d.comparison.valid;
  if (out->has_speedup) {
    out->speedup = d.speedup.speedup;
    out->speedup_low = d.speedup.low;
    out->speedup_high = d.speedup.high;
    out->confidence = d.speedup.confidence;
  }
  out->noise_cv = d.noise.cv();
  for (const tuner::ComparedRun& r : d.comparison.runs) {
    out->runs.push_back({r.run_id, r.role == tuner::RunRole::kCandidate, r.steps, r.median_ms,
                         r.outlier || r.set_aside});
  }
}

StoredDecision ToStored(const RoundReport& report, const std::string& command,
                        const std::string& evidence_key) {
  const tuner::Decision& d = report.conclusion.decision;
  StoredDecision out;
  out.run_id = report.run.id;
  out.command = command;
  out.evidence_key = evidence_key;
  out.chosen = report.best_knobs;
  out.candidate = report.candidate_knobs;
  out.default_knobs = report.default_knobs;
  FillDecisionEvidence(d, &out);
  out.summary = RoundVerdictLine(report);
  return out;
}

std::string CandidateVerdictLine(const Knobs& candidate, Framework framework, bool is_default,
                                 const std::string& verdict_text) {
  if (is_default) {
    return "the candidate is the default (" + KnobsShort(candidate, framework) +
           "): nothing to compare";
  }
  return "candidate " + KnobsShort(candidate, framework) + " beats the default: " + verdict_text;
}

std::string DecisionLine(const StoredDecision& d, Framework framework) {
  tuner::Verdict verdict = tuner::Verdict::kIsDefault;
  const bool known = tuner::ParseVerdictName(d.verdict, &verdict);
  std::string line =
      "decision " + std::to_string(d.id) + " (" + d.command + ", " + d.created_at + "): " +
      CandidateVerdictLine(d.candidate, framework, known && verdict == tuner::Verdict::kIsDefault,
                           known ? tuner::VerdictText(verdict) : d.verdict);
  if (d.has_speedup) {
    char interval[128];
    std::snprintf(interval, sizeof(interval), ", speedup %.3f [%.3f, %.3f]", d.speedup,
                  d.speedup_low, d.speedup_high);
    line += interval;
  }
  if (!d.runs.empty()) {
    line += " from " + std::to_string(d.runs.size()) + " real runs (";
    for (size_t i = 0; i < d.runs.size(); ++i) {
      const DecisionRun& r = d.runs[i];
      char median[48];
      std::snprintf(median, sizeof(median), " %.4g ms", r.median_step_ms);
      line += (i ? ", " : "") + std::string(r.candidate ? "C" : "D") +
              (r.run_id > 0 ? " run " + std::to_string(r.run_id) : std::string()) + median +
              (r.outlier ? " left out" : "");
    }
    line += ")";
  }
  return line + "; chosen: " +
         (d.chosen == d.default_knobs ? "the default" : KnobsShort(d.chosen, framework));
}

nlohmann::json DecisionToJson(const StoredDecision& d) {
  nlohmann::json runs = nlohmann::json::array();
  for (const DecisionRun& r : d.runs) {
    runs.push_back({{"run", r.run_id},
                    {"role", r.candidate ? "candidate" : "default"},
                    {"steps", r.steps},
                    {"median_step_ms", r.median_step_ms},
                    {"outlier", r.outlier}});
  }
  nlohmann::json j = {{"id", d.id},
                      {"created_at", d.created_at},
                      {"run", d.run_id},
                      {"command", d.command},
                      {"chosen", KnobsToJson(d.chosen)},
                      {"candidate", KnobsToJson(d.candidate)},
                      {"default", KnobsToJson(d.default_knobs)},
                      {"verdict", d.verdict},
                      {"summary", d.summary},
                      {"noise_cv", d.noise_cv},
                      {"runs", runs}};
  if (d.has_speedup) {
    j["speedup"] = {{"value", d.speedup},
                    {"low", d.speedup_low},
                    {"high", d.speedup_high},
                    {"confidence", d.confidence}};
  }
  return j;
}

Status DecideAndWrite(const std::string& command, const std::vector<Sample>& measured,
                      RoundReport* report) {
  std::unique_ptr<Store> store;
  Status open = Store::Open(report->db, Store::Mode::kReadWrite, &store);
  if (!open.ok()) {
    std::cerr << "search: note: decision not stored: " << EscapeForTerminal(open.message())
              << "\n";
    return WriteSearchConfigs(report);
  }
  const std::string key = EvidenceKey(*report, measured);
  StoredDecision latest;
  const Status found = store->LatestDecision(report->run.id, &latest);
  if (!found.ok() && found.code() != Status::Code::kNotFound) return found;
  // The same real runs and the same candidate, yet another verdict: the decision rule itself
  // changed since (an upgrade of autotune), so the stored decision no longer says what these
  // runs show. It is kept in the history, and this rule's decision is stored after it.
  const bool same_evidence = found.ok() && latest.evidence_key == key;
  const tuner::Verdict now = report->conclusion.decision.verdict;
  const bool superseded = same_evidence && latest.candidate == report->candidate_knobs &&
                          latest.verdict != tuner::VerdictName(now);
  if (same_evidence && !superseded) {
    report->decision = latest;
    report->decision_reused = true;
    report->best_knobs = latest.chosen;
    report->candidate_knobs = latest.candidate;
    return WriteSearchConfigs(report);
  }
  std::unique_ptr<Store::WriteBatch> batch = store->BeginWrite();
  AUTOTUNE_RETURN_IF_ERROR(batch->status());
  StoredDecision decision = ToStored(*report, command, key);
  AUTOTUNE_RETURN_IF_ERROR(store->SaveDecision(&decision));
  report->decision = decision;
  AUTOTUNE_RETURN_IF_ERROR(WriteSearchConfigs(report));
  AUTOTUNE_RETURN_IF_ERROR(batch->Commit());
  if (superseded) {  // said once the new decision is in the database
    tuner::Verdict stored = tuner::Verdict::kIsDefault;
    std::cerr << "search: note: decision " << latest.id << " judged the same real runs of "
              << KnobsShort(latest.candidate, report->scope.framework) << " as \""
              << (tuner::ParseVerdictName(latest.verdict, &stored) ? tuner::VerdictText(stored)
                                                                    : latest.verdict)
              << "\"; the decision rule now says \"" << tuner::VerdictText(now)
              << "\": a new decision is stored\n";
  }
  return Status::Ok();
}

}  // namespace autotune::cli
