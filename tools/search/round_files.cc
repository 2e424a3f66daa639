#include "tools/search/round_files.h"

#include <cmath>
#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include "formats/config_file.h"
#include "tools/search/decision_record.h"
#include "traces/files.h"
#include "traces/knob_table.h"

namespace autotune::cli {
namespace {

using tuner::Prediction;
using tuner::Repeats;

// The provenance every config file of a round carries.
nlohmann::json Provenance(const RoundReport& r, const Prediction& prediction,
                          const Repeats& measured, const std::string& evidence) {
  nlohmann::json p = {{"db", r.db},
                      {"run", r.run.id},
                      {"evidence", evidence},
                      {"predicted_score", prediction.mean},
                      {"predicted_stddev", std::sqrt(prediction.variance)},
                      {"measured_samples", r.measured},
                      {"simulated_samples", r.simulated},
                      {"rho", r.rho}};
  if (measured.count > 0) p["measured_score"] = measured.mean;
  return p;
}

// The measured evidence of the verdict: the speedup interval and the noise, as JSON.
nlohmann::json DecisionJson(const RoundReport& r) {
  const tuner::Decision& d = r.conclusion.decision;
  nlohmann::json j = {{"verdict", VerdictLine(r)},
                      {"beats_default", tuner::VerdictText(d.verdict)},
                      {"noise",
                       {{"within_sample_cv", d.noise.within_cv},
                        {"across_repeats_cv", d.noise.across_cv},
                        {"across_repeats_degrees", d.noise.across_degrees},
                        {"samples", d.noise.samples},
                        {"steps", d.noise.steps}}}};
  if (d.has_speedup) {
    j["speedup"] = {{"value", d.speedup.speedup},
                    {"low", d.speedup.low},
                    {"high", d.speedup.high},
                    {"confidence", d.speedup.confidence},
                    {"statistic",
                     "median over the candidate's runs of (the default's median step time, "
                     "interpolated between the default runs around it) / (the run's median "
                     "step time)"},
                    // Rule 2's reading of two runs of a side far apart (tuner/run_comparison.h).
                    {"drift_explained", d.comparison.drift_explained},
                    {"disagreement_set_aside", d.comparison.disagreement_set_aside}};
  }
  return j;
}

// Writes `config` to `path`, headed by `note` (comment lines) when not empty.
Status SaveWithNote(const std::string& path, const ConfigFile& config, const std::string& note) {
  if (note.empty()) return SaveConfigFile(path, config);
  return WriteOutputFile(path, note + ConfigToYaml(config));
}

// "5.2%" for 0.052: two significant digits.
std::string Percent(double fraction) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.2g%%", fraction * 100.0);
  return buffer;
}

// True when `s` is the uncertainty probe and predicted below the measured default.
bool ProbeBelowDefault(const RoundReport& r, const tuner::Suggestion& s) {
  const tuner::Reported& def = r.conclusion.default_setting;
  return s.origin == tuner::SuggestionOrigin::kMostUncertain && def.measured.count > 0 &&
         s.prediction.mean < def.prediction.mean;
}

nlohmann::json ProposalJson(const RoundReport& r, size_t i) {
  const tuner::Suggestion& s = r.conclusion.proposals[i];
  nlohmann::json j = {{"file", r.proposal_files[i]},
                      {"origin", tuner::SuggestionOriginName(s.origin)},
                      {"knobs", KnobsToJson(r.proposal_knobs[i])},
                      {"predicted_score_bytes_per_s", s.prediction.mean},
                      {"predicted_stddev", std::sqrt(s.prediction.variance)},
                      {"expected_improvement", s.expected_improvement}};
  if (ProbeBelowDefault(r, s)) j["predicted_below_default"] = true;
  return j;
}

}  // namespace

std::string Gbps(double bytes_per_s) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.4g GB/s", bytes_per_s / 1e9);
  return buffer;
}

std::string StopText(tuner::StopReason stop) {
  return stop == tuner::StopReason::kNotStopped ? "" : tuner::StopReasonName(stop);
}

std::string Evidence(const RoundReport& report, const tuner::Reported& setting) {
  if (setting.measured.count > 0) {
    return "measured " + std::to_string(setting.measured.count) + "x";
  }
  return report.measured > 0 ? "predicted by co-kriging, not measured yet"
                             : "simulated only, not measured yet";
}

std::string VerdictLine(const RoundReport& report) {
  if (report.decision_reused) return report.decision.summary;
  return RoundVerdictLine(report);
}

