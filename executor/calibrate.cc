#include "executor/calibrate.h"

#include <algorithm>
#include <functional>
#include <memory>

#include "executor/backend.h"
#include "executor/backend_choice.h"
#include "executor/fused_executor.h"
#include "executor/hierarchical.h"
#include "executor/layout.h"
#include "executor/mpi_runtime.h"
#include "executor/nccl/nccl_factory.h"
#include "executor/stall_inspector.h"
#include "store/store.h"

namespace autotune::executor {

std::vector<int64_t> CalibrationSizes(int64_t min_bytes, int64_t max_bytes) {
  std::vector<int64_t> sizes;
  auto add = [&](int64_t b) {
    b = std::max<int64_t>(4, b / 4 * 4);
    if (sizes.empty() || sizes.back() != b) sizes.push_back(b);
  };
  for (int64_t b = min_bytes; b < max_bytes; b *= 2) add(b);
  add(max_bytes);
  return sizes;
}

Status ValidateCalibrateOptions(const CalibrateOptions& o) {
  if (o.min_bytes < 4) {
    return Status::InvalidArgument("--min-bytes " + std::to_string(o.min_bytes) +
                                   ": must be at least 4");
  }
  if (o.max_bytes < o.min_bytes) {
    return Status::InvalidArgument("--max-bytes " + std::to_string(o.max_bytes) +
                                   ": must be at least --min-bytes " + std::to_string(o.min_bytes));
  }
  AUTOTUNE_RETURN_IF_ERROR(ValidateStallSettings(o.stall));
  if (o.repetitions < 1) {
    return Status::InvalidArgument("--repetitions " + std::to_string(o.repetitions) +
                                   ": must be at least 1");
  }
  if (o.db_path.empty()) return Status::InvalidArgument("--db: empty path");
  AUTOTUNE_RETURN_IF_ERROR(o.knobs.Validate());
  return CheckBackendUsable(o.backend);
}

namespace {

struct Harness {
  MPI_Comm world;
  int repetitions;
  bool device_copy;  // copy scope from MeasureDeviceCopyCurve after the sizes, not per size
  NodeLayout layout;
  std::unique_ptr<Backend> backend;
  std::unique_ptr<Buffer> a, b;  // work buffers of the largest need
  std::vector<CalibrationPoint> points;
  RankProgress progress{0};  // for the stall check: a size begun, a timed run done

  // Times op (run on every rank; ranks outside the measured communicator pass a no-op).
  Status Time(Op op, Scope scope, int ranks, int64_t bytes, const std::function<Status()>& run) {
    std::vector<double> times;
    for (int i = -1; i < repetitions; ++i) {
      AUTOTUNE_RETURN_IF_ERROR(backend->Barrier(Level::kWorld));
      const SteadyClock::time_point t0 = SteadyClock::now();
      Status st = run();
      if (st.ok()) st = backend->Synchronize();
      double us = MicrosSince(t0), slowest = 0.0;
      AUTOTUNE_RETURN_IF_ERROR(AgreeOnStatus(world, st));
      MPI_Allreduce(&us, &slowest, 1, MPI_DOUBLE, MPI_MAX, world);
      if (i >= 0) times.push_back(slowest);
      progress.Advanced();
    }
    CalibrationPoint p;
    p.op = op;
    p.scope = scope;
    p.ranks = ranks;
    p.bytes = bytes;
    p.repetitions = repetitions;
    p.median_us = Median(times);
    p.min_us = *std::min_element(times.begin(), times.end());
    p.max_us = *std::max_element(times.begin(), times.end());
    p.mean_us = Mean(times);
    points.push_back(p);
    return Status::Ok();
  }

