#include "tools/search/record_autotune.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <utility>

#include "formats/config_file.h"
#include "simulator/stored_simulation.h"
#include "store/store.h"
#include "tools/flag_checks.h"
#include "tools/search/decision_record.h"
#include "tuner/job_space.h"

namespace autotune::cli {

OnlineTuner::OnlineTuner(const OnlineTuningFlags& flags, SearchSetup setup)
    : flags_(flags),
      search_(std::move(setup.space), std::move(setup.base), std::move(setup.options),
              LogTo(&log_)) {}

Status OnlineTuner::Create(const OnlineTuningFlags& flags, const Knobs& start,
                           const std::set<std::string>& constants, BackendKind backend,
                           Framework framework, const tuner::JobFacts& job,
                           std::unique_ptr<OnlineTuner>* out) {
  RunInfo run;  // the run being played, as far as the set-up reads it
  run.knobs = start;
  run.backend = backend;
  run.framework = framework;
  SearchRequest request;
  request.mode = SearchMode::kOnline;
  request.knobs = start;
  request.constants = constants;
  request.target = tuner::Target::kExecutor;  // the executor plays the samples
  request.job = job;  // the run is not played yet: what the caller knows of it
  request.tuning = flags.tuning;
  SearchSetup setup;
  AUTOTUNE_RETURN_IF_ERROR(SetUpSearch(run, request, &setup));
  if (setup.space.encoded_size() == 0) {
    return Status::InvalidArgument(
        "--autotune: every runtime knob is a constant (given on the command line or in "
        "--config-file); nothing to tune");
  }
  // What the job's shape did to the space, as `search` says it (tuner/job_space.h).
  for (const tuner::KnobShape& shape : setup.shape.knobs) {
    std::fprintf(stderr, "record --autotune: note: %s\n",
                 tuner::JobSpaceNote(shape, setup.space).c_str());
  }
  std::unique_ptr<OnlineTuner> online(new OnlineTuner(flags, std::move(setup)));
  online->framework_ = framework;
  AUTOTUNE_RETURN_IF_ERROR(online->log_.Open(flags.tuning.log_file));
  *out = std::move(online);
  return Status::Ok();
}

void OnlineTuner::MapTimeFlags(const executor::TuningSample& probe,
                               executor::TuningDecision* decision) {
  const double step_s = probe.steps > 0 ? probe.seconds / probe.steps : 0.0;
  int steps_per_sample = flags_.tuning.steps_per_sample;
  if (flags_.tuning.sampling_confidence_time_s > 0 && step_s > 0) {
    steps_per_sample = std::max(
        1, static_cast<int>(std::ceil(flags_.tuning.sampling_confidence_time_s / step_s - 1e-9)));
  }
  int warmup = std::max(0, flags_.tuning.warmup_samples - 1);
  if (flags_.tuning.warmup_time_s >= 0 && step_s > 0) {
    warmup = static_cast<int>(
        std::ceil(flags_.tuning.warmup_time_s / (steps_per_sample * step_s) - 1e-9));
  }
  warmup_samples_ = 1 + warmup;
  decision->steps_per_sample = steps_per_sample;
  if (!flags_.steps_given) {
    decision->steps =
        probe.first_step + probe.steps + (warmup + flags_.tuning.max_samples) * steps_per_sample;
  }
  std::fprintf(stderr,
               "record --autotune: step time %.3f ms -> %d steps per sample (%.3g s), %d warm-up "
               "samples after this probe\n",
               step_s * 1e3, steps_per_sample, steps_per_sample * step_s, warmup);
}

void OnlineTuner::AddSimulatorPrior(int64_t run_id) {
  auto skip = [](const std::string& why) {
    std::fprintf(stderr, "record --autotune: no simulator prior (%s); measured samples only\n",
                 why.c_str());
  };
  std::unique_ptr<Store> store;
  Status st = Store::Open(flags_.db, Store::Mode::kReadOnly, &store);
  sim::StoredSimulation loaded;
  if (st.ok()) {
    st = sim::LoadSimulation(*store, run_id, {}, sim::IfUncalibrated::kNoSimulation, &loaded);
  }
  if (!st.ok()) return skip(st.message());
  if (!loaded.simulation) return skip(loaded.network.missing.message());
  const sim::Simulation& simulation = *loaded.simulation;
  st = search_.SimulatePrior(
      [&](const Knobs& knobs) { return simulation.Evaluate(knobs).score_bytes_per_s; },
      flags_.sim_budget);
  if (!st.ok()) return skip("simulator: " + st.message());
  StatusOr<tuner::Incumbent> best = search_.Best(tuner::Fidelity::kSimulated);
  Knobs best_knobs = search_.base();  // the starting setting
  if (best.ok()) {
    StatusOr<Knobs> knobs = search_.ToKnobs(best->point);
    if (knobs.ok()) best_knobs = *knobs;
  }
  std::fprintf(stderr,
               "record --autotune: simulator prior: %d settings simulated on this run's %zu "
               "steps (calibration %lld); predicted best %s at %.4g GB/s\n",
               search_.simulated(), simulation.trace().steps().size(),
               static_cast<long long>(loaded.network.calibration.id),
               KnobsShort(best_knobs, framework_).c_str(),
               best.ok() ? best->prediction.mean / 1e9 : 0.0);
}

Status OnlineTuner::Step(const executor::TuningSample& sample, executor::TuningDecision* decision) {
  decision->next = sample.knobs;
  if (sample.index == 0) {
    warmup_samples_ = flags_.tuning.warmup_samples;
    if (flags_.tuning.time_based()) MapTimeFlags(sample, decision);
  }
  if (sample.index < warmup_samples_) {
    decision->store = false;
    std::fprintf(stderr, "record --autotune: warm-up sample %d/%d: %.4g GB/s (discarded)\n",
                 sample.index + 1, warmup_samples_, sample.score_bytes_per_s / 1e9);
    return Status::Ok();
  }
  AUTOTUNE_RETURN_IF_ERROR(search_.ObserveMeasured(sample.knobs, sample.score_bytes_per_s));
  steps_.push_back({sample.knobs, sample.step_ms, sample.run_id, sample.index});
  if (observed() == 1) default_score_ = sample.score_bytes_per_s;
  if (observed() == 1 && flags_.sim_budget > 0 && !flags_.db.empty()) {
    AddSimulatorPrior(sample.run_id);
  }
  std::fprintf(stderr, "record --autotune: sample %d/%d: %s: %.4g GB/s\n", observed(),
               flags_.tuning.max_samples, KnobsShort(sample.knobs, framework_).c_str(),
               sample.score_bytes_per_s / 1e9);
  // The last samples of the budget go to the decision when it needs them: the candidate and
  // the default again, alternately (tuner::RemeasureOrder), one sample at a time.
  const int left = flags_.tuning.max_samples - observed();
  if (left > 0 && left <= 2) {
    StatusOr<tuner::SearchLoop::Conclusion> judged = search_.Judge(steps_);
    if (!judged.ok()) return judged.status().WithPrefix("record --autotune");
    const tuner::SearchLoop::Conclusion& c = *judged;
    tuner::StopRule rule;
    rule.max_measured_samples = flags_.tuning.max_samples;
    if (tuner::RemeasureToDecide(rule, observed(), c.decision, c.candidate, c.default_setting)) {
      const tuner::RunRole role = tuner::RemeasureOrder(c.decision).front();
      StatusOr<Knobs> knobs = search_.ToKnobs(
          role == tuner::RunRole::kDefault ? c.default_setting.point : c.candidate.point);
      if (!knobs.ok()) return knobs.status().WithPrefix("record --autotune");
      std::fprintf(stderr, "record --autotune: note: re-measuring %s: %s\n",
                   role == tuner::RunRole::kDefault ? "the default" : "the candidate",
                   tuner::VerdictText(c.decision.verdict));
      decision->next = *knobs;
      return Status::Ok();
    }
  }
  StatusOr<tuner::KnobSearch::Next> next = search_.NextMeasured();
  if (!next.ok()) return next.status().WithPrefix("record --autotune");
  if (next->stop == tuner::StopReason::kNotStopped) {
    decision->next = next->knobs;
    return Status::Ok();
  }
  tuner::SearchLoop::Conclusion conclusion;
  AUTOTUNE_RETURN_IF_ERROR(Best(&decision->next, &conclusion));
  decision->done = true;
  std::fprintf(stderr, "record --autotune: %s; %s kept for the rest of the run\n",
               tuner::StopReasonName(next->stop), KnobsShort(decision->next, framework_).c_str());
  return Status::Ok();
}

Status OnlineTuner::Best(Knobs* knobs, tuner::SearchLoop::Conclusion* conclusion) {
  StatusOr<tuner::SearchLoop::Conclusion> judged = search_.Judge(steps_);
  if (!judged.ok()) return judged.status().WithPrefix("record --autotune");
  *conclusion = *judged;
  StatusOr<Knobs> best_knobs = search_.ToKnobs(conclusion->written().point);
  if (!best_knobs.ok()) return best_knobs.status();
  *knobs = *best_knobs;
  return Status::Ok();
}

void OnlineTuner::StoreDecision(const std::string& db, int64_t run_id,
                                const tuner::SearchLoop::Conclusion& conclusion,
                                const Knobs& chosen) {
  StatusOr<Knobs> candidate = search_.ToKnobs(conclusion.candidate.point);
  StatusOr<Knobs> default_knobs = search_.ToKnobs(conclusion.default_setting.point);
  const tuner::Decision& d = conclusion.decision;
  StoredDecision stored;
  stored.run_id = run_id;
  stored.command = "record --autotune";
  stored.evidence_key = "record --autotune;run=" + std::to_string(run_id);
  stored.chosen = chosen;
  stored.candidate = candidate.ok() ? *candidate : chosen;
  stored.default_knobs = default_knobs.ok() ? *default_knobs : chosen;
  FillDecisionEvidence(d, &stored);
  stored.summary =
      CandidateVerdictLine(stored.candidate, framework_, d.verdict == tuner::Verdict::kIsDefault,
                           tuner::VerdictText(d.verdict));
  std::unique_ptr<Store> store;
  Status st = db.empty() ? Status::InvalidArgument("no database")
                         : Store::Open(db, Store::Mode::kReadWrite, &store);
  if (st.ok()) st = store->SaveDecision(&stored);
  if (!st.ok()) {
    std::fprintf(stderr, "record --autotune: note: decision not stored: %s\n",
                 st.message().c_str());
  }
}

Status OnlineTuner::WriteBest(const std::string& db, int64_t run_id, bool json) {
  ConfigFile config;
  config.framework = framework_;
  tuner::SearchLoop::Conclusion conclusion;
  AUTOTUNE_RETURN_IF_ERROR(Best(&config.knobs, &conclusion));
  const tuner::Reported& best = conclusion.written();
  const tuner::Decision& d = conclusion.decision;
  const double measured = best.measured.mean;
  const std::string target = flags_.out.empty() ? "" : " -> " + flags_.out;
  StatusOr<Knobs> candidate = search_.ToKnobs(conclusion.candidate.point);
  std::string speedup;
  if (d.has_speedup) {
    char interval[96];
    std::snprintf(interval, sizeof(interval), "; speedup %.3f [%.3f, %.3f]", d.speedup.speedup,
                  d.speedup.low, d.speedup.high);
    speedup = interval;
  }
  std::fprintf(json ? stderr : stdout,
               "autotune: best of %d samples: %s, measured %.4g GB/s (starting setting %.4g "
               "GB/s)%s\nautotune: %s%s\n",
               observed(), KnobsShort(config.knobs, framework_).c_str(), measured / 1e9,
               default_score_ / 1e9, target.c_str(),
               CandidateVerdictLine(candidate.ok() ? *candidate : config.knobs, framework_,
                                    d.verdict == tuner::Verdict::kIsDefault,
                                    tuner::VerdictText(d.verdict))
                   .c_str(),
               speedup.c_str());
  std::fflush(json ? stderr : stdout);
  if (best.measured.count > 0) log_.WriteBest(config.knobs, measured);
  StoreDecision(db, run_id, conclusion, config.knobs);
  if (flags_.out.empty()) return Status::Ok();
  nlohmann::json provenance = {{"db", db},
                               {"run", run_id},
                               {"evidence", "measured online (record --autotune)"},
                               {"measured_score", measured},
                               {"predicted_score", best.prediction.mean},
                               {"predicted_stddev", std::sqrt(best.prediction.variance)},
                               {"measured_samples", observed()},
                               {"starting_setting_score", default_score_},
                               {"beats_default", tuner::VerdictText(d.verdict)}};
  if (d.has_speedup) {
    provenance["speedup"] = {{"value", d.speedup.speedup},
                             {"low", d.speedup.low},
                             {"high", d.speedup.high},
                             {"confidence", d.speedup.confidence}};
  }
  config.provenance_json = provenance.dump();
  return SaveConfigFile(flags_.out, config);
}

void AddOnlineTuningFlags(CLI::App* app, OnlineTuningFlags* a) {
  app->add_flag("--autotune", a->enabled,
                "Tune the runtime knobs online inside this run, as horovodrun --autotune does: "
                "rank 0 runs the GP tuner over " +
                    OnlineKnobList() +
                    " (knobs given as flags or in --config-file stay constant) and every rank "
                    "switches to each new setting between samples; each sample is stored as a "
                    "measured sample of this run");
  AddTuningFlags(app, TuningCommand::kRecordAutotune,
                 {TuningFlag::kWarmupSamples, TuningFlag::kStepsPerSample, TuningFlag::kMaxSamples,
                  TuningFlag::kGpNoise, TuningFlag::kLogFile},
                 &a->tuning);
  app->add_option("--autotune-out", a->out,
                  "--autotune: config file (YAML) for the best setting found");
  AddTuningFlags(app, TuningCommand::kRecordAutotune,
                 {TuningFlag::kWarmupTime, TuningFlag::kSamplingConfidenceTime, TuningFlag::kSeed},
                 &a->tuning);
  app->add_option("--autotune-sim-budget", a->sim_budget,
                  "--autotune: settings simulated after the first observed sample, on this "
                  "run's trace so far, when the database holds a calibration of the run's "
                  "topology: the tuner's prior (co-kriging with the measured samples). 0 = "
                  "measured samples only. Default 60")
      ->check(AtLeast(0));
}

}  // namespace autotune::cli
