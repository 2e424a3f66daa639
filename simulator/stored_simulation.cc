#include "simulator/stored_simulation.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>
#include <utility>

#include "simulator/cpu_share.h"
#include "simulator/eager_limit.h"
#include "traces/knob_table.h"

namespace autotune::sim {
namespace {

// The command that records the missing calibration of `library` on the run's topology.
std::string CalibrateHint(const RunInfo& run, BackendKind library, const std::string& db) {
  const Topology& t = run.topology;
  const std::string backend =
      library == BackendKind::kMpi ? "" : std::string(" --backend ") + BackendName(library);
  if (t.nodes > 1) {
    return "mpirun -np " + std::to_string(t.world_size()) + " --hostfile HOSTS autotune " +
           "calibrate" + backend + " --db " + db + " (" + std::to_string(t.nodes) +
           " nodes x " + std::to_string(t.ranks_per_node) + " ranks)";
  }
  return "autotune calibrate" + backend + " --np " + std::to_string(t.world_size()) + " --db " +
         db;
}

// "run 5" or "runs 5, 7".
std::string RunList(const std::vector<int64_t>& runs) {
  std::string out = runs.size() == 1 ? "run " : "runs ";
  for (size_t i = 0; i < runs.size(); ++i) out += (i ? ", " : "") + std::to_string(runs[i]);
  return out;
}

// " (run 3's collectives at 1.047x, run 1's collectives at 1.119x: to run 2's tracing cost)"
// for the traces whose scale (TracerCommScale) is not 1; empty where none is.
std::string TracerScaleNote(std::span<const Trace* const> traces,
                            std::span<const double> scales) {
  std::string scaled;
  for (size_t i = 1; i < traces.size() && i < scales.size(); ++i) {
    if (std::abs(scales[i] - 1.0) < 0.005) continue;
    char part[96];
    std::snprintf(part, sizeof(part), "%srun %lld's collectives at %.3fx",
                  scaled.empty() ? "" : ", ", static_cast<long long>(traces[i]->run.id),
                  scales[i]);
    scaled += part;
  }
  if (scaled.empty()) return "";
  return " (" + scaled + ": to run " + std::to_string(traces.front()->run.id) +
         "'s tracing cost)";
}

// The traces of the other complete imported runs of run's job (same workload name, topology
// shape, backend and framework), newest first, at most kMaxSelfCalibrationRuns - 1.
Status LoadSameJobTraces(Store& store, const RunInfo& run, std::vector<Trace>* out) {
  std::vector<RunInfo> runs;
  std::vector<Status> unreadable;  // another run's bad row does not stop this simulation
  AUTOTUNE_RETURN_IF_ERROR(store.ListRuns(&runs, &unreadable));
  std::sort(runs.begin(), runs.end(),
            [](const RunInfo& a, const RunInfo& b) { return a.id > b.id; });
  for (const RunInfo& r : runs) {
    if (static_cast<int>(out->size()) + 1 >= kMaxSelfCalibrationRuns) break;
    if (r.id == run.id || r.kind != RunKind::kImported || !r.complete ||
        r.workload.name != run.workload.name || !r.topology.SameShape(run.topology) ||
        r.backend != run.backend || r.framework != run.framework) {
      continue;
    }
    Trace t;
    AUTOTUNE_RETURN_IF_ERROR(store.LoadTrace(r.id, &t));
    out->push_back(std::move(t));
  }
  return Status::Ok();
}

// Whether two runs of a job ran Open MPI at the same effective TCP eager limit (always, for a
// job whose collectives are not Open MPI's).
bool SameEagerLimit(const RunInfo& a, const RunInfo& b) {
  return CollectiveLibrary(a) != BackendKind::kMpi ||
         EffectiveTcpEagerLimit(a.knobs.mpi_tcp_eager_limit) ==
             EffectiveTcpEagerLimit(b.knobs.mpi_tcp_eager_limit);
}

// "0.89" (two decimals).
std::string FormatRatio(double ratio) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f", ratio);
  return text;
}

// The range a host-memory calibrate's level is scaled within (ChooseNetwork).
constexpr double kMinCalibrateLevel = 0.5;
constexpr double kMaxCalibrateLevel = 2.0;

// A calibration point's times (median, min, max) times `ratio`.
void ScalePoint(double ratio, CalibrationPoint* p) {
  p->median_us *= ratio;
  p->min_us *= ratio;
  p->max_us *= ratio;
}

// Fills `*out` with the store's calibrate of `to` (the job's collective library) at the job's
// level and appends to the choice's source what predicts `to`; leaves `*out` empty where the
// store has none (the recorded model is then extrapolated).
Status TargetNetwork(Store& store, const RunInfo& run, const Topology& to, NetworkChoice* choice,
                     std::optional<Calibration>* out) {
  out->reset();
  const BackendKind library = CollectiveLibrary(run);
  Calibration target;
  const Status found = store.FindCalibration(to, library, &target);
  if (found.code() == Status::Code::kNotFound) {
    // How the world's allreduce moves to the new shape (network_model.h, WorldRoute).
    choice->source += "; " + to.key() + " extrapolated from " + run.topology.key() +
                      " (no " + BackendName(library) + " calibrate of " + to.key() +
                      " in the database; " + WorldRouteText(RouteOf(library)) + ")";
    return Status::Ok();
  }
  AUTOTUNE_RETURN_IF_ERROR(found);
  std::string line = "; " + to.key() + " by calibration " + std::to_string(target.id) + " (" +
                     BackendName(library) + ")";
  if (choice->calibrate) {
    NetworkModel job, calibrate;
    AUTOTUNE_RETURN_IF_ERROR(NetworkModel::Fit(choice->calibration, &job));
    AUTOTUNE_RETURN_IF_ERROR(NetworkModel::Fit(*choice->calibrate, &calibrate));
    std::vector<double> ratios;
    *out = TargetAtJobLevel(target, job, &calibrate, &ratios);
    std::sort(ratios.begin(), ratios.end());
    if (!ratios.empty()) {
      line += " at the job's level (its collectives' ratio to calibration " +
              std::to_string(choice->calibrate->id) + " on " + run.topology.key() + ": " +
              FormatRatio(ratios[ratios.size() / 2]) + "x at the median, " +
              FormatRatio(ratios.front()) + "-" + FormatRatio(ratios.back()) + "x)";
    }
  } else {
    *out = std::move(target);
    line += " at the calibrate's level (no job's own collectives compared with a calibrate of " +
            run.topology.key() + ")";
  }
  choice->source += line;
  return Status::Ok();
}

// What the knob mpi_tcp_eager_limit does on `to` (eager_limit.h) for an Open MPI job: from
// the store's mpi calibrates of `to` at the job's limit and at others, newest first, and on
// the recorded topology an imported job's own collective tails from `traces` (its imported
// runs); null where there is no calibrate at the job's limit or none at another.
Status LoadEagerLimits(Store& store, const RunInfo& run, const Topology& to,
                       std::span<const Trace* const> traces,
                       std::shared_ptr<const EagerLimitEffect>* out) {
  out->reset();
  if (CollectiveLibrary(run) != BackendKind::kMpi) return Status::Ok();
  const int job_limit = run.knobs.mpi_tcp_eager_limit;
  Calibration base;
  const Status found = store.FindCalibration(to, BackendKind::kMpi, &base, job_limit);
  if (found.code() == Status::Code::kNotFound) return Status::Ok();
  AUTOTUNE_RETURN_IF_ERROR(found);
  std::vector<Calibration> listed;
  AUTOTUNE_RETURN_IF_ERROR(store.ListCalibrations(&listed));
  std::vector<Calibration> others;
  for (auto it = listed.rbegin(); it != listed.rend(); ++it) {
    if (!it->topology.SameShape(to) || it->backend != BackendKind::kMpi ||
        EffectiveTcpEagerLimit(it->mpi_tcp_eager_limit) == EffectiveTcpEagerLimit(job_limit)) {
      continue;
    }
    Calibration c;
    AUTOTUNE_RETURN_IF_ERROR(store.GetCalibration(it->id, &c));
    others.push_back(std::move(c));
  }
  if (others.empty()) return Status::Ok();
  auto effect = std::make_shared<EagerLimitEffect>();
  AUTOTUNE_RETURN_IF_ERROR(EagerLimitEffect::Fit(job_limit, base, others, effect.get()));
  if (effect->empty()) return Status::Ok();
  if (run.kind == RunKind::kImported && to.SameShape(run.topology)) {
    std::vector<const Trace*> own;  // the job's runs at its own limit
    std::map<int64_t, std::vector<const Trace*>> at;  // at other limits, by effective limit
    for (const Trace* t : traces) {
      if (SameEagerLimit(run, t->run)) {
        own.push_back(t);
      } else {
        at[EffectiveTcpEagerLimit(t->run.knobs.mpi_tcp_eager_limit)].push_back(t);
      }
    }
    // Each run's collectives at the simulated run's tracer (TracerCommScale, as the
    // self-calibration takes them): a ratio across runs of unlike tracing costs would carry it.
    auto tails_of = [&run](const std::vector<const Trace*>& runs) {
      std::vector<double> scales;
      for (const Trace* t : runs) scales.push_back(TracerCommScale(run, t->run));
      return CollectiveTailsFromTraces(runs, scales);
    };
    const std::vector<CollectiveTail> own_tails = tails_of(own);
    effect->SetJobTails(own_tails);
    for (const auto& [limit, runs] : at) {
      effect->SetJobAtLimit(static_cast<int>(limit), tails_of(runs), own_tails);
    }
  }
  *out = std::move(effect);
  return Status::Ok();
}

}  // namespace

