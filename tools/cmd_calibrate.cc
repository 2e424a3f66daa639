// `autotune calibrate`: measures collective time against message size on every rank of an
// MPI job (executor/calibrate.h) and stores it for the simulator. `--np N` re-launches.
#include <mpi.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "executor/backend_choice.h"
#include "executor/calibrate.h"
#include "executor/knob_environment.h"
#include "executor/mpi_runtime.h"
#include "store/store.h"
#include "tools/command.h"
#include "tools/flag_checks.h"
#include "tools/gloo_calibrate.h"
#include "tools/help_defaults.h"
#include "tools/launch.h"
#include "tools/progress.h"
#include "tools/stall_flags.h"
#include "tools/torch_python.h"
#include "traces/knob_table.h"

namespace autotune::cli {
namespace {

struct CalibrateFlags {
  executor::CalibrateOptions calibrate;
  std::string backend = BackendName(executor::CalibrateOptions().backend);  // --backend
  StallFlags stall;
  bool json = false;
  bool quiet = false;
  int np = 0;
};

nlohmann::json PointsToJson(const Calibration& c) {
  nlohmann::json points = nlohmann::json::array();
  for (const CalibrationPoint& p : c.points) {
    points.push_back({{"op", OpName(p.op)},
                      {"scope", ScopeName(p.scope)},
                      {"ranks", p.ranks},
                      {"bytes", p.bytes},
                      {"median_us", p.median_us},
                      {"min_us", p.min_us},
                      {"max_us", p.max_us},
                      {"mean_us", p.mean_us}});
  }
  return points;
}

// The median time of one (op, scope) at the largest size, for the summary line.
const CalibrationPoint* Largest(const Calibration& c, Op op, Scope scope) {
  const CalibrationPoint* best = nullptr;
  for (const CalibrationPoint& p : c.points) {
    if (p.op == op && p.scope == scope && (!best || p.bytes > best->bytes)) best = &p;
  }
  return best;
}

bool IsGloo(const CalibrateFlags& flags) { return flags.backend == BackendName(BackendKind::kGloo); }

// --backend: mpi, nccl (the executor's data planes) or gloo (torch's, tools/gloo_calibrate.h).
Status ParseCalibrateBackend(CalibrateFlags& flags) {
  if (IsGloo(flags) || executor::ParseBackendFlag(flags.backend, &flags.calibrate.backend).ok()) {
    return Status::Ok();
  }
  return Status::InvalidArgument("--backend " + (flags.backend.empty() ? "\"\"" : flags.backend) +
                                 ": unknown backend (mpi | nccl | gloo)");
}

// The gloo calibration's options: the sizes, repetitions and database of the flags; gloo's
// timeout the stall shutdown when one is set, else GlooCalibrateOptions' default.
GlooCalibrateOptions GlooOptions(const CalibrateFlags& flags) {
  GlooCalibrateOptions g;
  g.min_bytes = flags.calibrate.min_bytes;
  g.max_bytes = flags.calibrate.max_bytes;
  g.repetitions = flags.calibrate.repetitions;
  g.db_path = flags.calibrate.db_path;
  if (flags.calibrate.stall.shutdown_s > 0.0) g.timeout_s = flags.calibrate.stall.shutdown_s;
  return g;
}

const KnobSpec& EagerLimitKnob() { return KnobOfField(&Knobs::mpi_tcp_eager_limit); }

// --mpi-tcp-eager-limit is Open MPI's: refused with the other backends.
Status CheckEagerLimit(const CalibrateFlags& flags) {
  if (flags.calibrate.knobs.mpi_tcp_eager_limit == 0 ||
      (!IsGloo(flags) && flags.calibrate.backend == BackendKind::kMpi)) {
    return Status::Ok();
  }
  return Status::InvalidArgument(std::string(EagerLimitKnob().flag) +
                                 ": an Open MPI knob; --backend " + flags.backend +
                                 " does not use it");
}

// The limit's environment, as `record` sets it before MPI_Init: the calibration is labelled
// with what Open MPI read (0 unsets a limit the shell exported).
Status ApplyEagerLimit(const CalibrateFlags& flags) {
  if (IsGloo(flags)) return Status::Ok();
  return executor::ApplyEnvironment(EagerLimitKnob().environment(flags.calibrate.knobs));
}

// Everything that can be checked without MPI: sizes, repetitions, backend (for nccl: a
// CUDA device here), database.
Status ValidateBeforeLaunch(CalibrateFlags& flags) {
  AUTOTUNE_RETURN_IF_ERROR(flags.stall.Resolve(nullptr, &flags.calibrate.stall));
  AUTOTUNE_RETURN_IF_ERROR(ParseCalibrateBackend(flags));
  AUTOTUNE_RETURN_IF_ERROR(CheckEagerLimit(flags));
  AUTOTUNE_RETURN_IF_ERROR(executor::ValidateCalibrateOptions(flags.calibrate));
  if (IsGloo(flags)) AUTOTUNE_RETURN_IF_ERROR(PythonPathWithSite().status());
  std::unique_ptr<Store> store;  // refuses foreign, newer or unwritable databases untouched
  return Store::Open(flags.calibrate.db_path, Store::Mode::kReadWrite, &store);
}

int RunCalibrateCommand(CalibrateFlags& flags) {
  if (!LaunchedByMpi()) {
    if (flags.np <= 0) return Fail(MpiLaunchHint("calibrate"));
    // Bad input fails here, once, before any rank starts (mpirun would add its own lines).
    const Status valid = ValidateBeforeLaunch(flags);
    if (!valid.ok()) return Fail(valid);
    return RelaunchUnderMpirun(flags.np, {"calibrate", flags.calibrate.db_path});
  }
  {
    Status env = ParseCalibrateBackend(flags);
    if (env.ok()) env = CheckEagerLimit(flags);
    if (env.ok()) env = ApplyEagerLimit(flags);
    if (!env.ok()) return Fail(env);
  }
  executor::MpiSession mpi(nullptr, nullptr);
  if (!mpi.status().ok()) return Fail(mpi.status());
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  Calibration c;
  flags.calibrate.world = MPI_COMM_WORLD;
  Status st = flags.stall.Resolve(nullptr, &flags.calibrate.stall);
  if (st.ok()) st = ParseCalibrateBackend(flags);
  ProgressLine progress(flags.quiet);
  flags.calibrate.on_size = [&progress](int done, int total, int64_t bytes) {
    progress.Update("calibrate: size " + std::to_string(done) + "/" + std::to_string(total) +
                        " (" + std::to_string(bytes) + " bytes per rank) measured",
                    done == total);
  };
  if (st.ok() && IsGloo(flags)) {
    progress.Update("calibrate: gloo's allreduce at " +
                        std::to_string(executor::CalibrationSizes(flags.calibrate.min_bytes,
                                                                  flags.calibrate.max_bytes)
                                           .size()) +
                        " sizes (torch's helper on every rank)",
                    true);
    st = RunGlooCalibrate(GlooOptions(flags), &c);
  } else if (st.ok()) {
    st = executor::RunCalibrate(flags.calibrate, &c);
  }
  progress.Done();
  if (rank != 0) return st.ok() ? 0 : 1;
  if (!st.ok()) return Fail(st);
  if (flags.json) {
    nlohmann::json j = {{"calibration", c.id},
                        {"topology", c.topology.key()},
                        {"backend", BackendName(c.backend)},
                        {EagerLimitKnob().name, c.mpi_tcp_eager_limit},
                        {"points", PointsToJson(c)}};
    std::cout << j.dump() << std::endl;
    return 0;
  }
  std::printf("calibration %lld: %s %s%s, %zu points, %lld..%lld bytes, %d repetitions each\n",
              static_cast<long long>(c.id), c.topology.key().c_str(), BackendName(c.backend),
              c.mpi_tcp_eager_limit > 0
                  ? (std::string(" at ") + EagerLimitKnob().name + " " +
                     std::to_string(c.mpi_tcp_eager_limit))
                        .c_str()
                  : "",
              c.points.size(), static_cast<long long>(flags.calibrate.min_bytes),
              static_cast<long long>(flags.calibrate.max_bytes), flags.calibrate.repetitions);
  for (Scope scope : {Scope::kWorld, Scope::kIntra, Scope::kCross, Scope::kHierarchical}) {
    for (Op op : {Op::kAllreduce, Op::kAllgather}) {
      const CalibrationPoint* p = Largest(c, op, scope);
      if (p == nullptr) continue;
      std::printf("  %-12s %-9s %2d ranks  %10lld bytes  %10.1f us median  %8.3f GB/s algbw\n",
                  ScopeName(scope), OpName(op), p->ranks, static_cast<long long>(p->bytes),
                  p->median_us, p->median_us > 0 ? p->bytes / p->median_us / 1e3 : 0.0);
    }
  }
  return 0;
}

}  // namespace

void AddCalibrateCommand(CLI::App& root, Action* action) {
  auto flags = std::make_shared<CalibrateFlags>();
  executor::CalibrateOptions& o = flags->calibrate;
  CLI::App* app = root.add_subcommand(
      "calibrate",
      "Measure allreduce/allgather time against message size (log-spaced) on the world, "
      "intra-node, cross-node and hierarchical communicators, and the fusion copy, and store "
      "it for the simulator (MPI on host memory, or NCCL on GPUs). Runs under mpirun, or give "
      "--np N");
  PrintDefaultsInDescriptions(app);
  app->add_option("--min-bytes", o.min_bytes, "Smallest message per rank in bytes, >= 4.")
      ->capture_default_str();
  app->add_option("--max-bytes", o.max_bytes,
                  "Largest message per rank in bytes (sizes double from --min-bytes up to it).")
      ->capture_default_str();
  app->add_option("--repetitions", o.repetitions,
                  "Timed runs per size and collective (median, min, max kept), >= 1.")
      ->capture_default_str();
  app->add_option("--backend", flags->backend,
                  "Collective library: mpi (Open MPI, host memory), nccl (CUDA device memory) or "
                  "gloo (torch.distributed's, as DDP on CPUs runs it: the world allreduce only, "
                  "timed by python/autotune_torch/gloo_calibrate.py on every rank; MASTER_ADDR "
                  "and MASTER_PORT as for the DDP job, else 127.0.0.1 on one node and a free "
                  "port).")
      ->capture_default_str();
  const KnobSpec& eager = EagerLimitKnob();
  app->add_option(eager.flag, o.knobs.mpi_tcp_eager_limit,
                  std::string(eager.help) +
                      " The calibration is stored at this limit: `simulate` and `search` "
                      "predict a setting at a limit from a calibrate at it (with --backend mpi "
                      "only; the environment set, or unset at 0, before MPI_Init). Their means "
                      "are compared: give such a pair --repetitions 30.")
      ->check(CLI::Range(static_cast<int>(eager.min), static_cast<int>(eager.max)))
      ->capture_default_str();
  flags->stall.Add(app);
  app->add_option("--db", o.db_path, "SQLite database file, created if missing.")
      ->capture_default_str();
  app->add_flag("--json", flags->json,
                "Print one JSON object on stdout (calibration, topology, backend, points). "
                "Default off");
  app->add_flag("--quiet", flags->quiet,
                "No progress on stderr (sizes measured; redrawn in place on a terminal, else a "
                "line every few seconds). Default off");
  app->add_option("--np", flags->np,
                  "Re-launch this command under mpirun with N local ranks (extra mpirun "
                  "arguments from $AUTOTUNE_MPIRUN_ARGS). Default: run in the current MPI job")
      ->check(AtLeast(1));
  app->callback([flags, action] { *action = [flags] { return RunCalibrateCommand(*flags); }; });
}

}  // namespace autotune::cli
