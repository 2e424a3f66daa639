#include "tools/search/offline.h"

#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "simulator/stored_simulation.h"
#include "store/store.h"
#include "tools/command.h"
#include "tools/progress.h"
#include "tools/search/decision_record.h"
#include "tools/search/round_files.h"
#include "tools/search/sample_log.h"
#include "tuner/knob_search.h"

namespace autotune::cli {
namespace {

// Everything the search needs, loaded from the database and the flags.
struct Inputs {
  RunInfo run;
  SearchSetup setup;
  std::optional<sim::Simulation> simulation;  // empty when no calibration exists
  Status uncalibrated;                        // then: why
  std::string network_source;                 // else: what the network model was fitted to
  StoredSamples stored;
};

Status LoadInputs(const SearchFlags& flags, Inputs* in) {
  SearchRequest request;
  AUTOTUNE_RETURN_IF_ERROR(flags.knobs.Resolve(&request.knobs, &request.constants));
  std::unique_ptr<Store> store;
  AUTOTUNE_RETURN_IF_ERROR(Store::Open(flags.db, Store::Mode::kReadOnly, &store));
  sim::StoredSimulation loaded;
  AUTOTUNE_RETURN_IF_ERROR(
      sim::LoadSimulation(*store, flags.run, {}, sim::IfUncalibrated::kNoSimulation, &loaded));
  in->run = loaded.run;
  in->simulation = std::move(loaded.simulation);
  in->uncalibrated = loaded.network.missing;
  in->network_source = loaded.network.source;
  if (!flags.target.empty()) {
    tuner::Target target = tuner::Target::kExecutor;
    AUTOTUNE_RETURN_IF_ERROR(tuner::ParseTarget(flags.target, &target).WithPrefix("--target"));
    request.target = target;
  }
  request.tune_on_request = flags.tune_groups;
  request.tune_backend_knobs = flags.tune_backend_knobs;
  request.tuning = flags.tuning;
  request.min_expected_improvement_ratio = flags.min_ei_ratio;
  AUTOTUNE_RETURN_IF_ERROR(SetUpSearch(in->run, request, &in->setup));
  return LoadStoredSamples(*store, in->run, &in->stored);
}

// The simulated-prior phase on the run's trace, with its progress on stderr.
Status SimulatePrior(const SearchFlags& flags, const Inputs& in, tuner::KnobSearch* search) {
  if (!in.simulation) {
    std::cerr << "search: note: measured samples only: " << in.uncalibrated.message() << "\n";
    return Status::Ok();
  }
  std::cerr << "search: note: network model: " << in.network_source << "\n";
  const sim::Simulation& simulation = *in.simulation;
  ProgressLine progress(flags.quiet);
  return search->SimulatePrior(
      [&](const Knobs& knobs) { return simulation.Evaluate(knobs).score_bytes_per_s; },
      flags.sim_budget,
      [&](int picked) {
        StatusOr<tuner::Incumbent> best = search->Best(Fidelity::kSimulated);
        progress.Update(
            "search: simulated " + std::to_string(picked) + "/" + std::to_string(flags.sim_budget) +
                " settings, " + std::to_string(in.stored.measured.size()) +
                " measured, best predicted " + (best.ok() ? Gbps(best->prediction.mean) : "?"),
            picked == flags.sim_budget);
      });
}

// The round's conclusion with the knobs of each setting it names.
Status MakeReport(const SearchFlags& flags, const Inputs& in, int skipped,
                  tuner::KnobSearch& search, RoundReport* report) {
  StatusOr<tuner::SearchLoop::Conclusion> conclusion =
      search.Conclude(flags.propose, in.stored.steps);
  if (!conclusion.ok()) return conclusion.status().WithPrefix("search");
  report->db = flags.db;
  report->out = flags.out;
  report->run = in.run;
  report->scope = in.setup.scope;
  report->measured = search.measured();
  report->simulated = search.simulated();
  report->skipped_measured = skipped;
  report->rho = search.rho();
  report->conclusion = *conclusion;
  StatusOr<Knobs> knobs = search.ToKnobs(conclusion->candidate.point);
  if (!knobs.ok()) return knobs.status();
  report->candidate_knobs = *knobs;
  knobs = search.ToKnobs(conclusion->written().point);
  if (!knobs.ok()) return knobs.status();
  report->best_knobs = *knobs;
  knobs = search.ToKnobs(conclusion->default_setting.point);
  if (!knobs.ok()) return knobs.status();
  report->default_knobs = *knobs;
  for (const tuner::Suggestion& s : conclusion->proposals) {
    knobs = search.ToKnobs(s.point);
    if (!knobs.ok()) return knobs.status();
    report->proposal_knobs.push_back(*knobs);
  }
  return Status::Ok();
}

// A note for each setting written whose companion knobs (tuner::WithCompanionKnobs) were set.
void PrintCompanionNotes(const Inputs& in, const RoundReport& report) {
  std::vector<std::pair<std::string, Knobs>> written = {{report.out, report.best_knobs}};
  for (size_t i = 0; i < report.proposal_files.size() && i < report.proposal_knobs.size(); ++i) {
    written.emplace_back(report.proposal_files[i], report.proposal_knobs[i]);
  }
  for (const auto& [file, knobs] : written) {
    const std::string note = tuner::CompanionNote(knobs, in.setup.scope.job, in.run.backend,
                                                  in.run.framework);
    if (note.empty()) continue;
    // Whether the predictions saw what the limit does (a calibrate at it) or held it.
    const std::string held = in.simulation ? in.simulation->EagerLimitHeld(knobs) : "";
    std::cerr << "search: note: " << file << ": " << note
              << (held.empty() ? "" : "; the predictions: " + held) << "\n";
  }
}

}  // namespace

int RunSearch(const SearchFlags& flags, Round* round) {
  Inputs in;
  Status status = LoadInputs(flags, &in);
  if (!status.ok()) return Fail(status);
  if (in.setup.space.encoded_size() == 0) {
    return Fail("search: every knob is a constant; nothing to tune");
  }
  for (const tuner::KnobShape& shape : in.setup.shape.knobs) {
    std::cerr << "search: note: " << tuner::JobSpaceNote(shape, in.setup.space) << "\n";
  }
  SampleLog log;
  status = log.Open(flags.tuning.log_file);
  if (!status.ok()) return Fail(status);
  tuner::KnobSearch search(in.setup.space, in.setup.base, in.setup.options, LogTo(&log),
                           in.setup.complete);
  // Measured samples of another scale or backend, or whose knobs have no place in the space.
  StatusOr<int> left_out = ObserveStored(in.stored.measured, &search);
  if (!left_out.ok()) return Fail(left_out.status().WithPrefix("measured sample"));
  if (in.stored.traced_left_out > 0) {
    std::cerr << "search: note: " << in.stored.traced_left_out
              << " measured sample(s) of traced runs left out: runs with a production step "
                 "time exist, and tracing costs each setting differently\n";
  }
  status = SimulatePrior(flags, in, &search);
  if (!status.ok()) return Fail(status);
  if (search.measured() + search.simulated() == 0) {
    return Fail("search: no measured samples of " + in.run.workload.name + " on " +
                in.run.topology.key() +
                " and no calibration to simulate with; run `autotune "
                "calibrate` (and `autotune record`) first");
  }
  RoundReport report;
  status = MakeReport(flags, in,
                      in.stored.other_measured + in.stored.traced_left_out + *left_out, search,
                      &report);
  if (status.ok()) {
    status = DecideAndWrite(flags.live ? "search --live" : "search", in.stored.measured, &report);
  }
  round->proposal_files = report.proposal_files;
  if (!status.ok()) return Fail(status);
  PrintCompanionNotes(in, report);
  // The best row: the setting written, scored by its measured samples (also when a stored
  // decision was shown, whose setting is this round's written one on the same evidence).
  const tuner::Reported& written = report.conclusion.written();
  const StatusOr<Knobs> written_knobs = search.ToKnobs(written.point);
  if (written.measured.count > 0 && written_knobs.ok() && *written_knobs == report.best_knobs) {
    log.WriteBest(report.best_knobs, written.measured.mean);
  }
  round->stop = report.conclusion.stop;
  if (flags.json) {
    std::cout << SearchJson(report).dump() << "\n";
  } else {
    PrintSearchSummary(report, std::cout);
  }
  return 0;
}

}  // namespace autotune::cli