std::string RoundVerdictLine(const RoundReport& report) {
  const tuner::Decision& d = report.conclusion.decision;
  const std::string noise =
      d.noise.samples > 0 ? "±" + Percent(d.noise.cv()) : std::string("noise not measured yet");
  if (d.verdict != tuner::Verdict::kBeatsDefault) {
    return "no setting beats the default beyond noise (" + noise + "); keeping the defaults";
  }
  char interval[160];
  std::snprintf(interval, sizeof(interval), "speedup %.3f, %g%% interval [%.3f, %.3f]",
                d.speedup.speedup, d.speedup.confidence * 100, d.speedup.low, d.speedup.high);
  // Rule 2's drift (tuner/run_comparison.h): say why two runs far apart did not hold it.
  const std::string drift = d.comparison.drift_explained
                                ? "; both settings' runs drifted alike, each candidate run "
                                  "compared with the default's around it"
                                : "";
  return "best: " + KnobsShort(report.best_knobs, report.scope.framework) +
         " beats the default: steps " + Percent(1.0 - 1.0 / d.speedup.speedup) + " shorter (" +
         interval + "; noise " + noise + drift + ")";
}

std::string GroupsNote(const RoundReport& report, const Knobs& knobs) {
  if (!report.scope.tune_on_request) return "";
  std::string note;
  for (const KnobSpec& spec : KnobTable()) {
    if (!KnobSearchedOnRequest(spec) || *spec.script_call == '\0') continue;
    if (!KnobInFramework(spec, report.scope.framework)) continue;
    const std::string value = KnobText(spec, knobs);
    if (value == KnobText(spec, Knobs())) {
      note += std::string("# ") + spec.name + ": " + value +
              " (the default): the training script must not\n# pass " + spec.script_keyword +
              " to " + spec.script_call + "; `autotune apply` cannot set it.\n";
    } else {
      note += std::string("# ") + spec.name + ": " + value +
              " must be passed in the training script:\n# " + spec.script_call + "(..., " +
              spec.script_keyword + "=" + value + "); `autotune apply` cannot set it.\n";
    }
  }
  return note;
}

std::string ProposalPath(const std::string& out, int index) {
  std::string stem = out;
  for (const char* ext : {".yaml", ".yml"}) {
    const std::string e(ext);
    if (stem.size() > e.size() && stem.compare(stem.size() - e.size(), e.size(), e) == 0) {
      stem.resize(stem.size() - e.size());
      break;
    }
  }
  return stem + ".next" + std::to_string(index) + ".yaml";
}

Status WriteSearchConfigs(RoundReport* report) {
  const tuner::SearchLoop::Conclusion& c = report->conclusion;
  const tuner::Reported& written = c.written();
  ConfigFile best;
  best.framework = report->scope.framework;
  best.knobs = report->best_knobs;
  nlohmann::json provenance =
      Provenance(*report, written.prediction, written.measured, Evidence(*report, written));
  provenance.update(DecisionJson(*report));
  provenance["target"] = tuner::TargetName(report->scope.target);
  provenance["candidate"] = KnobsShort(report->candidate_knobs, report->scope.framework);
  provenance["default_predicted_score"] = c.default_setting.prediction.mean;
  if (report->decision.id > 0) {
    provenance["decision"] = report->decision.id;
    provenance["decision_reused"] = report->decision_reused;
    if (report->decision_reused) {
      provenance["beats_default"] = report->decision.verdict;
      provenance["verdict"] = report->decision.summary;
    }
  }
  best.provenance_json = provenance.dump();
  AUTOTUNE_RETURN_IF_ERROR(
      SaveWithNote(report->out, best, GroupsNote(*report, report->best_knobs)));
  for (size_t i = 0; i < c.proposals.size(); ++i) {
    const tuner::Suggestion& s = c.proposals[i];
    ConfigFile config;
    config.framework = report->scope.framework;
    config.knobs = report->proposal_knobs[i];
    nlohmann::json p =
        Provenance(*report, s.prediction, Repeats{},
                   std::string("proposal: ") + tuner::SuggestionOriginName(s.origin));
    p["expected_improvement"] = s.expected_improvement;
    config.provenance_json = p.dump();
    const std::string path = ProposalPath(report->out, static_cast<int>(i) + 1);
    AUTOTUNE_RETURN_IF_ERROR(SaveWithNote(path, config, GroupsNote(*report, config.knobs)));
    report->proposal_files.push_back(path);
  }
  return Status::Ok();
}

