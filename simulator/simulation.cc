#include "simulator/simulation.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <thread>

#include "simulator/trace_calibration.h"
#include "traces/knob_table.h"
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

namespace {

// The most of gloo's fixed cost a call (ReplayOptions::launch_cpu_us) the backward pass pays
// per unit of time a bucket's allreduce is in flight beside it (launch_cpu_share). Measured on
// real DDP traces (bench/ddp/README.md, "What a bucket costs the backward pass"): the backward
// of 0.5 MB buckets against the default's ran longer by 0.50-0.51 of the added in-flight time
// on mobilenet_v2 and efficientnet_b0 (6-7 ms a bucket, what the fixed cost charges), by
// 0.26-0.31 on densenet121, whose 43 buckets queue back to back (2.4 ms a bucket, where 7 ms
// were charged).
constexpr double kLaunchCpuShare = 0.5;

double MedianStepMs(const PreparedTrace& trace, const NetworkModel& network,
                    const NegotiationModel& negotiation, const ReplayOptions& options,
                    const Knobs& knobs) {
  Replayer replayer(trace, network, negotiation, options);
  return Summarize(knobs, replayer.ReplayAll(replayer.MakeSetting(knobs))).step_ms_median;
}

// The compute-slowdown model's host shape and priors for run (cpu_share.h): its cores and
// ranks, the negotiation cycle's CPU cost, and for an imported Horovod run (its timeline
// writer spins on one core) a tracer of one core.
void InitCpuShare(const RunInfo& run, const NegotiationModel& negotiation, CpuShareParams* cpu) {
  *cpu = CpuShareOf(run);
  cpu->cycle_cpu_us = negotiation.IdleCycleCpuUs(run.knobs.cache_capacity > 0);
  cpu->recorded_tau = TracerPriorCores(run);
  if (cpu->recorded_tau > 0.0) {
    cpu->tau_source = "estimated: Horovod's timeline writer spins on one core";
  }
}

// An imported run's production step time (0 when not given): the untraced step time, pooled
// with the traced job's own (their geometric mean; *pooled set) where it is no faster than the
// latter (a tracing cost below zero is run-to-run noise; each measured the production job).
double ProductionStepMs(const RunInfo& run, bool* pooled = nullptr) {
  const bool pool = run.untraced_step_ms > 0.0 && run.traced_step_ms > 0.0 &&
                    run.untraced_step_ms >= run.traced_step_ms;
  if (pooled != nullptr) *pooled = pool;
  if (!(run.untraced_step_ms > 0.0)) return 0.0;
  return pool ? std::sqrt(run.untraced_step_ms * run.traced_step_ms) : run.untraced_step_ms;
}

// What the predictions of run are of: the production job. An untraced step time, when given,
// fixes the tracing cost: the tracer's cores when the host's cores are known (bisection: the
// predicted production step at the recorded setting equals the given one; what no number of
// cores explains is a ratio), else the ratio of the two step times. Where the traced job's own
// step time is given too, the comparison is like for like: the replay (in the imported steps'
// time, which can read short of the job's own) is first set to the job's own, and a production
// run no faster than its traced run (a tracing cost below zero: run-to-run noise) is pooled
// with it (their geometric mean; each measured the production job). Depends on the rest of
// options->cpu (the spin share): run again after FitCommSpin changes it.
void FitProductionModel(const RunInfo& run, const PreparedTrace& trace,
                        const NetworkModel& network, const NegotiationModel& negotiation,
                        ReplayOptions* options, std::string* predicts) {
  CpuShareParams& cpu = options->cpu;
  options->production_scale = 1.0;
  const bool imported = run.kind == RunKind::kImported;
  const bool traced_horovod = imported && run.framework == Framework::kHorovod;
  // The imported steps' median over the job's own (1 where the latter is not known).
  const double own_ms = imported ? run.traced_step_ms : 0.0;
  const double reads =
      own_ms > 0.0 && run.step_ms_median > 0.0 ? run.step_ms_median / own_ms : 1.0;
  char line[320];
  std::snprintf(line, sizeof(line),
                "; the imported steps read %.3f of the traced job's own step time (%.1f ms)",
                reads, own_ms);
  const std::string own_note = own_ms > 0.0 ? line : "";
  if (!(imported && run.untraced_step_ms > 0.0)) {
    if (!imported) {
      *predicts = "the job as recorded (autotune's executor; its tracing costs little)";
    } else if (traced_horovod && cpu.enabled()) {
      *predicts = "the production job (untraced), the timeline's cost estimated as one core "
                  "of " + std::to_string(cpu.cores) + " taken by Horovod's timeline writer";
    } else {
      *predicts = "the traced job: no untraced step time given (import --untraced-step-ms)" +
                  std::string(cpu.enabled() ? "" : " and the host's cores not known");
    }
    options->production_scale = 1.0 / reads;
    *predicts += own_note;
    return;
  }
  bool pooled = false;
  const double production_ms = ProductionStepMs(run, &pooled);
  std::snprintf(line, sizeof(line),
                "; the untraced step time %.1f ms is no faster than the traced job's own, so "
                "the two are pooled: %.1f ms",
                run.untraced_step_ms, production_ms);
  const std::string pooled_note = pooled ? line : "";
  if (!cpu.enabled()) {
    options->production_scale = production_ms / run.step_ms_median;
    std::snprintf(line, sizeof(line),
                  "the production job (untraced): the traced prediction times %.3f, the "
                  "production step time over the imported one",
                  options->production_scale);
    *predicts = line + pooled_note + own_note;
    return;
  }
  // Bisection on the recorded tracer's cores (more of them, a faster production job) to the
  // production step time in the imported steps' time.
  const double target_ms = production_ms * reads;
  // At most the one core Horovod's timeline writer spins on: a production step faster than
  // one core's worth is run-to-run noise, a ratio below, not a tracer that shrinks the compute.
  double lo = 0.0, hi = std::min(1.0, static_cast<double>(cpu.cores));
  for (int i = 0; i < 30; ++i) {
    cpu.recorded_tau = 0.5 * (lo + hi);
    const double ms = MedianStepMs(trace, network, negotiation, *options, run.knobs);
    (ms > target_ms ? lo : hi) = cpu.recorded_tau;
  }
  cpu.recorded_tau = 0.5 * (lo + hi);
  std::snprintf(line, sizeof(line), "fitted: %.2f cores, from the production step time %.1f ms",
                cpu.recorded_tau, production_ms);
  cpu.tau_source = line;
  *predicts = "the production job (untraced): the tracing cost fitted to the given untraced "
              "step time" + pooled_note + own_note;
  // The imported steps' reading short, and what the tracer's cores cannot explain (a
  // production job slower than its traced run: tau pinned at 0), are a ratio.
  const double fitted_ms = MedianStepMs(trace, network, negotiation, *options, run.knobs);
  const double rest = fitted_ms > 0.0 ? target_ms / fitted_ms : 1.0;
  if (std::abs(rest - 1.0) > 1e-3) {
    std::snprintf(line, sizeof(line), "; what the tracer's cores do not explain, times %.3f",
                  rest);
    *predicts += line;
  }
  options->production_scale = (std::abs(rest - 1.0) > 1e-3 ? rest : 1.0) / reads;
}

// The ranks that share a host's cores on the predicted topology: a host that held every node
// of the recorded run (an emulated cluster on one machine) holds every node of the predicted
// one; else a host holds as many nodes as it did.
void RetargetCpuShare(const Topology& from, const Topology& to, CpuShareParams* cpu) {
  const int recorded_nodes_per_host =
      std::max(1, cpu->recorded_ranks / std::max(1, from.ranks_per_node));
  const int nodes_per_host = recorded_nodes_per_host >= from.nodes
                                 ? to.nodes
                                 : std::min(recorded_nodes_per_host, to.nodes);
  cpu->ranks = to.ranks_per_node * nodes_per_host;
}

}  // namespace

