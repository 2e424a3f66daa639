#include "tools/search_report.h"

#include <cmath>
#include <cstdio>

#include "traces/config_file.h"

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

nlohmann::json ProposalJson(const RoundReport& r, size_t i) {
  const tuner::Suggestion& s = r.conclusion.proposals[i];
  return {{"file", r.proposal_files[i]},
          {"origin", tuner::SuggestionOriginName(s.origin)},
          {"knobs", KnobsToJson(r.proposal_knobs[i])},
          {"predicted_score_bytes_per_s", s.prediction.mean},
          {"predicted_stddev", std::sqrt(s.prediction.variance)},
          {"expected_improvement", s.expected_improvement}};
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

std::string Evidence(const RoundReport& report) {
  const tuner::Reported& best = report.conclusion.best;
  if (best.measured.count > 0) return "measured " + std::to_string(best.measured.count) + "x";
  return report.measured > 0 ? "predicted by co-kriging, not measured yet"
                             : "simulated only, not measured yet";
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
  ConfigFile best;
  best.knobs = report->best_knobs;
  nlohmann::json provenance =
      Provenance(*report, c.best.prediction, c.best.measured, Evidence(*report));
  provenance["beats_default"] = tuner::VerdictText(c.verdict);
  provenance["default_predicted_score"] = c.default_setting.prediction.mean;
  best.provenance_json = provenance.dump();
  AUTOTUNE_RETURN_IF_ERROR(SaveConfigFile(report->out, best));
  for (size_t i = 0; i < c.proposals.size(); ++i) {
    const tuner::Suggestion& s = c.proposals[i];
    ConfigFile config;
    config.knobs = report->proposal_knobs[i];
    nlohmann::json p =
        Provenance(*report, s.prediction, Repeats{},
                   std::string("proposal: ") + tuner::SuggestionOriginName(s.origin));
    p["expected_improvement"] = s.expected_improvement;
    config.provenance_json = p.dump();
    const std::string path = ProposalPath(report->out, static_cast<int>(i) + 1);
    AUTOTUNE_RETURN_IF_ERROR(SaveConfigFile(path, config));
    report->proposal_files.push_back(path);
  }
  return Status::Ok();
}

nlohmann::json SearchJson(const RoundReport& r) {
  const tuner::SearchLoop::Conclusion& c = r.conclusion;
  nlohmann::json proposals = nlohmann::json::array();
  for (size_t i = 0; i < r.proposal_files.size(); ++i) proposals.push_back(ProposalJson(r, i));
  nlohmann::json j = {{"run", r.run.id},
                      {"workload", r.run.workload.name},
                      {"topology", r.run.topology.key()},
                      {"backend", BackendName(r.run.backend)},
                      {"simulated_samples", r.simulated},
                      {"measured_samples", r.measured},
                      {"skipped_measured_samples", r.skipped_measured},
                      {"rho", r.rho},
                      {"stop_reason", StopText(c.stop)},
                      {"best",
                       {{"file", r.out},
                        {"knobs", KnobsToJson(r.best_knobs)},
                        {"predicted_score_bytes_per_s", c.best.prediction.mean},
                        {"predicted_stddev", std::sqrt(c.best.prediction.variance)},
                        {"evidence", Evidence(r)},
                        {"beats_default", tuner::VerdictText(c.verdict)}}},
                      {"default",
                       {{"knobs", KnobsToJson(r.default_knobs)},
                        {"predicted_score_bytes_per_s", c.default_setting.prediction.mean},
                        {"measured", c.default_setting.measured.count > 0}}},
                      {"proposals", proposals}};
  if (c.best.measured.count > 0) j["best"]["measured_score_bytes_per_s"] = c.best.measured.mean;
  return j;
}

void PrintSearchSummary(const RoundReport& r, std::ostream& out) {
  const tuner::SearchLoop::Conclusion& c = r.conclusion;
  out << "search: run " << r.run.id << " (" << r.run.workload.name << ", " << r.run.topology.key()
      << ", " << BackendName(r.run.backend) << "): " << r.simulated << " simulated, " << r.measured
      << " measured samples";
  if (r.skipped_measured > 0) out << " (" << r.skipped_measured << " skipped)";
  out << ", rho " << r.rho << "\n";
  out << "best: " << KnobsShort(r.best_knobs) << "  predicted " << Gbps(c.best.prediction.mean)
      << " +- " << Gbps(std::sqrt(c.best.prediction.variance)) << " (" << Evidence(r)
      << "; beats default: " << tuner::VerdictText(c.verdict) << ") -> " << r.out << "\n";
  for (size_t i = 0; i < r.proposal_files.size(); ++i) {
    const tuner::Suggestion& s = c.proposals[i];
    out << "measure next: " << r.proposal_files[i] << " (" << tuner::SuggestionOriginName(s.origin)
        << ", predicted " << Gbps(s.prediction.mean) << ")\n";
  }
  if (c.stop != tuner::StopReason::kNotStopped) out << "stop: " << StopText(c.stop) << "\n";
}

}  // namespace autotune::cli