Calibration TargetAtJobLevel(const Calibration& target, const NetworkModel& job,
                             const NetworkModel* calibrate, std::vector<double>* ratios) {
  Calibration out = target;
  if (calibrate == nullptr) return out;
  for (CalibrationPoint& p : out.points) {
    if (p.scope == Scope::kCopy) continue;
    const double bytes = static_cast<double>(p.bytes);
    const double base = calibrate->LevelUs(p.op, Level::kWorld, bytes);
    const double ratio =
        base > 0.0 ? std::clamp(job.LevelUs(p.op, Level::kWorld, bytes) / base, kMinJobLevel,
                                kMaxJobLevel)
                   : 1.0;
    ScalePoint(ratio, &p);
    if (ratios != nullptr) ratios->push_back(ratio);
  }
  return out;
}

Status ChooseNetwork(Store& store, const Trace& trace, NetworkChoice* out,
                     std::vector<Trace>* others) {
  const RunInfo& run = trace.run;
  NetworkChoice choice;
  // A DDP job on CPUs allreduces with gloo: its calibrate is `calibrate --backend gloo`. Open
  // MPI's (`autotune calibrate`) measured another library with its own protocol switches (on
  // the emulated cluster Open MPI's allreduce jumps from 0.5 ms at 128 KB to 7.5 ms at 256 KB;
  // gloo's ring has no such step, and gloo pays about 6.5 ms a call however small: bench/ddp);
  // it stands in only where neither a gloo calibrate nor the job's own collectives exist.
  const BackendKind library = CollectiveLibrary(run);
  const bool ddp_on_cpu = library != run.backend;
  Calibration measured;
  // An Open MPI job run at an eager limit of its own takes a calibrate at that limit where the
  // store has one (LoadEagerLimits carries it over to the job's settings otherwise).
  Status found = Status::NotFound("");
  if (library == BackendKind::kMpi && run.knobs.mpi_tcp_eager_limit > 0) {
    found = store.FindCalibration(run.topology, library, &measured,
                                  run.knobs.mpi_tcp_eager_limit);
  }
  if (found.code() == Status::Code::kNotFound) {
    found = store.FindCalibration(run.topology, library, &measured);
  }
  bool calibrate_of_other_library = false;
  if (ddp_on_cpu && found.code() == Status::Code::kNotFound) {
    found = store.FindCalibration(run.topology, run.backend, &measured);
    calibrate_of_other_library = found.ok();
  }
  if (!found.ok() && found.code() != Status::Code::kNotFound) return found;
  choice.measured_calibration = found.ok();
  std::optional<Calibration> self;
  std::string tracer_note;  // how the other runs' collectives were scaled (TracerScaleNote)
  others->clear();
  if (run.kind == RunKind::kImported) {
    AUTOTUNE_RETURN_IF_ERROR(LoadSameJobTraces(store, run, others));
    // The job's own collectives at its own eager limit: its runs at another limit tell what
    // that limit does (LoadEagerLimits), not what the job's collectives take at its own.
    std::vector<const Trace*> traces = {&trace};
    for (const Trace& t : *others) {
      if (SameEagerLimit(run, t.run)) traces.push_back(&t);
    }
    // Each run's collectives brought to the simulated run's tracer (cpu_share.h).
    std::vector<double> scales;
    for (const Trace* t : traces) scales.push_back(TracerCommScale(run, t->run));
    StatusOr<Calibration> own = CalibrationFromTraces(traces, scales);
    if (own.ok()) {
      self = std::move(*own);
      for (const Trace* t : traces) choice.self_calibration_runs.push_back(t->run.id);
      tracer_note = TracerScaleNote(traces, scales);
    }
  }
  if (!choice.measured_calibration && !self) {
    choice.missing = Status::NotFound("no calibration for topology " + run.topology.key() + " (" +
                                      BackendName(library) + ") in " + store.path() +
                                      "; make one with: " +
                                      CalibrateHint(run, library, store.path()));
    *out = std::move(choice);
    return Status::Ok();
  }
  const std::string own_runs =
      self ? RunList(choice.self_calibration_runs) + tracer_note : "";
  if (self && choice.measured_calibration && calibrate_of_other_library) {
    choice.measured_calibration = false;
    choice.calibration = std::move(*self);
    choice.source = "the own collectives of " + own_runs +
                    " (DDP's gloo allreduce; calibration " + std::to_string(measured.id) +
                    " measured Open MPI's, another library: not used; `autotune calibrate "
                    "--backend gloo` measures gloo's)";
  } else if (self && choice.measured_calibration) {
    choice.calibrate = measured;
    NetworkModel measured_model;
    AUTOTUNE_RETURN_IF_ERROR(NetworkModel::Fit(measured, &measured_model));
    choice.agreement = CompareCalibrations(*self, measured_model);
    // A calibrate on host memory (gloo's, Open MPI's) times each collective alone, on idle
    // cores; the job's ran at their own level on the same cluster, beside its compute (gloo:
    // 0.87-1.33x the calibrate on bench/ddp's grids; Open MPI: 0.87-1.94x on bench/horovod's).
    // Its curve gives the shape (the cost a call, the step between sizes), the job's own
    // points the level: scaled by their agreement, so the sizes between and beyond the job's
    // own are not priced at the calibrate's level (bench/ddp/README.md: every resnet18
    // setting 3-11% slow unscaled on a held-out grid; bench/horovod/README.md: a Horovod job
    // imported from its one timeline, whose fused buffers are all large, priced its unfused
    // tensors at the idle level, 10-32% fast). The agreement over the job's communication
    // time, not the median over its sizes: a small bucket slowed by the large one beside it
    // (densenet121's 1.6 MB at 2.8x) otherwise sets the level of every bucket (its 2.7 MB
    // ones priced 1.5x slow, bench/ddp/README.md). NCCL's collectives run on the GPU, not on
    // the cores the compute holds: its calibrate keeps its own level.
    double level = 1.0;
    if (library != BackendKind::kNccl && choice.agreement.points > 0) {
      level = std::clamp(choice.agreement.time_ratio, kMinCalibrateLevel, kMaxCalibrateLevel);
      for (CalibrationPoint& p : measured.points) ScalePoint(level, &p);
    }
    choice.calibration = MergeCalibrations(measured, *self);
    char line[400];
    std::snprintf(line, sizeof(line),
                  "the own collectives of %s where they measured (%zu points), calibration "
                  "%lld (%s) elsewhere%s; the job's collectives took %.2fx the calibration's "
                  "model over their time (%d sizes, %.2f-%.2fx each)",
                  own_runs.c_str(), self->points.size(), static_cast<long long>(measured.id),
                  BackendName(library),
                  level != 1.0 ? (", scaled by " + FormatRatio(level) + " to the job's level")
                                     .c_str()
                               : "",
                  choice.agreement.time_ratio, choice.agreement.points,
                  choice.agreement.min_ratio, choice.agreement.max_ratio);
    choice.source = line;
  } else if (self) {
    choice.calibration = std::move(*self);
    choice.source = "the own collectives of " + own_runs + " (self-calibrated: no " +
                    std::string(BackendName(library)) + " calibrate of " +
                    run.topology.key() + " in the database)";
  } else {
    choice.calibration = std::move(measured);
    choice.source = "calibration " + std::to_string(choice.calibration.id);
    if (calibrate_of_other_library) {
      choice.source += " (Open MPI's collectives standing in for DDP's gloo: the job's own were "
                       "too few to fit and no `autotune calibrate --backend gloo` of " +
                       run.topology.key() + ")";
    }
  }
  *out = std::move(choice);
  return Status::Ok();
}