Status Simulation::Build(const Trace& trace, const Calibration& calibration,
                         const std::optional<Topology>& target,
                         const Calibration* target_calibration, Simulation* out) {
  const Topology& recorded = trace.run.topology;
  if (!recorded.SameShape(calibration.topology)) {
    return Status::InvalidArgument(
        "run " + std::to_string(trace.run.id) + " was recorded on " + recorded.key() +
        " but calibration " + std::to_string(calibration.id) + " is of " +
        calibration.topology.key() + ": use a calibration of the same topology");
  }
  // A DDP job on CPUs may also take a calibrate of Open MPI, standing in for gloo's
  // (ChooseNetwork, stored_simulation.h, says so).
  if (calibration.backend != trace.run.backend &&
      calibration.backend != CollectiveLibrary(trace.run)) {
    return Status::InvalidArgument("run " + std::to_string(trace.run.id) + " used backend " +
                                   BackendName(CollectiveLibrary(trace.run)) +
                                   " but calibration " +
                                   std::to_string(calibration.id) + " measured " +
                                   BackendName(calibration.backend));
  }
  Simulation sim;
  AUTOTUNE_RETURN_IF_ERROR(PreparedTrace::Prepare(trace, &sim.trace_));
  // The world's route is the job's library's (a DDP job's gloo ring, whatever calibrate stands
  // in for it).
  const WorldRoute route = RouteOf(CollectiveLibrary(trace.run));
  NetworkModel recorded_network;
  AUTOTUNE_RETURN_IF_ERROR(NetworkModel::Fit(calibration, route, &recorded_network));
  const NegotiationModel recorded_negotiation = NegotiationModel::Fit(trace, recorded_network);
  // The latency part of every collective is the calibration's, unscaled (simulator/README.md
  // says why an in-run latency scale was removed).
  sim.options_ = CalibrateOptions(trace, recorded_network, recorded_negotiation);
  // Real Horovod's background thread runs across steps: its cycle grid goes on from the step
  // before (our executor starts its cycles at each step's origin).
  if (trace.run.kind == RunKind::kImported && trace.run.framework == Framework::kHorovod) {
    sim.options_.phase = ReplayOptions::Phase::kCarried;
  }
  InitCpuShare(trace.run, recorded_negotiation, &sim.options_.cpu);
  FitProductionModel(trace.run, sim.trace_, recorded_network, recorded_negotiation, &sim.options_,
                     &sim.predicts_);
  const Topology to = target.value_or(recorded);
  if (target_calibration != nullptr && target_calibration->topology.SameShape(to) &&
      !to.SameShape(recorded)) {
    NetworkModel measured_target;  // bound to the calibrate's hosts: rebound to the target's
    AUTOTUNE_RETURN_IF_ERROR(NetworkModel::Fit(*target_calibration, route, &measured_target));
    AUTOTUNE_RETURN_IF_ERROR(measured_target.Retarget(to, &sim.network_, &sim.assumption_));
  } else {
    AUTOTUNE_RETURN_IF_ERROR(recorded_network.Retarget(to, &sim.network_, &sim.assumption_));
  }
  RetargetCpuShare(recorded, to, &sim.options_.cpu);
  // DDP over gloo with gloo's calibrate (`calibrate --backend gloo`, each allreduce timed
  // alone): a launch beside the compute costs it gloo's fixed cost a call (ReplayOptions). A
  // latency fitted to the job's own collectives alone carries their load already and is not
  // charged again (bench/ddp/README.md: charged, 0.5 MB buckets up to 114% too slow).
  if (CollectiveLibrary(trace.run) == BackendKind::kGloo &&
      calibration.backend == BackendKind::kGloo) {
    sim.options_.launch_cpu_us =
        AlphaBetaCost(Op::kAllreduce, to.world_size(),
                      sim.network_.params().at(Op::kAllreduce, Level::kWorld))
            .fixed_us;
    sim.options_.launch_cpu_share = kLaunchCpuShare;
  }
  sim.negotiation_ = recorded_negotiation.Retarget(recorded_network, sim.network_);
  sim.CountRecordedLaunches();
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
  sim.CountRecordedLaunches();
  *out = std::move(sim);
  return Status::Ok();
}

