#include "executor/record.h"

#include <algorithm>
#include <csignal>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "executor/backend_choice.h"
#include "executor/fusion_engine.h"
#include "executor/launch_status.h"
#include "executor/layout.h"
#include "executor/like_run.h"
#include "executor/mpi_control.h"
#include "executor/mpi_runtime.h"
#include "executor/nccl/nccl_factory.h"
#include "executor/pattern.h"
#include "executor/stall_inspector.h"
#include "executor/step_player.h"
#include "executor/stop_signal.h"
#include "store/store.h"
#include "traces/ddp_buckets.h"
#include "traces/knob_table.h"
#include "traces/score.h"

namespace autotune::executor {

namespace {

// SIGUSR1 under `record --np` is the launcher passing on what the user sent it.
std::string SignalName(int signo) {
  switch (signo) {
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    case SIGUSR1:
      return LauncherSignalName();
    default:
      return "a signal";
  }
}

// Everything one rank holds during a record run. Teardown order: the engine stops, then
// the device player (its events and timer buffer belong to the backend), the memory and
// the backend go away.
struct Session {
  RecordOptions options;
  Workload workload;
  Knobs knobs;
  NodeLayout layout;
  LayoutComms comms;
  std::unique_ptr<Backend> backend;
  std::unique_ptr<ControlChannel> control;
  std::unique_ptr<TensorMemory> memory;
  std::unique_ptr<FusionEngine> engine;
  std::unique_ptr<DeviceStepPlayer> device_player;  // nccl only; null: host PlayStep
  std::unique_ptr<Store> store;                     // rank 0 only
  std::unique_ptr<RankProgress> progress;           // what the stall check watches
  std::unique_ptr<StallInspector> stall;
  std::mutex appending;  // rank 0: held while a step is stored, and by a stall shutdown
  HostCompute compute;                              // host PlayStep's mode and lead
  double scale = 1.0;                               // the workload's scale in all
  int64_t step_bytes = 0;
  int steps = 0;             // measured steps to play (online tuning may change it)
  int steps_per_sample = 0;  // online tuning: the current sample length; 0 = no tuning

