// allreduce_spread: how one raw MPI_Allreduce's time is spread, per message size, when the
// calls follow each other back to back (as a step's collectives do). `autotune calibrate`
// keeps each size's median; a step pays the sum of its collectives, whose expectation is the
// mean. Where the two differ (a heavy tail: some calls stall for milliseconds), a model fitted
// to medians prices those sizes short. Run it under mpirun; see bench/executor/README.md.
//
// Rank 0 prints, per size, a '#' line with the percentiles of its time per call (what Horovod's
// timeline, written on rank 0, records) and one result line (bench/common/result.h):
//   executor.allreduce_mean_<size>: the mean time per call (ms) against the median; ratio =
//     mean / median (1: no tail). Information, no target. met=no when a result was wrong.
// --thread-multiple initializes MPI as Horovod and our executor do (MPI_THREAD_MULTIPLE).
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/common/result.h"
#include "traces/trace.h"

namespace autotune::bench {
namespace {

struct Args {
  std::vector<int64_t> sizes = {131072, 196608, 229376, 245760, 262144, 265216,
                                294912, 393216, 524288, 1048576, 4194304};
  int repetitions = 200;
  int warmup = 5;
  bool thread_multiple = false;  // read before MPI_Init (ThreadMultipleAsked)
};

constexpr const char* kThreadMultiple = "--thread-multiple";

// Whether the flags ask for MPI_THREAD_MULTIPLE (needed before MPI_Init, before ParseArgs).
bool ThreadMultipleAsked(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == kThreadMultiple) return true;
  }
  return false;
}

// Parses the flags into *a; false with *error naming what is wrong.
bool ParseArgs(int argc, char** argv, Args* a, std::string* error) {
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == kThreadMultiple) {
      a->thread_multiple = true;
      continue;
    }
    if (flag != "--sizes" && flag != "--repetitions" && flag != "--warmup") {
      *error = flag + ": unknown flag (allreduce_spread [--sizes B,B,...] [--repetitions N] "
               "[--warmup N] [--thread-multiple])";
      return false;
    }
    if (i + 1 >= argc) {
      *error = flag + ": needs a value";
      return false;
    }
    const char* v = argv[++i];
    bool valid = true;
    if (flag == "--sizes") {
      a->sizes.clear();
      for (const char* p = v; valid && *p != '\0';) {
        char* end = nullptr;
        const long long b = std::strtoll(p, &end, 10);
        valid = end != p && b >= 4 && b % 4 == 0 && (*end == ',' || *end == '\0');
        if (valid) a->sizes.push_back(b);
        p = *end == ',' ? end + 1 : end;
      }
      valid = valid && !a->sizes.empty();
    } else {
      char* end = nullptr;
      const long n = std::strtol(v, &end, 10);
      const bool repetitions = flag == "--repetitions";
      valid = end != v && *end == '\0' && n >= (repetitions ? 2 : 0) && n <= 1000000;
      (repetitions ? a->repetitions : a->warmup) = static_cast<int>(n);
    }
    if (!valid) {
      *error = flag + " " + v +
               ": not a valid value (--sizes: bytes, multiples of 4, comma-separated; "
               "--repetitions: 2 to 1e6; --warmup: 0 to 1e6)";
      return false;
    }
  }
  return true;
}

// Times `repetitions` back-to-back allreduces of `bytes` (after `warmup` untimed ones) on every
// rank; returns this rank's time per call in microseconds and whether every rank's results
// held the expected sums. Back to back, a rank's times add up to its elapsed time, so their
// mean is what the sequence cost a call (a per-call maximum over ranks would count a late
// rank's wait on top of the call it delayed).
std::vector<double> TimeCalls(int64_t bytes, const Args& a, int rank, int size, bool* correct) {
  const size_t count = static_cast<size_t>(bytes / 4);
  // Rank r contributes r + 1 everywhere: every element sums to size (size + 1) / 2, exactly in
  // float32 for any world this runs on.
  std::vector<float> send(count, static_cast<float>(rank + 1));
  std::vector<float> recv(count, 0.0f);
  const float expected = static_cast<float>(size) * (size + 1) / 2.0f;
  std::vector<double> local(static_cast<size_t>(a.repetitions));
  int ok = 1;
  for (int i = -a.warmup; i < a.repetitions; ++i) {
    const double t0 = MPI_Wtime();
    MPI_Allreduce(send.data(), recv.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM,
                  MPI_COMM_WORLD);
    const double t = MPI_Wtime() - t0;
    if (i >= 0) local[static_cast<size_t>(i)] = t * 1e6;
    // Checked outside the timed call: the first, middle and last element.
    if (recv[0] != expected || recv[count / 2] != expected || recv[count - 1] != expected) ok = 0;
  }
  int all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  *correct = all_ok == 1;
  return local;
}

int Run(int argc, char** argv) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Args a;
  std::string error;
  if (!ParseArgs(argc, argv, &a, &error)) {
    if (rank == 0) std::fprintf(stderr, "allreduce_spread: %s\n", error.c_str());
    return 2;
  }
  if (rank == 0) {
    std::printf("# allreduce_spread ranks=%d repetitions=%d warmup=%d thread=%s (back to back, "
                "rank 0's time per call)\n",
                size, a.repetitions, a.warmup, a.thread_multiple ? "multiple" : "single");
  }
  bool all_correct = true;
  for (int64_t bytes : a.sizes) {
    bool correct = false;
    const std::vector<double> us = TimeCalls(bytes, a, rank, size, &correct);
    all_correct = all_correct && correct;
    if (rank != 0) continue;
    double sum = 0.0;
    for (double t : us) sum += t;
    const double mean_ms = sum / static_cast<double>(us.size()) / 1000.0;
    const double median_ms = Median(us) / 1000.0;
    std::printf("# allreduce bytes=%lld median_ms=%.3f mean_ms=%.3f p75_ms=%.3f p90_ms=%.3f "
                "p99_ms=%.3f max_ms=%.3f%s\n",
                static_cast<long long>(bytes), median_ms, mean_ms, Percentile(us, 75) / 1000.0,
                Percentile(us, 90) / 1000.0, Percentile(us, 99) / 1000.0,
                *std::max_element(us.begin(), us.end()) / 1000.0,
                correct ? "" : " WRONG values");
    Figure f;
    f.bench = "executor.allreduce_mean_" + SizeLabel(bytes);
    f.value = mean_ms;
    f.unit = "ms";
    f.anchor = "median";
    f.anchor_value = median_ms;
    f.valid = correct;
    PrintFigure(f);
  }
  return all_correct ? 0 : 1;
}

}  // namespace
}  // namespace autotune::bench

int main(int argc, char** argv) {
  if (autotune::bench::ThreadMultipleAsked(argc, argv)) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) {
      std::fprintf(stderr, "allreduce_spread: this MPI does not provide MPI_THREAD_MULTIPLE\n");
      MPI_Finalize();
      return 2;
    }
  } else {
    MPI_Init(&argc, &argv);
  }
  const int rc = autotune::bench::Run(argc, argv);
  MPI_Finalize();
  return rc;
}