nlohmann::json SearchJson(const RoundReport& r) {
  const tuner::SearchLoop::Conclusion& c = r.conclusion;
  nlohmann::json proposals = nlohmann::json::array();
  for (size_t i = 0; i < r.proposal_files.size(); ++i) proposals.push_back(ProposalJson(r, i));
  const tuner::Reported& written = c.written();
  nlohmann::json j = {{"run", r.run.id},
                      {"workload", r.run.workload.name},
                      {"topology", r.run.topology.key()},
                      {"backend", BackendName(r.run.backend)},
                      {"target", tuner::TargetName(r.scope.target)},
                      {"tune_groups", r.scope.tune_on_request},
                      {"simulated_samples", r.simulated},
                      {"measured_samples", r.measured},
                      {"skipped_measured_samples", r.skipped_measured},
                      {"rho", r.rho},
                      {"stop_reason", StopText(c.stop)},
                      {"verdict", VerdictLine(r)},
                      {"best",
                       {{"file", r.out},
                        {"knobs", KnobsToJson(r.best_knobs)},
                        {"is_default", written.point == c.default_setting.point},
                        {"predicted_score_bytes_per_s", written.prediction.mean},
                        {"predicted_stddev", std::sqrt(written.prediction.variance)},
                        {"evidence", Evidence(r, written)},
                        {"beats_default", tuner::VerdictText(c.decision.verdict)}}},
                      {"candidate",
                       {{"knobs", KnobsToJson(r.candidate_knobs)},
                        {"predicted_score_bytes_per_s", c.candidate.prediction.mean},
                        {"evidence", Evidence(r, c.candidate)}}},
                      {"evidence", DecisionJson(r)},
                      {"default",
                       {{"knobs", KnobsToJson(r.default_knobs)},
                        {"predicted_score_bytes_per_s", c.default_setting.prediction.mean},
                        {"measured", c.default_setting.measured.count > 0}}},
                      {"proposals", proposals}};
  if (r.decision.id > 0) {
    j["decision"] = DecisionToJson(r.decision);
    j["decision"]["reused"] = r.decision_reused;
    j["best"]["is_default"] = r.decision.chosen == r.decision.default_knobs;
    tuner::Verdict stored = tuner::Verdict::kIsDefault;
    if (r.decision_reused && tuner::ParseVerdictName(r.decision.verdict, &stored)) {
      j["best"]["beats_default"] = tuner::VerdictText(stored);
    }
  }
  if (written.measured.count > 0) {
    j["best"]["measured_score_bytes_per_s"] = written.measured.mean;
  }
  return j;
}

void PrintSearchSummary(const RoundReport& r, std::ostream& out) {
  const tuner::SearchLoop::Conclusion& c = r.conclusion;
  out << "search: run " << r.run.id << " (" << r.run.workload.name << ", " << r.run.topology.key()
      << ", " << BackendName(r.run.backend) << "): " << r.simulated << " simulated, " << r.measured
      << " measured samples";
  if (r.skipped_measured > 0) out << " (" << r.skipped_measured << " skipped)";
  out << ", rho " << r.rho << ", target " << tuner::TargetName(r.scope.target) << "\n";
  const tuner::Decision& d = c.decision;
  out << "candidate: " << KnobsShort(r.candidate_knobs, r.scope.framework) << "  predicted "
      << Gbps(c.candidate.prediction.mean) << " +- "
      << Gbps(std::sqrt(c.candidate.prediction.variance)) << " (" << Evidence(r, c.candidate)
      << "; beats default: " << tuner::VerdictText(d.verdict);
  if (d.has_speedup) {
    char interval[96];
    std::snprintf(interval, sizeof(interval), "; speedup %.3f [%.3f, %.3f]", d.speedup.speedup,
                  d.speedup.low, d.speedup.high);
    out << interval;
  }
  if (d.noise.samples > 0) {
    out << "; step-time CV " << Percent(d.noise.within_cv) << " within samples, "
        << (d.noise.across_cv > 0 ? Percent(d.noise.across_cv) : std::string("unknown"))
        << " across repeats";
  }
  out << ")\n";
  if (r.decision_reused) {
    out << "stored " << DecisionLine(r.decision, r.scope.framework)
        << " (no new real runs since: shown, not recomputed)\n";
  }
  out << VerdictLine(r) << " -> " << r.out << "\n";
  if (r.decision.id > 0 && !r.decision_reused) {
    out << "stored as " << DecisionLine(r.decision, r.scope.framework) << "\n";
  }
  for (size_t i = 0; i < r.proposal_files.size(); ++i) {
    const tuner::Suggestion& s = c.proposals[i];
    out << "measure next: " << r.proposal_files[i] << " (" << tuner::SuggestionOriginName(s.origin)
        << ", predicted " << Gbps(s.prediction.mean);
    if (s.origin == tuner::SuggestionOrigin::kMostUncertain) {
      out << " +- " << Gbps(std::sqrt(s.prediction.variance));
      if (ProbeBelowDefault(r, s)) {
        out << "; predicted below the default: measured as the model's least-known setting, "
               "not as a contender";
      }
    }
    out << ")\n";
  }
  if (c.stop != tuner::StopReason::kNotStopped) out << "stop: " << StopText(c.stop) << "\n";
}

}  // namespace autotune::cli