  ~Session() {
    stall.reset();  // every rank's inspector stops here, at the same point of the program
    engine.reset();
    device_player.reset();
    memory.reset();
    control.reset();
    backend.reset();
    FreeLayoutComms(&comms);
  }
  bool root() const { return layout.rank == 0; }
};

// With like_run: rank 0 derives the run's workload, every rank takes it (scaled by --scale)
// and its own rank's lead when the run had as many ranks as this world.
Status TakeLikeRun(Session* s) {
  LikeRun like;
  Status st;
  if (s->root()) st = LoadLikeRun(s->store.get(), s->options.like_run, &like);
  AUTOTUNE_RETURN_IF_ERROR(ShareLikeRun(s->options.world, st, &like));
  s->workload = std::move(like.workload);
  if (s->options.scale < 1.0) {
    AUTOTUNE_RETURN_IF_ERROR(ScaleWorkload(s->options.scale, &s->workload));
  }
  s->scale = like.scale * s->options.scale;
  if (static_cast<int>(like.rank_lead_ms.size()) == s->layout.size) {
    s->compute.lead_ms = like.rank_lead_ms[s->layout.rank] * s->options.scale;
  }
  return Status::Ok();
}

Status Setup(Session* s) {
  MPI_Comm world = s->options.world;
  s->knobs = s->options.knobs;
  s->steps = s->options.steps;
  s->steps_per_sample = s->options.steps_per_sample;
  AUTOTUNE_RETURN_IF_ERROR(AgreeOnStatus(world, ResolveRecordInputs(s->options, &s->workload)));
  AUTOTUNE_RETURN_IF_ERROR(DetectLayout(world, &s->layout, &s->comms));
  Status st;
  if (s->root()) st = Store::Open(s->options.db_path, Store::Mode::kReadWrite, &s->store);
  AUTOTUNE_RETURN_IF_ERROR(AgreeOnStatus(world, st));
  s->scale = s->options.scale;
  if (s->options.like_run > 0) AUTOTUNE_RETURN_IF_ERROR(TakeLikeRun(s));

  st = CreateBackend(s->options.backend, world, s->layout, s->comms, s->knobs, &s->backend);
  s->control = CreateMpiControlChannel(world);
  if (st.ok()) st = TensorMemory::Create(s->backend.get(), s->workload, s->layout.size, &s->memory);
  if (st.ok()) st = FillInputs(s->backend.get(), s->workload, s->layout.rank, s->memory.get());
#ifdef AUTOTUNE_HAVE_NCCL
  if (st.ok() && s->backend->kind() == BackendKind::kNccl) {
    st = MakeDeviceStepPlayer(s->backend.get(), &s->workload, &s->device_player);
  }
#endif
  if (st.ok()) {
    st = FusionEngine::Create(s->backend.get(), &s->layout, &s->workload, s->memory.get(),
                              s->control.get(), s->knobs, &s->engine, s->options.framework);
  }
  if (st.ok()) {
    s->compute.mode = s->options.compute.value_or(DefaultComputeMode(s->backend->kind()));
  }
  for (const TensorSpec& t : s->workload.tensors) s->step_bytes += FusionBytes(t, s->layout.size);
  return AgreeOnStatus(world, st);
}

// Rank 0 runs the tuner on a finished sample and stores it; every rank then takes the
// broadcast decision and, when the knobs changed, rebuilds its fusion engine with them (the
// engine reads its knobs once; between steps no step is in progress, so it can go).
Status EndSample(Session* s, int64_t run_id, TuningSample& sample, bool* done) {
  MPI_Comm world = s->options.world;
  TuningDecision decision;
  decision.next = s->knobs;
  Status st;
  if (s->root()) {
    sample.run_id = run_id;
    st = s->options.tuning ? s->options.tuning(sample, &decision)
                           : Status::InvalidArgument("online tuning without a tuner");
    if (st.ok() && !SameExceptRuntimeKnobs(s->knobs, decision.next)) {
      st = Status::InvalidArgument("online tuning may change runtime knobs only");
    }
    if (st.ok()) st = decision.next.Validate();
    if (st.ok() && decision.store) {
      std::vector<Sample> rows(1);
      Sample& row = rows[0];
      row.fidelity = Fidelity::kMeasured;
      row.run_id = run_id;
      row.trace_run_id = run_id;
      row.workload = s->workload.name;
      row.topology = s->layout.ToTopology();
      row.knobs = sample.knobs;
      row.score_bytes_per_s = sample.score_bytes_per_s;
      row.step_ms = sample.step_ms_median;
      st = s->store->AddSamples(&rows);
    }
  }
  AUTOTUNE_RETURN_IF_ERROR(
      AgreeOnStatus(world, st.WithPrefix("sample " + std::to_string(sample.index))));
  // The runtime knobs (knob table order), then the loop's own control values.
  std::vector<double> wire = EncodeRuntimeKnobs(decision.next);
  const size_t knob_count = wire.size();
  wire.push_back(decision.done ? 1.0 : 0.0);
  wire.push_back(static_cast<double>(decision.steps_per_sample));
  wire.push_back(static_cast<double>(decision.steps));
  MPI_Bcast(wire.data(), static_cast<int>(wire.size()), MPI_DOUBLE, 0, world);
  const Knobs next = DecodeRuntimeKnobs(std::span(wire).first(knob_count), s->knobs);
  *done = wire[knob_count] != 0.0;
  if (wire[knob_count + 1] > 0) s->steps_per_sample = static_cast<int>(wire[knob_count + 1]);
  if (wire[knob_count + 2] > 0) {
    s->steps = std::max(static_cast<int>(wire[knob_count + 2]), sample.first_step + sample.steps);
  }
  sample = TuningSample();
  if (next == s->knobs) return Status::Ok();
  s->engine.reset();
  s->knobs = next;
  st = FusionEngine::Create(s->backend.get(), &s->layout, &s->workload, s->memory.get(),
                            s->control.get(), s->knobs, &s->engine, s->options.framework);
  if (st.ok()) s->engine->set_progress(s->progress.get());
  return AgreeOnStatus(world, st.WithPrefix("new knobs"));
}

Status CreateRun(Session* s, RunInfo* run) {
  run->kind = RunKind::kMeasured;
  run->command = s->options.command;
  run->workload = s->workload;
  run->scale = s->scale;
  run->knobs = s->knobs;
  run->topology = s->layout.ToTopology();
  run->backend = s->backend->kind();
  run->hardware = s->backend->hardware() + "; compute " + ComputeModeName(s->compute.mode);
  run->framework = s->options.framework;
  // Spinning compute shares the host's cores with the communication threads (the simulator's
  // CpuShare); sleeping compute (and the GPU's) takes none.
  if (s->compute.mode == ComputeMode::kSpin && run->backend == BackendKind::kMpi) {
    run->host.cores = static_cast<int>(std::thread::hardware_concurrency());
  }
  run->host.nodes_per_host = s->layout.nodes_per_host;
  run->steps_planned = s->options.steps;
  run->warmup_steps = s->options.warmup_steps;
  Status st;
  if (s->root()) st = s->store->CreateRun(run);
  AUTOTUNE_RETURN_IF_ERROR(AgreeOnStatus(s->options.world, st));
  MPI_Bcast(&run->id, 1, MPI_INT64_T, 0, s->options.world);
  return Status::Ok();
}

// Every rank: the stall check from here to the end of the run.
Status StartStallCheck(Session* s, const RunInfo& run) {
  s->progress = std::make_unique<RankProgress>(static_cast<int>(s->workload.tensors.size()));
  s->engine->set_progress(s->progress.get());
  StallInspectorOptions o;
  o.settings = s->options.stall;
  for (const TensorSpec& t : s->workload.tensors) o.tensor_names.push_back(t.name);
  o.warmup_steps = s->options.warmup_steps;
  if (s->root()) {
    o.shutdown = [db = s->options.db_path, id = run.id, planned = s->options.steps,
                  shutdown_s = s->options.stall.shutdown_s,
                  appending = &s->appending](const std::string& line) {
      // The main thread may be stuck anywhere, even about to store a step: the run is ended
      // through a connection of its own once no step is being stored, and none is after
      // (the lock is never released: the job ends).
      appending->lock();
      EndStalledJob(line, EndRunElsewhere(db, id, planned, "stall: " + line), shutdown_s);
    };
    NoteLaunchStatus("run", std::to_string(run.id) + " " + std::to_string(s->options.steps));
  }
  const Status st = StallInspector::Start(s->options.world, std::move(o), s->progress.get(),
                                          &s->stall);
  return AgreeOnStatus(s->options.world, st);
}

// Gathers the step's tensor events and times to rank 0 and builds the stored step there.
void CollectStep(Session* s, int step, PlayedStep& played, StepTrace* out) {
  MPI_Comm world = s->options.world;
  const int n = static_cast<int>(s->workload.tensors.size());
  std::vector<double> mine(2 * n);
  for (int t = 0; t < n; ++t) {
    mine[2 * t] = played.record.tensors[t].ready_us;
    mine[2 * t + 1] = played.record.tensors[t].done_us;
  }
  std::vector<double> all(s->root() ? 2 * n * s->layout.size : 0);
  MPI_Gather(mine.data(), 2 * n, MPI_DOUBLE, all.data(), 2 * n, MPI_DOUBLE, 0, world);
  double step_ms = 0.0;
  MPI_Reduce(&played.step_ms, &step_ms, 1, MPI_DOUBLE, MPI_MAX, 0, world);
  if (!s->root()) return;
  out->step = step;
  out->step_ms = step_ms;
  out->backward_start_us = played.backward_start_us;
  out->bytes = s->step_bytes;
  out->score_bytes_per_s =
      ScoreBytesPerSecond(static_cast<double>(s->step_bytes), step_ms / 1000.0);
  out->tensors.clear();
  out->tensors.reserve(static_cast<size_t>(n) * s->layout.size);
  for (int r = 0; r < s->layout.size; ++r) {
    for (int t = 0; t < n; ++t) {
      const size_t i = 2 * (static_cast<size_t>(r) * n + t);
      out->tensors.push_back(TensorEvent{r, t, all[i], all[i + 1]});
    }
  }
  out->cycles = std::move(played.record.cycles);
  out->collectives = std::move(played.record.collectives);
}

// Any rank's stop signal stops every rank after the same step.
int AgreeOnStop(Session* s) {
  int mine = s->options.stop_on_signal ? StopSignal() : 0, any = 0;
  MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, s->options.world);
  return any;
}

// end_reason: why an incomplete run ended ("" when complete).
Status FinishRun(Session* s, bool complete, const std::string& end_reason, RunInfo* run) {
  Status st;
  if (s->root()) {  // the summary first: FinishRun fills it even when the disk is full
    st = s->store->FinishRun(run->id, complete, run);
    if (!end_reason.empty()) {
      const Status reason = s->store->SetEndReason(run->id, end_reason);
      if (st.ok()) st = reason;
    }
  }
  return AgreeOnStatus(s->options.world, st);
}

Status PlaySteps(Session* s, RecordResult* result) {
  Backend* backend = s->backend.get();
  bool tuning = s->steps_per_sample > 0;
  TuningSample sample;
  std::vector<double> sample_ms;
  for (int i = 0; i < s->options.warmup_steps + s->steps; ++i) {
    const int step = i - s->options.warmup_steps;  // < 0 during warm-up
    const bool verify =
        step >= 0 && (s->options.verify_every_step || step == 0 || step == s->steps - 1);
    Status st;
    if (verify) st = PoisonOutputs(backend, s->memory.get());
    PlayedStep played;
    if (st.ok()) {
      st = s->device_player ? s->device_player->Play(s->engine.get(), &played)
                            : PlayStep(s->workload, s->compute, backend, s->engine.get(), &played);
    }
    if (st.ok() && verify) {
      st = VerifyOutputs(backend, s->workload, s->layout.rank, s->layout.size, s->memory.get());
    }
    AUTOTUNE_RETURN_IF_ERROR(
        AgreeOnStatus(s->options.world, st.WithPrefix("step " + std::to_string(i))));
    if (step >= 0) {
      StepTrace trace;
      CollectStep(s, step, played, &trace);
      Status append;
      if (s->root()) {
        std::lock_guard<std::mutex> lock(s->appending);
        append = s->store->AppendStep(result->run.id, trace);
      }
      AUTOTUNE_RETURN_IF_ERROR(AgreeOnStatus(
          s->options.world, append.WithPrefix("step " + std::to_string(step) + " not stored")));
      ++result->steps_run;
      if (s->root() && s->options.on_step) {
        s->options.on_step(result->steps_run, s->steps, trace.step_ms);
      }
      if (verify) ++result->steps_verified;
      if (tuning) {
        if (sample.steps == 0) {
          sample.first_step = step;
          sample.knobs = s->knobs;
          sample_ms.clear();
        }
        ++sample.steps;
        sample.bytes += static_cast<double>(trace.bytes);
        sample.seconds += trace.step_ms / 1000.0;
        sample_ms.push_back(trace.step_ms);
        if (sample.steps == s->steps_per_sample) {
          sample.index = result->samples++;
          sample.score_bytes_per_s = ScoreBytesPerSecond(sample.bytes, sample.seconds);
          sample.step_ms_median = Median(sample_ms);
          sample.step_ms = sample_ms;
          bool done = false;
          AUTOTUNE_RETURN_IF_ERROR(EndSample(s, result->run.id, sample, &done));
          tuning = !done;
        }
      }
    }
    result->stop_signal = AgreeOnStop(s);
    if (result->stop_signal != 0) return Status::Ok();
  }
  return Status::Ok();
}

}  // namespace