Status NetworkOfRun(Store& store, const RunInfo& run, NetworkChoice* out) {
  Trace trace;
  if (run.kind == RunKind::kImported) {
    AUTOTUNE_RETURN_IF_ERROR(store.LoadTrace(run.id, &trace));
  } else {
    trace.run = run;  // a calibrate alone: no collectives of its own are read
  }
  std::vector<Trace> others;
  return ChooseNetwork(store, trace, out, &others);
}

Status LoadSimulation(Store& store, int64_t run_id, const TargetShape& target,
                      IfUncalibrated if_uncalibrated, StoredSimulation* out) {
  Trace trace;
  AUTOTUNE_RETURN_IF_ERROR(store.LoadTrace(run_id, &trace));
  const RunInfo& run = trace.run;
  if (!IsMeasuredKind(run.kind)) {
    return Status::InvalidArgument("run " + std::to_string(run_id) + " is a " +
                                   RunKindName(run.kind) +
                                   " run (of run " + std::to_string(run.source_run) +
                                   "); simulate a measured run (recorded or imported)");
  }
  if (trace.steps.empty()) {
    return Status::InvalidArgument("run " + std::to_string(run_id) +
                                   " has no recorded steps (no trace rows to replay)");
  }
  StoredSimulation loaded;
  loaded.run = run;
  NetworkChoice choice;
  std::vector<Trace> others;
  AUTOTUNE_RETURN_IF_ERROR(ChooseNetwork(store, trace, &choice, &others));
  loaded.network = std::move(choice);
  if (!loaded.network.missing.ok()) {
    if (if_uncalibrated == IfUncalibrated::kFail) return loaded.network.missing;
    *out = std::move(loaded);
    return Status::Ok();
  }
  Topology to = run.topology;
  if (target.nodes > 0) to.nodes = target.nodes;
  if (target.ranks_per_node > 0) to.ranks_per_node = target.ranks_per_node;
  std::optional<Calibration> target_network;
  if (!to.SameShape(run.topology)) {
    to.hosts.clear();
    AUTOTUNE_RETURN_IF_ERROR(TargetNetwork(store, run, to, &loaded.network, &target_network));
  }
  loaded.simulation.emplace();
  AUTOTUNE_RETURN_IF_ERROR(Simulation::Build(trace, loaded.network.calibration, to,
                                             target_network ? &*target_network : nullptr,
                                             &*loaded.simulation));
  std::shared_ptr<const EagerLimitEffect> eager;
  std::vector<const Trace*> traces = {&trace};
  for (const Trace& t : others) traces.push_back(&t);
  AUTOTUNE_RETURN_IF_ERROR(LoadEagerLimits(store, run, to, traces, &eager));
  if (eager) {
    loaded.network.source += std::string("; ") + KnobOfField(&Knobs::mpi_tcp_eager_limit).name +
                             " " + eager->Describe();
    loaded.simulation->set_eager_limits(std::move(eager));
  }
  // The other imported runs of the job, at other settings, fit the communication thread's
  // spin share, on the recorded topology.
  if (!others.empty() && loaded.simulation->options().cpu.enabled()) {
    std::vector<RunInfo> other_runs;
    for (const Trace& t : others) other_runs.push_back(t.run);
    if (to.SameShape(run.topology)) {
      loaded.simulation->FitCommSpin(other_runs);
    } else {
      Simulation own;
      AUTOTUNE_RETURN_IF_ERROR(
          Simulation::Build(trace, loaded.network.calibration, std::nullopt, &own));
      if (own.FitCommSpin(other_runs) > 0) loaded.simulation->AdoptCpuFits(own);
    }
  }
  *out = std::move(loaded);
  return Status::Ok();
}

}  // namespace autotune::sim
