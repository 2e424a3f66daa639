// executor_bench: the executor's fused allreduce against one raw MPI_Allreduce of the
// same total bytes, and (on more than one node) cross-node allreduce bus bandwidth against
// the link rate. Run it under mpirun; see bench/executor/README.md.
//
// Rank 0 prints one result line per figure (bench/common/result.h), after a '#' line with
// the sizes and times behind it:
//   executor.fused_allreduce_<size>: fused throughput (GB/s) against one raw MPI_Allreduce of
//     the same bytes; ratio = raw time / fused time; target ratio >= 0.9 from 4 MiB up.
//     A fused result that differs from the expected sums prints met=no.
//   executor.cross_allreduce_busbw_<size>: cross-node bus bandwidth (MB/s) against the link
//     rate; target ratio >= 0.85 from 4 MiB up, none when the link rate is unknown.
// busbw = bytes / time * 2 (N - 1) / N (nccl-tests' factor). Exit status 1 when a target
// is missed.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "bench/common/result.h"
#include "executor/fused_executor.h"
#include "executor/layout.h"
#include "executor/mpi_backend.h"
#include "executor/mpi_runtime.h"
#include "executor/pattern.h"
#include "executor/tensor_memory.h"
#include "traces/trace.h"

namespace autotune::executor {
namespace {

struct Args {
  int64_t min_bytes = 1 << 20;
  int64_t max_bytes = 64 << 20;
  int repetitions = 20;
  int members = 16;
  double link_gbit = 0.0;  // 0 = unknown: no fraction printed
};

bool ParseArgs(int argc, char** argv, Args* a) {
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    if (i + 1 >= argc) return false;
    const char* v = argv[++i];
    if (k == "--min-mib")
      a->min_bytes = static_cast<int64_t>(std::atof(v) * (1 << 20));
    else if (k == "--max-mib")
      a->max_bytes = static_cast<int64_t>(std::atof(v) * (1 << 20));
    else if (k == "--repetitions")
      a->repetitions = std::atoi(v);
    else if (k == "--members")
      a->members = std::atoi(v);
    else if (k == "--link-gbit")
      a->link_gbit = std::atof(v);
    else
      return false;
  }
  // Inside tools/cluster.sh the link rate comes with the environment.
  const char* link = std::getenv("AUTOTUNE_CLUSTER_LINK_BITS_PER_S");
  if (a->link_gbit == 0.0 && link != nullptr) a->link_gbit = std::atof(link) / 1e9;
  return a->min_bytes >= 4096 && a->max_bytes >= a->min_bytes && a->repetitions >= 1 &&
         a->members >= 1;
}

// The slowest rank's time of run(), microseconds (after a barrier).
template <typename F>
double TimeSlowest(F&& run) {
  MPI_Barrier(MPI_COMM_WORLD);
  const SteadyClock::time_point t0 = SteadyClock::now();
  run();
  double us = MicrosSince(t0), slowest = 0.0;
  MPI_Allreduce(&us, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

// Median over repetitions (after one untimed warm-up) of the slowest rank's time.
template <typename F>
double TimeMedian(int repetitions, F&& run) {
  std::vector<double> times;
  TimeSlowest(run);
  for (int i = 0; i < repetitions; ++i) times.push_back(TimeSlowest(run));
  return Median(times);
}

// Targets apply from this size up; smaller sizes are printed for information.
constexpr int64_t kTargetMinBytes = int64_t{4} << 20;

int FusedVersusRaw(const Args& args, const NodeLayout& layout, Backend* backend) {
  int failures = 0;
  for (int64_t bytes = args.min_bytes; bytes <= args.max_bytes; bytes *= 2) {
    Workload w;
    w.name = "bench";
    const int64_t elements = bytes / 4 / args.members;
    FusedCollective c;
    c.op = Op::kAllreduce;
    c.dtype = DType::kFloat32;
    for (int m = 0; m < args.members; ++m) {
      TensorSpec t;
      t.name = "m" + std::to_string(m);
      t.shape = {elements};
      w.tensors.push_back(t);
      c.tensors.push_back(m);
      c.bytes += t.bytes();
    }
    std::unique_ptr<TensorMemory> memory;
    std::unique_ptr<FusedExecutor> fused;
    std::unique_ptr<Buffer> raw;
    Status st = TensorMemory::Create(backend, w, layout.size, &memory);
    if (st.ok()) st = FillInputs(backend, w, layout.rank, memory.get());
    if (st.ok()) st = FusedExecutor::Create(backend, &layout, &w, memory.get(), c.bytes, 0, &fused);
    if (st.ok()) st = backend->Allocate(c.bytes, &raw);
    if (!st.ok()) {
      std::fprintf(stderr, "executor_bench: %s\n", st.message().c_str());
      return 1;
    }
    std::memcpy(raw->data(), memory->input(0), c.bytes / args.members);  // small integers
    std::memset(raw->bytes_ptr() + c.bytes / args.members, 0, c.bytes - c.bytes / args.members);
    const SteadyClock::time_point origin = SteadyClock::now();
    CollectivePhases times;
    std::vector<double> copy_in, comm, copy_out;  // this rank's phases
    auto run_fused = [&] {
      Status s = fused->Run(c, Algorithm::kFlat, origin, &times);
      if (!s.ok()) std::fprintf(stderr, "executor_bench: %s\n", s.message().c_str());
    };
    auto run_raw = [&] {
      MPI_Allreduce(MPI_IN_PLACE, raw->data(), static_cast<int>(c.bytes / 4), MPI_FLOAT, MPI_SUM,
                    MPI_COMM_WORLD);
    };
    // Alternate the two so that a changing machine load weighs on both alike.
    std::vector<double> fused_times, raw_times;
    TimeSlowest(run_fused);
    TimeSlowest(run_raw);
    for (int i = 0; i < args.repetitions; ++i) {
      fused_times.push_back(TimeSlowest(run_fused));
      copy_in.push_back(times.copy_in_end_us - times.start_us);
      comm.push_back(times.comm_end_us - times.copy_in_end_us);
      copy_out.push_back(times.end_us - times.comm_end_us);
      raw_times.push_back(TimeSlowest(run_raw));
    }
    const double fused_us = Median(fused_times), raw_us = Median(raw_times);
    Status verified = VerifyOutputs(backend, w, layout.rank, layout.size, memory.get());
    int wrong = verified.ok() ? 0 : 1, any_wrong = 0;
    MPI_Reduce(&wrong, &any_wrong, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
    const bench::Figure figure = {
        .bench = "executor.fused_allreduce_" + bench::SizeLabel(c.bytes),
        .value = c.bytes / fused_us / 1e3,
        .unit = "GB/s",
        .anchor = "raw_MPI_Allreduce",
        .anchor_value = c.bytes / raw_us / 1e3,
        .target = c.bytes >= kTargetMinBytes ? bench::RatioAtLeast(0.9) : bench::NoTarget(),
        .valid = any_wrong == 0};
    failures += bench::Judge(figure) == bench::Verdict::kMissed;
    if (layout.rank == 0) {
      std::printf(
          "# fused_allreduce bytes=%lld members=%d ranks=%d fused_us=%.1f raw_us=%.1f%s "
          "(rank 0 median copy_in_us=%.1f comm_us=%.1f copy_out_us=%.1f)\n",
          static_cast<long long>(c.bytes), args.members, layout.size, fused_us, raw_us,
          any_wrong ? " WRONG values" : "", Median(copy_in), Median(comm), Median(copy_out));
      bench::PrintFigure(figure);
    }
  }
  return failures;
}

// Allreduce on local rank 0's cross-node communicator (one flow per node pair, the others
// idle), so the link is the bottleneck.
int CrossBusBandwidth(const Args& args, const NodeLayout& layout, Backend* backend) {
  int failures = 0;
  const int n = layout.nodes;
  std::unique_ptr<Buffer> buf;
  if (!backend->Allocate(args.max_bytes, &buf).ok()) return 1;
  std::memset(buf->data(), 0, args.max_bytes);
  for (int64_t bytes = args.min_bytes; bytes <= args.max_bytes; bytes *= 2) {
    const double us = TimeMedian(args.repetitions, [&] {
      if (layout.local_rank == 0) {
        backend->Allreduce(Level::kCross, buf->data(), bytes / 4, DType::kFloat32);
      }
    });
    const double busbw = bytes / us * 1e6 * 2.0 * (n - 1) / n;  // bytes/s
    const double link = args.link_gbit * 1e9 / 8.0;             // bytes/s, 0 = unknown
    const bench::Figure figure = {
        .bench = "executor.cross_allreduce_busbw_" + bench::SizeLabel(bytes),
        .value = busbw / 1e6,
        .unit = "MB/s",
        .anchor = "link_rate",
        .anchor_value = link / 1e6,
        .target =
            link > 0 && bytes >= kTargetMinBytes ? bench::RatioAtLeast(0.85) : bench::NoTarget()};
    failures += bench::Judge(figure) == bench::Verdict::kMissed;
    if (layout.rank == 0) {
      std::printf("# cross_allreduce bytes=%lld nodes=%d time_us=%.1f\n",
                  static_cast<long long>(bytes), n, us);
      bench::PrintFigure(figure);
    }
  }
  return failures;
}

int Main(int argc, char** argv) {
  MpiSession mpi(&argc, &argv);
  if (!mpi.status().ok()) {
    std::fprintf(stderr, "executor_bench: %s\n", mpi.status().message().c_str());
    return 1;
  }
  Args args;
  if (!ParseArgs(argc, argv, &args)) {
    std::fprintf(stderr,
                 "usage: mpirun -np N executor_bench [--min-mib 1] [--max-mib 64] "
                 "[--repetitions 20] [--members 16] [--link-gbit G]\n");
    return 2;
  }
  NodeLayout layout;
  LayoutComms comms;
  std::unique_ptr<Backend> backend;
  Status st = DetectLayout(MPI_COMM_WORLD, &layout, &comms);
  if (st.ok()) st = CreateMpiBackend(MPI_COMM_WORLD, comms, &backend);
  if (!st.ok()) {
    std::fprintf(stderr, "executor_bench: %s\n", st.message().c_str());
    return 1;
  }
  if (layout.rank == 0) {
    std::ifstream loadavg("/proc/loadavg");
    std::string load;
    std::getline(loadavg, load);
    std::printf("# executor_bench: %d ranks, %d node(s) x %d, %s; load average %s\n", layout.size,
                layout.nodes, layout.local_size, backend->hardware().c_str(), load.c_str());
  }
  int failures = FusedVersusRaw(args, layout, backend.get());
  if (layout.nodes > 1) failures += CrossBusBandwidth(args, layout, backend.get());
  backend.reset();
  FreeLayoutComms(&comms);
  return failures > 0 ? 1 : 0;
}

}  // namespace
}  // namespace autotune::executor

int main(int argc, char** argv) { return autotune::executor::Main(argc, argv); }