std::string KeptText(int64_t run_id, int kept, int planned) {
  return "run " + std::to_string(run_id) + " kept " + std::to_string(kept) + " of " +
         std::to_string(planned) + " steps, marked incomplete";
}

std::string EndRunElsewhere(const std::string& db_path, int64_t run_id, int planned,
                            const std::string& reason) {
  std::unique_ptr<Store> store;
  RunInfo run;
  Status st = Store::Open(db_path, Store::Mode::kReadWrite, &store);
  if (st.ok()) st = store->GetRun(run_id, &run);
  if (st.ok() && run.complete) return "run " + std::to_string(run_id) + " is complete";
  if (st.ok()) st = store->SetEndReason(run_id, reason);
  if (st.ok()) st = store->FinishRun(run_id, false, &run);
  if (!st.ok()) return "run " + std::to_string(run_id) + " could not be marked: " + st.message();
  return KeptText(run_id, run.steps_recorded, planned);
}

Status ResolveRecordInputs(const RecordOptions& options, Workload* workload) {
  if (options.steps < 1) {
    return Status::InvalidArgument("--steps " + std::to_string(options.steps) +
                                   ": must be at least 1");
  }
  if (options.warmup_steps < 0) {
    return Status::InvalidArgument("--warmup-steps " + std::to_string(options.warmup_steps) +
                                   ": must be at least 0");
  }
  if (!(options.scale > 0.0 && options.scale <= 1.0)) {
    return Status::InvalidArgument("--scale " + std::to_string(options.scale) +
                                   ": must be in (0, 1]");
  }
  if (options.db_path.empty()) return Status::InvalidArgument("--db: empty path");
  if (options.steps_per_sample < 0) {
    return Status::InvalidArgument("steps per sample " + std::to_string(options.steps_per_sample) +
                                   ": must be >= 0");
  }
  if (options.like_run < 0) {
    return Status::InvalidArgument("--like-run " + std::to_string(options.like_run) +
                                   ": must be a run id >= 1");
  }
  AUTOTUNE_RETURN_IF_ERROR(options.knobs.Validate());
  AUTOTUNE_RETURN_IF_ERROR(ValidateStallSettings(options.stall));
  AUTOTUNE_RETURN_IF_ERROR(CheckBackendUsable(options.backend));
  if (options.compute == ComputeMode::kSpin && options.backend == BackendKind::kNccl) {
    return Status::InvalidArgument(
        "--compute spin: the nccl backend computes on the GPU; spin is for mpi");
  }
  if (options.like_run > 0) return Status::Ok();  // derived from the database in Setup
  AUTOTUNE_RETURN_IF_ERROR(ResolveWorkload(options.workload, workload));
  if (options.scale < 1.0) AUTOTUNE_RETURN_IF_ERROR(ScaleWorkload(options.scale, workload));
  if (options.framework == Framework::kDdp) AUTOTUNE_RETURN_IF_ERROR(CheckDdpWorkload(*workload));
  return Status::Ok();
}

