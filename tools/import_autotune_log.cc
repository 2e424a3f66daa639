#include "tools/import_autotune_log.h"

#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "formats/horovod_autotune_log.h"
#include "formats/import_options.h"
#include "store/store.h"
#include "tools/command.h"
#include "tools/launch.h"
#include "traces/knob_table.h"

namespace autotune::cli {
namespace {

// The median bytes one step of the run reduces or gathers (each stored step's score x its time); 0
// when the run has no steps.
Status BytesPerStep(Store& store, int64_t run_id, double* bytes) {
  std::vector<double> step_ms, score;
  AUTOTUNE_RETURN_IF_ERROR(store.GetStepSeries(run_id, &step_ms, &score));
  std::vector<double> per_step;
  for (size_t i = 0; i < step_ms.size() && i < score.size(); ++i)
    per_step.push_back(score[i] * step_ms[i] / 1e3);
  *bytes = Median(std::move(per_step));
  return Status::Ok();
}

Status ReadJobRun(const AutotuneLogImport& in, RunInfo* run, double* bytes_per_step) {
  std::unique_ptr<Store> store;
  AUTOTUNE_RETURN_IF_ERROR(Store::Open(in.db, Store::Mode::kReadOnly, &store));
  AUTOTUNE_RETURN_IF_ERROR(store->GetRun(in.job_run, run));
  const std::string which = "--run " + std::to_string(in.job_run) + " is a";
  if (!IsMeasuredKind(run->kind)) {
    return Status::InvalidArgument(which + " " + RunKindName(run->kind) +
                                   " run; give the job's imported (or recorded) run");
  }
  if (run->framework != Framework::kHorovod) {
    return Status::InvalidArgument(which + " " + FrameworkName(run->framework) +
                                   " run; a Horovod autotune log belongs to a Horovod job");
  }
  return BytesPerStep(*store, run->id, bytes_per_step);
}

nlohmann::json EntryJson(const HorovodLogEntry& e) {
  return {{"line", e.line},
          {"knobs", KnobsToJson(e.knobs)},
          {"score_bytes_per_s", e.score_bytes_per_s}};
}

}  // namespace

int ImportHorovodAutotuneLog(const AutotuneLogImport& in) {
  RunInfo job;
  double bytes_per_step = 0.0;
  Status s = ReadJobRun(in, &job, &bytes_per_step);
  if (!s.ok()) return Fail("import: " + s.message());
  HorovodLog log;
  s = ReadHorovodAutotuneLog(in.log, job.knobs, &log);
  if (!s.ok()) return Fail(s);
  if (log.samples.empty()) {
    return Fail(in.log +
                ": every row has torus_allreduce 1, a setting autotune does not have: nothing to "
                "import");
  }
  // The same log for the same job is one measurement, however often it is imported.
  std::string content;
  s = ReadInputFile(in.log, "Horovod autotune log", int64_t{64} << 20, &content);
  if (!s.ok()) return Fail(s);
  ImportOptions hashed;
  hashed.topology = job.topology;
  hashed.workload_name =
      job.workload.name + "\nhorovod autotune log of run " + std::to_string(job.id);
  hashed.knobs = job.knobs;

  RunInfo holder = job;
  holder.id = 0;
  holder.kind = RunKind::kImported;
  holder.command = JoinCommandLine(SelfArgv());
  holder.complete = false;
  holder.steps_planned = 0;
  holder.warmup_steps = 0;
  holder.steps_recorded = 0;
  holder.score_bytes_per_s = holder.step_ms_median = holder.step_ms_p95 = 0.0;
  holder.source_run = 0;
  holder.untraced_step_ms = 0.0;
  holder.source_hash = ImportSourceHash(content, hashed);
  std::vector<Sample> samples;
  for (const HorovodLogEntry& e : log.samples) {
    Sample sample;
    sample.fidelity = Fidelity::kMeasured;
    sample.trace_run_id = job.id;
    sample.workload = job.workload.name;
    sample.topology = job.topology;
    sample.knobs = e.knobs;
    sample.score_bytes_per_s = e.score_bytes_per_s;
    // The step time this score means for the job's bytes per step (Horovod logs no times).
    sample.step_ms = bytes_per_step > 0.0 ? 1e3 * bytes_per_step / e.score_bytes_per_s : 0.0;
    samples.push_back(std::move(sample));
  }

  std::unique_ptr<Store> store;
  s = Store::Open(in.db, Store::Mode::kReadWrite, &store);
  if (!s.ok()) return Fail(s);
  bool reused = false;
  {
    std::unique_ptr<Store::WriteBatch> batch = store->BeginWrite();
    s = batch->status();
    RunInfo earlier;
    if (s.ok() && !in.again) {
      const Status found = store->FindRunBySourceHash(holder.source_hash, &earlier);
      if (found.ok()) {
        reused = true;
        holder = earlier;
      } else if (found.code() != Status::Code::kNotFound) {
        s = found;
      }
    }
    if (s.ok() && !reused) s = store->CreateRun(&holder);
    if (s.ok() && !reused) {
      s = store->SetEndReason(holder.id, "holds the " + std::to_string(samples.size()) +
                                             " measured samples of Horovod's autotune log " +
                                             EscapeForTerminal(in.log) + " for run " +
                                             std::to_string(job.id) +
                                             "'s job; no steps (import --horovod-autotune-log)");
    }
    for (Sample& sample : samples) sample.run_id = holder.id;
    if (s.ok() && !reused) s = store->AddSamples(&samples);
    if (s.ok() && !reused) s = batch->Commit();
  }
  if (!s.ok()) return Fail(s);

  const int torus = static_cast<int>(log.torus_lines.size());
  if (in.json) {
    nlohmann::json j = {{"run", holder.id},
                        {"job_run", job.id},
                        {"workload", job.workload.name},
                        {"topology", job.topology.key()},
                        {"backend", BackendName(job.backend)},
                        {"samples", samples.size()},
                        {"torus_rows_left_out", torus},
                        {"best", log.best ? EntryJson(*log.best) : nlohmann::json()},
                        {"reused", reused},
                        {"db", in.db}};
    std::cout << j.dump() << "\n";
    return 0;
  }
  if (reused) {
    std::printf(
        "%s was imported before for run %lld, as run %lld of %s: reusing it (--again imports it "
        "once more)\n",
        in.log.c_str(), static_cast<long long>(job.id), static_cast<long long>(holder.id),
        in.db.c_str());
    return 0;
  }
  std::printf(
      "imported %zu rows of Horovod's autotune log %s as measured samples of run %lld's job (%s, "
      "%s, %s), held by run %lld of %s (no steps)\n",
      samples.size(), in.log.c_str(), static_cast<long long>(job.id), job.workload.name.c_str(),
      job.topology.key().c_str(), BackendName(job.backend), static_cast<long long>(holder.id),
      in.db.c_str());
  if (log.best) {
    std::printf(
        "  Horovod's tuning ended (line %d, its best row, is not a sample): best %s at %.6g "
        "bytes/us\n",
        log.best->line, KnobsShort(log.best->knobs, Framework::kHorovod).c_str(),
        log.best->score_bytes_per_s / 1e6);
  } else {
    std::printf("  Horovod's tuning had not ended (no best row)\n");
  }
  std::printf("  `autotune search --run %lld` blends them with the job's other measurements\n",
              static_cast<long long>(job.id));
  if (torus > 0) {
    std::cerr << "autotune: note: " << EscapeForTerminal(in.log) << ": " << torus
              << " row(s) with torus_allreduce 1 left out (autotune has no torus allreduce), "
                 "the first on line "
              << log.torus_lines.front() << "\n";
  }
  return 0;
}

}  // namespace autotune::cli
