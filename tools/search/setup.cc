#include "tools/search/setup.h"

#include <algorithm>
#include <map>
#include <utility>
#include <variant>

#include "traces/knob_table.h"

namespace autotune::cli {
namespace {

// The model and stop rule of a search in `mode` under `request`'s flags.
tuner::SearchOptions MakeOptions(const SearchRequest& request) {
  tuner::SearchOptions options;
  options.stop.max_measured_samples = request.tuning.max_samples;
  options.seed = request.tuning.seed;
  options.model.residual_gp.fixed_noise_stddev = request.tuning.gp_noise;
  options.model.simulated_gp.seed = request.tuning.seed;
  options.model.residual_gp.seed = request.tuning.seed;
  if (request.mode == SearchMode::kOffline) {
    options.stop.min_expected_improvement_ratio = request.min_expected_improvement_ratio;
    options.refit_period = 20;
  }
  return options;
}

tuner::FreeKnobs FreeKnobsOf(const SearchRequest& request) {
  if (request.mode == SearchMode::kOnline) return tuner::FreeKnobs::kOnline;
  return request.tune_backend_knobs ? tuner::FreeKnobs::kAll : tuner::FreeKnobs::kAllButBackend;
}

// `to`'s value of `spec`'s knob becomes `from`'s.
void CopyKnob(const KnobSpec& spec, const Knobs& from, Knobs* to) {
  std::visit([&](auto member) { (*to).*member = from.*member; }, spec.field);
}

}  // namespace

tuner::Target TargetOf(const RunInfo& run) {
  if (run.backend == BackendKind::kNccl) return tuner::Target::kNccl;
  if (run.kind == RunKind::kImported) return tuner::Target::kCpu;
  return tuner::Target::kExecutor;
}

tuner::JobFacts JobFactsOf(const RunInfo& run) {
  tuner::JobFacts job;
  job.workload = run.workload;
  job.topology = run.topology;
  job.step_ms = run.untraced_step_ms > 0.0 ? run.untraced_step_ms : run.step_ms_median;
  return job;
}

Status SetUpSearch(const RunInfo& run, const SearchRequest& request, SearchSetup* setup) {
  setup->scope.target = request.target.value_or(TargetOf(run));
  setup->scope.framework = run.framework;
  setup->scope.tune_on_request = request.tune_on_request;
  setup->scope.job = request.job.value_or(JobFactsOf(run));
  setup->base = request.knobs;
  if (!request.tune_on_request) {
    for (const KnobSpec& spec : KnobTable()) {
      if (KnobSearchedOnRequest(spec) && request.constants.count(spec.name) == 0) {
        CopyKnob(spec, run.knobs, &setup->base);
      }
    }
  }
  setup->options = MakeOptions(request);
  setup->complete = nullptr;
  if (request.mode != SearchMode::kOnline) {
    setup->complete = [job = setup->scope.job, backend = run.backend,
                       framework = run.framework](const Knobs& knobs) {
      return tuner::WithCompanionKnobs(knobs, job, backend, framework);
    };
  }
  return tuner::KnobSpace(run.backend, setup->base, request.constants, FreeKnobsOf(request),
                          setup->scope, &setup->space, &setup->shape);
}

Status LoadStoredSamples(Store& store, const RunInfo& run, StoredSamples* out) {
  SampleQuery query;
  query.workload = run.workload.name;
  query.topology = run.topology;
  query.fidelity = Fidelity::kMeasured;
  std::vector<Sample> all;
  AUTOTUNE_RETURN_IF_ERROR(store.ListSamples(query, &all));
  query.scale = run.scale;
  query.backend = run.backend;
  AUTOTUNE_RETURN_IF_ERROR(store.ListSamples(query, &out->measured));
  out->other_measured = static_cast<int>(all.size() - out->measured.size());
  // Like with like, as LoadStepTimes: an import given its production step time is learned
  // from at that time (the bytes of its steps over the production step, as the simulator's
  // predictions from it are), and once one is, the traced imports without one are left out,
  // so that the tuner does not choose its candidate by traced times and have it judged by
  // production ones (tracing costs each setting differently). Samples of a Horovod autotune
  // log (held by a run without steps) and of recorded runs stay as stored.
  std::map<int64_t, RunInfo> runs;
  for (const Sample& sample : out->measured) {
    if (sample.run_id > 0 && runs.count(sample.run_id) == 0) {
      AUTOTUNE_RETURN_IF_ERROR(store.GetRun(sample.run_id, &runs[sample.run_id]));
    }
  }
  auto traced_import = [&](const Sample& sample, bool production) {
    auto it = runs.find(sample.run_id);
    if (it == runs.end()) return false;
    const RunInfo& r = it->second;
    return r.kind == RunKind::kImported && r.steps_recorded > 0 &&
           (r.untraced_step_ms > 0.0) == production;
  };
  bool any_production = false;
  for (Sample& sample : out->measured) {
    if (!traced_import(sample, true)) continue;
    const RunInfo& r = runs[sample.run_id];
    if (r.step_ms_median > 0.0) sample.score_bytes_per_s *= r.step_ms_median / r.untraced_step_ms;
    sample.step_ms = r.untraced_step_ms;
    any_production = true;
  }
  if (any_production) {
    out->traced_left_out = static_cast<int>(std::erase_if(
        out->measured, [&](const Sample& sample) { return traced_import(sample, false); }));
  }
  return LoadStepTimes(store, out->measured, &out->steps);
}

Status LoadStepTimes(Store& store, const std::vector<Sample>& measured,
                     std::vector<tuner::MeasuredSteps>* out) {
  std::map<int64_t, int> samples_of_run;
  for (const Sample& sample : measured) ++samples_of_run[sample.run_id];
  std::vector<tuner::MeasuredSteps> traced, production;
  for (const Sample& sample : measured) {
    if (sample.run_id <= 0 || samples_of_run[sample.run_id] != 1) continue;
    // In the order the samples were stored: the order the real runs ended.
    tuner::MeasuredSteps steps{sample.knobs, {}, sample.run_id, sample.id};
    std::vector<double> scores;
    AUTOTUNE_RETURN_IF_ERROR(store.GetStepSeries(sample.run_id, &steps.step_ms, &scores));
    if (steps.step_ms.empty()) continue;
    RunInfo run;
    AUTOTUNE_RETURN_IF_ERROR(store.GetRun(sample.run_id, &run));
    if (run.untraced_step_ms <= 0.0) {
      traced.push_back(std::move(steps));
      continue;
    }
    // The production run's step times: its median (the step log's), the spread of its steps
    // the traced run's.
    const double scale = run.untraced_step_ms / Median(steps.step_ms);
    for (double& ms : steps.step_ms) ms *= scale;
    production.push_back(std::move(steps));
  }
  // Like with like: tracing costs each setting differently, so once production runs exist
  // they alone decide.
  std::vector<tuner::MeasuredSteps>& kept = production.empty() ? traced : production;
  for (tuner::MeasuredSteps& steps : kept) out->push_back(std::move(steps));
  return Status::Ok();
}

StatusOr<int> ObserveStored(const std::vector<Sample>& measured, tuner::KnobSearch* search) {
  int left_out = 0;
  for (const Sample& sample : measured) {
    if (!search->ToPoint(sample.knobs).ok()) {
      ++left_out;
      continue;
    }
    AUTOTUNE_RETURN_IF_ERROR(search->ObserveMeasured(sample.knobs, sample.score_bytes_per_s));
  }
  return left_out;
}

}  // namespace autotune::cli