Status RunRecord(const RecordOptions& options, RecordResult* result) {
  *result = RecordResult();
  AUTOTUNE_RETURN_IF_ERROR(CheckMpiReady());
  if (options.stop_on_signal) InstallStopSignalHandlers();
  Session s;
  s.options = options;
  AUTOTUNE_RETURN_IF_ERROR(Setup(&s));
  RunInfo& run = result->run;
  AUTOTUNE_RETURN_IF_ERROR(CreateRun(&s, &run));
  Status played = StartStallCheck(&s, run);
  if (played.ok()) played = PlaySteps(&s, result);
  if (s.stall) s.stall->Stop();
  const bool complete = played.ok() && result->stop_signal == 0;
  const std::string end_reason =
      !played.ok()               ? played.message()
      : result->stop_signal != 0 ? std::string("stopped by ") + SignalName(result->stop_signal)
                                 : std::string();
  // The run was created incomplete, so it stays so when finishing it fails as well (a full
  // disk that failed a step fails this too): the step's error is the one to tell.
  const Status finished = FinishRun(&s, complete, end_reason, &run);
  if (!played.ok()) {
    return played.WithPrefix(KeptText(run.id, result->steps_run, s.steps));
  }
  AUTOTUNE_RETURN_IF_ERROR(finished);
  if (result->stop_signal != 0) {
    return Status::Aborted(std::string("stopped by ") + SignalName(result->stop_signal) +
                           " after " + std::to_string(result->steps_run) + " of " +
                           std::to_string(options.steps) + " steps; run " + std::to_string(run.id) +
                           " kept as incomplete");
  }
  return Status::Ok();
}

}  // namespace autotune::executor