  Status MeasureSize(int64_t bytes) {
    Backend* be = backend.get();
    char* buf = a->bytes_ptr();
    const int64_t count = bytes / 4;
    const int world_size = layout.size;
    auto own_block = [&](int index) {                  // allgather input: own block filled
      return be->Fill(buf + index * bytes, 0, bytes);  // zeros: no denormal sums
    };
    AUTOTUNE_RETURN_IF_ERROR(Time(Op::kAllreduce, Scope::kWorld, world_size, bytes, [&] {
      return be->Allreduce(Level::kWorld, buf, count, DType::kFloat32);
    }));
    AUTOTUNE_RETURN_IF_ERROR(own_block(layout.rank));
    AUTOTUNE_RETURN_IF_ERROR(Time(Op::kAllgather, Scope::kWorld, world_size, bytes,
                                  [&] { return be->Allgather(Level::kWorld, buf, bytes); }));
    if (layout.local_size > 1) {
      AUTOTUNE_RETURN_IF_ERROR(Time(Op::kAllreduce, Scope::kIntra, layout.local_size, bytes, [&] {
        return be->Allreduce(Level::kIntra, buf, count, DType::kFloat32);
      }));
      AUTOTUNE_RETURN_IF_ERROR(Time(Op::kAllgather, Scope::kIntra, layout.local_size, bytes,
                                    [&] { return be->Allgather(Level::kIntra, buf, bytes); }));
    }
    if (layout.nodes > 1) {
      AUTOTUNE_RETURN_IF_ERROR(Time(Op::kAllreduce, Scope::kCross, layout.nodes, bytes, [&] {
        return be->Allreduce(Level::kCross, buf, count, DType::kFloat32);
      }));
      AUTOTUNE_RETURN_IF_ERROR(Time(Op::kAllgather, Scope::kCross, layout.nodes, bytes, [&] {
        return layout.local_rank == 0 ? be->Allgather(Level::kCross, buf, bytes) : Status::Ok();
      }));
    }
    AUTOTUNE_RETURN_IF_ERROR(Time(Op::kAllreduce, Scope::kHierarchical, world_size, bytes, [&] {
      return HierarchicalAllreduce(be, buf, count, DType::kFloat32);
    }));
    AUTOTUNE_RETURN_IF_ERROR(own_block(layout.rank));
    AUTOTUNE_RETURN_IF_ERROR(Time(Op::kAllgather, Scope::kHierarchical, world_size, bytes, [&] {
      return HierarchicalAllgather(be, layout, buf, bytes, b->data());
    }));
    if (device_copy) return Status::Ok();
    const CopySpan copy{b->data(), buf, bytes};
    return Time(Op::kAllreduce, Scope::kCopy, 1, bytes, [&] { return be->BatchCopy({&copy, 1}); });
  }
};

Status StartStallCheck(const CalibrateOptions& options, Harness* h,
                       std::unique_ptr<StallInspector>* out) {
  StallInspectorOptions o;
  o.settings = options.stall;
  o.what = "message size";
  if (h->layout.rank == 0) {
    // A calibration is saved once every size is measured: nothing to keep.
    o.shutdown = [shutdown_s = options.stall.shutdown_s](const std::string& line) {
      EndStalledJob(line, "no calibration saved", shutdown_s);
    };
  }
  return AgreeOnStatus(h->world, StallInspector::Start(h->world, std::move(o), &h->progress, out));
}

}  // namespace

Status RunCalibrate(const CalibrateOptions& options, Calibration* out) {
  AUTOTUNE_RETURN_IF_ERROR(CheckMpiReady());
  MPI_Comm world = options.world;
  AUTOTUNE_RETURN_IF_ERROR(AgreeOnStatus(world, ValidateCalibrateOptions(options)));
  Harness h;
  h.world = world;
  h.repetitions = options.repetitions;
  LayoutComms comms;
  AUTOTUNE_RETURN_IF_ERROR(DetectLayout(world, &h.layout, &comms));
  std::unique_ptr<Store> store;
  Status st;
  if (h.layout.rank == 0) st = Store::Open(options.db_path, Store::Mode::kReadWrite, &store);
  st = AgreeOnStatus(world, st);
  if (st.ok()) {
    st = CreateBackend(options.backend, world, h.layout, comms, options.knobs, &h.backend);
  }
  FreeLayoutComms(&comms);
  AUTOTUNE_RETURN_IF_ERROR(st);
  h.device_copy = h.backend->kind() == BackendKind::kNccl;

  const std::vector<int64_t> sizes = CalibrationSizes(options.min_bytes, options.max_bytes);
  const int64_t largest = sizes.back() * h.layout.size;  // allgather result
  st = h.backend->Allocate(largest, &h.a);
  if (st.ok()) st = h.backend->Allocate(largest, &h.b);
  if (st.ok()) st = h.backend->Fill(h.a->data(), 0, largest);
  AUTOTUNE_RETURN_IF_ERROR(AgreeOnStatus(world, st.WithPrefix("calibration buffers")));
  std::unique_ptr<StallInspector> stall;  // stops (on every rank) before h goes
  AUTOTUNE_RETURN_IF_ERROR(StartStallCheck(options, &h, &stall));
  for (size_t i = 0; i < sizes.size(); ++i) {
    h.progress.BeginStep();
    AUTOTUNE_RETURN_IF_ERROR(h.MeasureSize(sizes[i]));
    if (h.layout.rank == 0 && options.on_size) {
      options.on_size(static_cast<int>(i + 1), static_cast<int>(sizes.size()), sizes[i]);
    }
  }
#ifdef AUTOTUNE_HAVE_NCCL  // without NCCL, ValidateCalibrateOptions refused "nccl"
  if (h.device_copy) {
    st = MeasureDeviceCopyCurve(h.backend.get(), sizes, h.repetitions, &h.points);
    AUTOTUNE_RETURN_IF_ERROR(AgreeOnStatus(world, st.WithPrefix("copy curve")));
  }
#endif

  Calibration c;
  c.topology = h.layout.ToTopology();
  c.backend = h.backend->kind();
  c.hardware = h.backend->hardware();
  if (c.backend == BackendKind::kMpi) c.mpi_tcp_eager_limit = options.knobs.mpi_tcp_eager_limit;
  c.points = std::move(h.points);
  st = Status::Ok();
  if (h.layout.rank == 0) st = store->SaveCalibration(&c);
  AUTOTUNE_RETURN_IF_ERROR(AgreeOnStatus(world, st));
  MPI_Bcast(&c.id, 1, MPI_INT64_T, 0, world);
  *out = std::move(c);
  return Status::Ok();
}

}  // namespace autotune::executor