void Simulation::CountRecordedLaunches() {
  if (options_.launch_cpu_us <= 0.0 || !options_.recorded_launch_cpu_us.empty()) return;
  Replayer replayer(trace_, network_, negotiation_, options_);
  options_.recorded_launch_cpu_us =
      replayer.LaunchCpuUs(replayer.MakeSetting(trace_.run().knobs));
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

int Simulation::FitCommSpin(std::span<const RunInfo> others) {
  if (!options_.cpu.enabled()) return 0;
  const RunInfo& run = trace_.run();
  std::vector<const RunInfo*> used;
  for (const RunInfo& r : others) {
    if (r.step_ms_median > 0.0 && !(r.knobs == run.knobs)) used.push_back(&r);
  }
  if (used.empty()) return 0;
  // A run with a production step time is compared with the production prediction (the
  // tracing cost fitted again under each share), like for like where the job's tracing cost
  // differs between settings; the others with the traced prediction at the traced step.
  const bool production = run.kind == RunKind::kImported && run.untraced_step_ms > 0.0 &&
                          std::any_of(used.begin(), used.end(), [](const RunInfo* r) {
                            return ProductionStepMs(*r) > 0.0;
                          });
  // The grids: sigma 0 to 1.5 by eighths; the cycles' share from 1 (the prior, first: a tie
  // keeps it) down to 0 by quarters, for Horovod's cycles only (DDP runs none).
  constexpr int kSigmas = 13;
  constexpr double kSigmaStep = 0.125;
  constexpr int kShares = 5;
  constexpr double kShareStep = 1.0 / (kShares - 1);
  const int shares = run.framework == Framework::kHorovod ? kShares : 1;
  double best_sigma = options_.cpu.sigma, best_share = options_.cpu.cycle_cpu_share;
  double best_error = -1.0;
  for (int k = 0; k < kSigmas * shares; ++k) {
    ReplayOptions fitted = options_;
    fitted.cpu.sigma = kSigmaStep * (k % kSigmas);
    fitted.cpu.cycle_cpu_share = shares > 1 ? 1.0 - kShareStep * (k / kSigmas) : 1.0;
    std::string unused;
    if (production) FitProductionModel(run, trace_, network_, negotiation_, &fitted, &unused);
    ReplayOptions traced = fitted;
    traced.cpu.predicted_tau = traced.cpu.recorded_tau;  // the other runs were traced too
    traced.production_scale = 1.0;
    double error = 0.0;
    for (const RunInfo* r : used) {
      const double untraced_ms = production ? ProductionStepMs(*r) : 0.0;
      const double ms = MedianStepMs(trace_, network_, negotiation_,
                                     untraced_ms > 0.0 ? fitted : traced, r->knobs);
      error += std::pow(std::log(ms / (untraced_ms > 0.0 ? untraced_ms : r->step_ms_median)), 2);
    }
    if (best_error < 0.0 || error < best_error) {
      best_error = error;
      best_sigma = fitted.cpu.sigma;
      best_share = fitted.cpu.cycle_cpu_share;
    }
  }
  options_.cpu.sigma = best_sigma;
  options_.cpu.cycle_cpu_share = best_share;
  std::string runs;
  for (const RunInfo* r : used) {
    runs += (runs.empty() ? "" : ", ") + std::to_string(r->id) +
            (production && ProductionStepMs(*r) > 0.0 ? " (production)" : " (traced)");
  }
  char line[256];
  std::snprintf(line, sizeof(line), "fitted to the step times of run%s %s (rms log error %.3f)",
                used.size() == 1 ? "" : "s", runs.c_str(), std::sqrt(best_error / used.size()));
  options_.cpu.sigma_source = line;
  // The tracing cost was fitted under the prior spin share: fit it again under this one, so
  // that the recorded setting still predicts the given untraced step time.
  FitProductionModel(run, trace_, network_, negotiation_, &options_, &predicts_);
  return static_cast<int>(used.size());
}

void Simulation::AdoptCpuFits(const Simulation& fitted) {
  CpuShareParams& cpu = options_.cpu;
  cpu.sigma = fitted.options_.cpu.sigma;
  cpu.cycle_cpu_share = fitted.options_.cpu.cycle_cpu_share;
  cpu.sigma_source = fitted.options_.cpu.sigma_source;
  cpu.recorded_tau = fitted.options_.cpu.recorded_tau;
  cpu.tau_source = fitted.options_.cpu.tau_source;
  options_.production_scale = fitted.options_.production_scale;
  predicts_ = fitted.predicts_;
}

std::string Simulation::Describe() const {
  char line[640];
  const NegotiationParams& n = negotiation_.params();
  std::snprintf(line, sizeof(line),
                "trace: run %lld, %s on %s, %zu steps; predicting %s\n"
                "negotiation (%s): bits %.1f us + %.3f us/tensor, round %.1f us + %.3f "
                "us/tensor\nreplay: comm scale %.3f (x %.3f beside the compute), copy scale %.3f, "
                "first negotiation >= "
                "%.1f us, "
                "wake delay %.1f us, one-tensor copy-out %s, %s cycles, launch %.1f us (its "
                "compute cost beside the backward pass %.1f us, at most %.2f of the time a "
                "collective runs beside it)\n",
                static_cast<long long>(trace_.run().id), trace_.workload().name.c_str(),
                trace_.run().topology.key().c_str(), trace_.steps().size(),
                topology().key().c_str(), negotiation_.provenance().c_str(), n.bits_fixed_us,
                n.cached_per_tensor_us, n.round_fixed_us, n.uncached_per_tensor_us,
                options_.comm_scale, options_.comm_contention, options_.copy_scale,
                options_.first_negotiation_us, options_.wake_delay_us,
                options_.single_tensor_copy_out ? "yes" : "no",
                options_.cycle_waits_for_collectives ? "blocking" : "streamed",
                options_.launch_us, options_.launch_cpu_us, options_.launch_cpu_share);
  std::string eager;
  if (options_.eager_limits && !options_.eager_limits->empty()) {
    eager = std::string("\n") + KnobOfField(&Knobs::mpi_tcp_eager_limit).name + ": " +
            options_.eager_limits->Describe();
  }
  return line + DescribeCpuShare() + "\n" + "predicts: " + predicts_ + "\n" +
         network_.Describe() + eager;
}

std::string Simulation::EagerLimitHeld(const Knobs& knobs) const {
  const int job = trace_.run().knobs.mpi_tcp_eager_limit;
  const int limit = knobs.mpi_tcp_eager_limit;
  if (EffectiveTcpEagerLimit(limit) == EffectiveTcpEagerLimit(job)) return "";
  if (options_.eager_limits && options_.eager_limits->Choose(limit) >= 0) return "";
  return std::string(KnobOfField(&Knobs::mpi_tcp_eager_limit).name) + " " +
         std::to_string(limit) + " is held at the job's " + std::to_string(job) +
         " (0: Open MPI's own): no mpi calibrate of " + topology().key() +
         " at a limit between them and at the job's (autotune calibrate " +
         KnobOfField(&Knobs::mpi_tcp_eager_limit).flag + " " + std::to_string(limit) + ")";
}

std::string Simulation::DescribeCpuShare() const { return sim::DescribeCpuShare(options_.cpu); }

}  // namespace autotune::sim
