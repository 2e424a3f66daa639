// Simulation: a trace, the network model fitted to its topology's calibration (retargeted
// to the topology to predict), the negotiation model fitted to its cycles and the replay
// options calibrated against it: everything needed to score knob settings, built once.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "simulator/negotiation_model.h"
#include "simulator/network_model.h"
#include "simulator/prepared_trace.h"
#include "simulator/replay.h"
#include "traces/calibration.h"
#include "traces/knobs.h"
#include "traces/status.h"
#include "traces/trace.h"

namespace autotune::sim {

// One setting's prediction over all the trace's steps.
struct SettingResult {
  Knobs knobs;
  double step_ms_median = 0.0;
  double step_ms_p95 = 0.0;
  double score_bytes_per_s = 0.0;  // ScoreBytesPerSecond over the predicted steps
  std::vector<double> step_ms;     // per recorded step
};

class Simulation {
 public:
  // Checks that trace and calibration describe the same topology shape and backend,
  // fits the models and retargets them to `target` (the trace's topology when empty).
  // Errors name the run, the calibration and the field at fault.
  static Status Build(const Trace& trace, const Calibration& calibration,
                      const std::optional<Topology>& target, Simulation* out) {
    return Build(trace, calibration, target, nullptr, out);
  }
  // The same, with the network of `target` fitted to `target_calibration` (a calibration of
  // that shape, as TargetAtJobLevel gives it) instead of the recorded one's retargeted; null
  // or of another shape: retargeted.
  static Status Build(const Trace& trace, const Calibration& calibration,
                      const std::optional<Topology>& target,
                      const Calibration* target_calibration, Simulation* out);
  // From given models (tests): network bound to the target topology, negotiation for it.
  static Status FromModels(const Trace& trace, const NetworkModel& network,
                           const NegotiationModel& negotiation, const ReplayOptions& options,
                           Simulation* out);

  const PreparedTrace& trace() const { return trace_; }
  const NetworkModel& network() const { return network_; }
  const NegotiationModel& negotiation() const { return negotiation_; }
  const ReplayOptions& options() const { return options_; }
  const Topology& topology() const { return network_.topology(); }
  int64_t calibration_id() const { return network_.calibration_id(); }

  // Predicts one setting on the calling thread; timeline (optional) gets one StepTrace per
  // recorded step.
  SettingResult Evaluate(const Knobs& knobs, std::vector<StepTrace>* timeline = nullptr) const;
  // Predicts many settings on `threads` threads (0 = all cores); results in input order.
  std::vector<SettingResult> EvaluateAll(std::span<const Knobs> settings, int threads = 0) const;

  // A few lines on what the models were fitted to (for --verbose output and reports).
  std::string Describe() const;
  // What the predictions are of, one line: the production job (and how its tracing cost was
  // found) or the traced one.
  const std::string& predicts() const { return predicts_; }
  // What predicting another topology had to assume (one line), "" when nothing.
  const std::string& assumption() const { return assumption_; }
  // The compute-slowdown model's parameters and their sources, one line.
  std::string DescribeCpuShare() const;
  // Sets the compute-slowdown parameters as given (CpuShareParams() turns the model off).
  void set_cpu_share(const CpuShareParams& cpu) { options_.cpu = cpu; }
  // What a setting's mpi_tcp_eager_limit does (eager_limit.h); null: the knob is held.
  void set_eager_limits(std::shared_ptr<const EagerLimitEffect> eager) {
    options_.eager_limits = std::move(eager);
  }
  // "" when knobs' mpi_tcp_eager_limit is predicted (the job's own, or a calibrate between the
  // job's and it); else one line saying that this setting's limit is held at the job's.
  std::string EagerLimitHeld(const Knobs& knobs) const;

  // Fits the communication thread's spin share (CpuShareParams::sigma) and the share of an
  // idle cycle's modelled CPU the cycles took (cycle_cpu_share) so that this simulation,
  // predicting its own topology, best predicts the step times of other runs of the job at
  // other settings (the least squared log error over a grid of sigma in [0, 1.5] by 0.125 and,
  // for Horovod's cycles, the cycles' share in [0, 1] by 0.25; a tie keeps the larger share,
  // the prior): a run with an untraced step time against the production prediction (where
  // this run has one too; the tracing cost fitted again under each sigma), else its traced
  // median against the traced prediction. Returns the number of runs used (0: nothing
  // fitted, params kept). Then fits the tracing cost again under the fitted share (the
  // recorded setting keeps predicting the run's untraced step time).
  int FitCommSpin(std::span<const RunInfo> others);
  // Takes what FitCommSpin fitted on a simulation of the recorded topology (the spin share,
  // the tracer's cores, the production ratio), keeping this one's host shape (its ranks).
  void AdoptCpuFits(const Simulation& fitted);

 private:
  // Fills options_.recorded_launch_cpu_us once (a replay of the recorded setting) where
  // launch_cpu_us charges launches, so no Evaluate replays it again.
  void CountRecordedLaunches();

  PreparedTrace trace_;
  NetworkModel network_;
  NegotiationModel negotiation_;
  ReplayOptions options_;
  std::string predicts_ = "the job as recorded";
  std::string assumption_;  // what the retargeted network model assumes, "" if nothing
};

// Summary of per-step predictions: median/p95 of step time; the score is ScoreBytesPerSecond
// over all steps (total bytes / total time), the statistic a measured run is scored by.
SettingResult Summarize(const Knobs& knobs, const std::vector<StepPrediction>& steps);

}  // namespace autotune::sim
