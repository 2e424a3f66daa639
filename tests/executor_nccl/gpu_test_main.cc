// GPU correctness of the NCCL backend: every primitive on every level, the hierarchical
// compositions and the fusion engine with the device step player, for both cross-step
// variants (knobs.nccl_cross nccl and mpi) and with per-launch NCCL knobs. Run under
// mpirun (any rank count; AUTOTUNE_RANKS_PER_NODE makes pseudo-nodes; ranks sharing one GPU
// get their own NCCL_HOSTID). Without a GPU it prints exactly one line,
// "SKIP: no CUDA device", and exits 0 (ctest shows it as skipped).
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "executor/layout.h"
#include "executor/mpi_runtime.h"
#include "executor/nccl/nccl_factory.h"
#include "gpu_checks.h"

namespace autotune::executor::gpu_test {

namespace {

int g_failures = 0;

bool Run(const std::string& name, const Status& st) {
  const bool ok = Report(name, st);
  if (!ok) ++g_failures;
  return ok;
}

void CheckPrimitives(Backend* b, const std::string& variant) {
  for (Level level : {Level::kWorld, Level::kIntra, Level::kCross}) {
    const std::string at = variant + " " + LevelName(level) + " ";
    for (DType d : {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kFloat64,
                    DType::kInt32, DType::kInt64}) {
      Run(at + "allreduce " + DTypeName(d), CheckAllreduce(b, level, d, 100003));
    }
    Run(at + "allreduce of 0 elements", CheckAllreduce(b, level, DType::kFloat32, 0));
    Run(at + "reduce-scatter", CheckReduceScatter(b, level, 4099));
    Run(at + "allgather", CheckAllgather(b, level, 12345));
    Run(at + "broadcast", CheckBroadcast(b, level, 54321));
    Run(at + "gather", CheckGather(b, level, 3333));
  }
}

void CheckVariant(const NodeLayout& layout, const LayoutComms& comms, const Knobs& knobs,
                  const std::string& variant) {
  std::unique_ptr<Backend> b;
  if (!Run(variant + " backend creation",
           MakeNcclBackend(MPI_COMM_WORLD, layout, comms, knobs, &b))) {
    return;
  }
  CheckPrimitives(b.get(), variant);
  Run(variant + " batch copy, 10 spans (inline descriptors)", CheckBatchCopy(b.get(), 10));
  Run(variant + " batch copy, 300 spans (staged descriptors)", CheckBatchCopy(b.get(), 300));
  for (int64_t count : {int64_t{1}, int64_t{4097}, int64_t{1} << 20}) {
    Run(variant + " hierarchical allreduce of " + std::to_string(count),
        CheckHierarchicalAllreduce(b.get(), DType::kFloat32, count));
  }
  Run(variant + " hierarchical allreduce float16",
      CheckHierarchicalAllreduce(b.get(), DType::kFloat16, 30001));
  Run(variant + " hierarchical allgather", CheckHierarchicalAllgather(b.get(), layout, 7777));
  for (double threshold_mb : {0.0, 0.0625, 64.0}) {
    for (bool hierarchical : {false, true}) {
      Knobs k = knobs;
      k.fusion_threshold_mb = threshold_mb;
      k.hierarchical_allreduce = hierarchical;
      k.hierarchical_allgather = hierarchical;
      k.cycle_time_ms = 0.5;
      Run(variant + " engine threshold " + std::to_string(threshold_mb) + " MB" +
              (hierarchical ? " hierarchical" : " flat"),
          CheckEngine(b.get(), layout, k));
    }
  }
}

int Main(int argc, char** argv) {
  MpiSession session(&argc, &argv);
  if (!session.status().ok()) {
    std::fprintf(stderr, "%s\n", session.status().message().c_str());
    return 1;
  }
  int rank = 0, devices = CudaDeviceCount(), fewest = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Allreduce(&devices, &fewest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (fewest == 0) {
    if (rank == 0) std::printf("SKIP: no CUDA device\n");
    return 0;
  }
  NodeLayout layout;
  LayoutComms comms;
  if (!Run("layout", DetectLayout(MPI_COMM_WORLD, &layout, &comms))) return 1;
  if (rank == 0) {
    std::printf("layout: %d nodes x %d ranks%s\n", layout.nodes, layout.local_size,
                layout.block_placement() ? "" : " (not by node)");
  }
  Knobs knobs;
  CheckVariant(layout, comms, knobs, "cross=nccl");
  knobs.nccl_cross = "mpi";
  CheckVariant(layout, comms, knobs, "cross=mpi");
  // Per-launch knobs: set in the environment before NCCL starts, results still exact.
  knobs.nccl_cross = "nccl";
  knobs.nccl_algo = "ring";
  knobs.nccl_proto = "simple";
  knobs.nccl_max_nchannels = 2;
  {
    std::unique_ptr<Backend> b;
    Status st = MakeNcclBackend(MPI_COMM_WORLD, layout, comms, knobs, &b);
    const char* algo = std::getenv("NCCL_ALGO");
    if (st.ok() && (algo == nullptr || std::string(algo) != "Ring")) {
      st = Status::Internal("NCCL_ALGO is not Ring after creating the backend");
    }
    if (st.ok()) st = CheckAllreduce(b.get(), Level::kWorld, DType::kFloat32, 1 << 20);
    Run("knobs ring/simple/2 channels: env set and allreduce exact", st);
  }
  FreeLayoutComms(&comms);
  if (rank == 0) std::printf("%s: %d failed\n", g_failures ? "FAILED" : "OK", g_failures);
  return g_failures ? 1 : 0;
}

}  // namespace

bool Report(const std::string& name, const Status& local) {
  const Status st = AgreeOnStatus(MPI_COMM_WORLD, local);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    if (st.ok()) {
      std::printf("PASS %s\n", name.c_str());
    } else {
      std::printf("FAIL %s: %s\n", name.c_str(), st.message().c_str());
    }
    std::fflush(stdout);
  }
  return st.ok();
}

}  // namespace autotune::executor::gpu_test

int main(int argc, char** argv) { return autotune::executor::gpu_test::Main(argc, argv); }
