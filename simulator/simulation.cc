#include "simulator/simulation.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <thread>

#include "simulator/trace_calibration.h"
#include "traces/score.h"

namespace autotune::sim {

SettingResult Summarize(const Knobs& knobs, const std::vector<StepPrediction>& steps) {
  SettingResult r;
  r.knobs = knobs;
  std::vector<int64_t> step_bytes;
  r.step_ms.reserve(steps.size());
  step_bytes.reserve(steps.size());
  for (const StepPrediction& p : steps) {
    r.step_ms.push_back(p.step_ms);
    step_bytes.push_back(p.bytes);
  }
  r.step_ms_median = Median(r.step_ms);
  r.step_ms_p95 = Percentile(r.step_ms, 95.0);
  r.score_bytes_per_s = ScoreBytesPerSecond(step_bytes, r.step_ms);
  return r;
}

Status Simulation::Build(const Trace& trace, const Calibration& calibration,
                         const std::optional<Topology>& target, Simulation* out) {
  const Topology& recorded = trace.run.topology;
  if (!recorded.SameShape(calibration.topology)) {
    return Status::InvalidArgument(
        "run " + std::to_string(trace.run.id) + " was recorded on " + recorded.key() +
        " but calibration " + std::to_string(calibration.id) + " is of " +
        calibration.topology.key() + ": use a calibration of the same topology");
  }
  if (trace.run.backend != calibration.backend) {
    return Status::InvalidArgument("run " + std::to_string(trace.run.id) + " used backend " +
                                   BackendName(trace.run.backend) + " but calibration " +
                                   std::to_string(calibration.id) + " measured " +
                                   BackendName(calibration.backend));
  }
  Simulation sim;
  AUTOTUNE_RETURN_IF_ERROR(PreparedTrace::Prepare(trace, &sim.trace_));
  NetworkModel recorded_network;
  AUTOTUNE_RETURN_IF_ERROR(NetworkModel::Fit(calibration, &recorded_network));
  const NegotiationModel recorded_negotiation = NegotiationModel::Fit(trace, recorded_network);
  // The latency part of every collective is the calibration's, unscaled (simulator/README.md
  // says why an in-run latency scale was removed).
  sim.options_ = CalibrateOptions(trace, recorded_network, recorded_negotiation);
  const Topology to = target.value_or(recorded);
  AUTOTUNE_RETURN_IF_ERROR(recorded_network.Retarget(to, &sim.network_));
  sim.negotiation_ = recorded_negotiation.Retarget(recorded_network, sim.network_);
  *out = std::move(sim);
  return Status::Ok();
}

Status Simulation::FromModels(const Trace& trace, const NetworkModel& network,
                              const NegotiationModel& negotiation, const ReplayOptions& options,
                              Simulation* out) {
  Simulation sim;
  AUTOTUNE_RETURN_IF_ERROR(PreparedTrace::Prepare(trace, &sim.trace_));
  sim.network_ = network;
  sim.negotiation_ = negotiation;
  sim.options_ = options;
  *out = std::move(sim);
  return Status::Ok();
}

SettingResult Simulation::Evaluate(const Knobs& knobs, std::vector<StepTrace>* timeline) const {
  Replayer replayer(trace_, network_, negotiation_, options_);
  return Summarize(knobs, replayer.ReplayAll(replayer.MakeSetting(knobs), timeline));
}

std::vector<SettingResult> Simulation::EvaluateAll(std::span<const Knobs> settings,
                                                   int threads) const {
  std::vector<SettingResult> results(settings.size());
  int workers = threads > 0 ? threads : static_cast<int>(std::thread::hardware_concurrency());
  workers = std::clamp(workers, 1, std::max(1, static_cast<int>(settings.size())));
  std::atomic<size_t> next{0};
  auto work = [&] {
    Replayer replayer(trace_, network_, negotiation_, options_);
    for (size_t i = next++; i < settings.size(); i = next++) {
      results[i] = Summarize(settings[i], replayer.ReplayAll(replayer.MakeSetting(settings[i])));
    }
  };
  if (workers == 1) {
    work();
    return results;
  }
  std::vector<std::thread> pool;
  pool.reserve(workers);
  for (int i = 0; i < workers; ++i) pool.emplace_back(work);
  for (std::thread& t : pool) t.join();
  return results;
}

std::string Simulation::Describe() const {
  char line[512];
  const NegotiationParams& n = negotiation_.params();
  std::snprintf(line, sizeof(line),
                "trace: run %lld, %s on %s, %zu steps; predicting %s\n"
                "negotiation (%s): bits %.1f us + %.3f us/tensor, round %.1f us + %.3f "
                "us/tensor\nreplay: comm scale %.3f, copy scale %.3f, first negotiation >= "
                "%.1f us, "
                "wake delay %.1f us, one-tensor copy-out %s, %s cycles\n",
                static_cast<long long>(trace_.run().id), trace_.workload().name.c_str(),
                trace_.run().topology.key().c_str(), trace_.steps().size(),
                topology().key().c_str(), negotiation_.provenance().c_str(), n.bits_fixed_us,
                n.cached_per_tensor_us, n.round_fixed_us, n.uncached_per_tensor_us,
                options_.comm_scale, options_.copy_scale,
                options_.first_negotiation_us, options_.wake_delay_us,
                options_.single_tensor_copy_out ? "yes" : "no",
                options_.cycle_waits_for_collectives ? "blocking" : "streamed");
  return line + network_.Describe();
}

}  // namespace autotune::sim
