// cluster_probe: checks that an MPI launch sees the layout it should (tools/cluster.sh) and
// that flat and hierarchical allreduce give the right sums there; optionally measures
// allreduce bandwidth. Plain MPI only, no autotune code, so it tests the cluster itself.
//
//   cluster_probe [--expect-nodes N] [--expect-ranks-per-node M] [--bandwidth]
//                 [--min-bytes B] [--max-bytes B] [--iters K]
//
// Expectations default to AUTOTUNE_CLUSTER_NODES / AUTOTUNE_CLUSTER_RANKS_PER_NODE when set.
// Every failed check prints one line naming the rank; the exit status is non-zero on every
// rank when any rank failed.
// The C API only; skip the deprecated C++ bindings.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

namespace {

struct Options {
  int expect_nodes = 0;           // 0 = no expectation
  int expect_ranks_per_node = 0;  // 0 = no expectation
  bool bandwidth = false;
  int64_t min_bytes = int64_t{1} << 20;
  int64_t max_bytes = int64_t{64} << 20;
  int iters = 5;
};

int EnvInt(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : 0;
}

bool ParseOptions(int argc, char** argv, Options* o, std::string* error) {
  o->expect_nodes = EnvInt("AUTOTUNE_CLUSTER_NODES");
  o->expect_ranks_per_node = EnvInt("AUTOTUNE_CLUSTER_RANKS_PER_NODE");
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](int64_t* out) {
      if (i + 1 >= argc) return false;
      char* end = nullptr;
      long long v = std::strtoll(argv[++i], &end, 10);
      if (*end != '\0' || v <= 0) return false;
      *out = v;
      return true;
    };
    int64_t v = 0;
    if (a == "--bandwidth") {
      o->bandwidth = true;
    } else if (a == "--expect-nodes" && value(&v)) {
      o->expect_nodes = static_cast<int>(v);
    } else if (a == "--expect-ranks-per-node" && value(&v)) {
      o->expect_ranks_per_node = static_cast<int>(v);
    } else if (a == "--min-bytes" && value(&v)) {
      o->min_bytes = v;
    } else if (a == "--max-bytes" && value(&v)) {
      o->max_bytes = v;
    } else if (a == "--iters" && value(&v)) {
      o->iters = static_cast<int>(v);
    } else {
      *error = "bad argument '" + a + "' (see the comment at the top of cluster_probe.cc)";
      return false;
    }
  }
  return true;
}

// Communicators of the node layout: ranks sharing memory, and one cross-node communicator
// per local rank (the ranks with the same local rank on every node).
struct Layout {
  MPI_Comm local = MPI_COMM_NULL;
  MPI_Comm cross = MPI_COMM_NULL;
  int world_rank = 0, world_size = 0, local_rank = 0, local_size = 0, cross_size = 0;
  std::string host;
};

Layout MakeLayout() {
  Layout l;
  MPI_Comm_rank(MPI_COMM_WORLD, &l.world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &l.world_size);
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, l.world_rank, MPI_INFO_NULL, &l.local);
  MPI_Comm_rank(l.local, &l.local_rank);
  MPI_Comm_size(l.local, &l.local_size);
  MPI_Comm_split(MPI_COMM_WORLD, l.local_rank, l.world_rank, &l.cross);
  MPI_Comm_size(l.cross, &l.cross_size);
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  l.host = host;
  return l;
}

constexpr int kHostLen = 64;

// Checks the layout: shared-memory groups are exactly the host names, sizes as expected.
int CheckLayout(const Layout& l, const Options& o) {
  int errors = 0;
  std::vector<char> hosts(static_cast<size_t>(kHostLen) * l.world_size);
  std::vector<int> local_sizes(l.world_size);
  char mine[kHostLen] = {};
  std::strncpy(mine, l.host.c_str(), kHostLen - 1);
  MPI_Allgather(mine, kHostLen, MPI_CHAR, hosts.data(), kHostLen, MPI_CHAR, MPI_COMM_WORLD);
  MPI_Allgather(&l.local_size, 1, MPI_INT, local_sizes.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::vector<char> local_hosts(static_cast<size_t>(kHostLen) * l.local_size);
  MPI_Allgather(mine, kHostLen, MPI_CHAR, local_hosts.data(), kHostLen, MPI_CHAR, l.local);

  for (int r = 0; r < l.local_size; ++r) {
    if (l.host != &local_hosts[static_cast<size_t>(r) * kHostLen]) {
      std::printf(
          "cluster_probe: FAIL rank %d (%s): local rank %d of its shared-memory "
          "group is on host %s\n",
          l.world_rank, l.host.c_str(), r, &local_hosts[static_cast<size_t>(r) * kHostLen]);
      ++errors;
    }
  }
  std::set<std::string> distinct;
  for (int r = 0; r < l.world_size; ++r) distinct.insert(&hosts[static_cast<size_t>(r) * kHostLen]);
  int groups = l.local_rank == 0 ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &groups, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (static_cast<int>(distinct.size()) != groups) {
    std::printf(
        "cluster_probe: FAIL rank %d: %zu distinct host names but %d shared-memory "
        "groups\n",
        l.world_rank, distinct.size(), groups);
    ++errors;
  }
  if (o.expect_nodes > 0 && groups != o.expect_nodes) {
    std::printf("cluster_probe: FAIL rank %d: %d nodes, expected %d\n", l.world_rank, groups,
                o.expect_nodes);
    ++errors;
  }
  if (o.expect_ranks_per_node > 0 && l.local_size != o.expect_ranks_per_node) {
    std::printf("cluster_probe: FAIL rank %d (%s): MPI_COMM_TYPE_SHARED size %d, expected %d\n",
                l.world_rank, l.host.c_str(), l.local_size, o.expect_ranks_per_node);
    ++errors;
  }
  if (l.world_rank == 0) {
    std::string names, sizes;
    for (const std::string& h : distinct) names += (names.empty() ? "" : " ") + h;
    for (int s : local_sizes) sizes += (sizes.empty() ? "" : " ") + std::to_string(s);
    std::printf("cluster_probe: world %d, nodes %d (%s), shared-comm size per rank: %s\n",
                l.world_size, groups, names.c_str(), sizes.c_str());
  }
  return errors;
}

// Hierarchical allreduce with plain MPI: reduce to the node's first rank, allreduce among
// the first ranks of all nodes, broadcast within the node.
void HierarchicalAllreduce(const Layout& l, std::vector<int64_t>* buf) {
  const int n = static_cast<int>(buf->size());
  if (l.local_rank == 0) {
    MPI_Reduce(MPI_IN_PLACE, buf->data(), n, MPI_INT64_T, MPI_SUM, 0, l.local);
    MPI_Allreduce(MPI_IN_PLACE, buf->data(), n, MPI_INT64_T, MPI_SUM, l.cross);
  } else {
    MPI_Reduce(buf->data(), nullptr, n, MPI_INT64_T, MPI_SUM, 0, l.local);
  }
  MPI_Bcast(buf->data(), n, MPI_INT64_T, 0, l.local);
}

// Rank r contributes (r + 1) * (i % 7 + 1) at index i; the sum over ranks is known.
int CheckSums(const Layout& l, bool hierarchical) {
  const char* what = hierarchical ? "hierarchical" : "flat";
  const int n = 1000003;  // odd and larger than any eager limit
  std::vector<int64_t> buf(n);
  for (int i = 0; i < n; ++i) buf[i] = int64_t{l.world_rank + 1} * (i % 7 + 1);
  if (hierarchical) {
    HierarchicalAllreduce(l, &buf);
  } else {
    MPI_Allreduce(MPI_IN_PLACE, buf.data(), n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  }
  const int64_t ranks_sum = int64_t{l.world_size} * (l.world_size + 1) / 2;
  int wrong = 0;
  for (int i = 0; i < n; ++i) {
    if (buf[i] != ranks_sum * (i % 7 + 1)) {
      if (wrong == 0) {
        std::printf(
            "cluster_probe: FAIL rank %d: %s allreduce element %d is %lld, expected "
            "%lld\n",
            l.world_rank, what, i, static_cast<long long>(buf[i]),
            static_cast<long long>(ranks_sum * (i % 7 + 1)));
      }
      ++wrong;
    }
  }
  int total = wrong;
  MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (l.world_rank == 0) {
    std::printf("cluster_probe: %s allreduce of %d int64 over %d ranks: %s (%d wrong)\n", what, n,
                l.world_size, total == 0 ? "ok" : "FAIL", total);
  }
  return wrong > 0 ? 1 : 0;
}

// Median time of `iters` allreduces of `bytes` of float on `comm` (after one warm-up).
double TimeAllreduce(MPI_Comm comm, std::vector<float>* buf, int iters) {
  const int n = static_cast<int>(buf->size());
  std::vector<double> times;
  for (int it = 0; it <= iters; ++it) {
    MPI_Barrier(comm);
    double t0 = MPI_Wtime();
    MPI_Allreduce(MPI_IN_PLACE, buf->data(), n, MPI_FLOAT, MPI_SUM, comm);
    double t = MPI_Wtime() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, comm);
    if (it > 0) times.push_back(t);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// A barrier that sleeps while it waits, so that ranks not being measured leave the (few,
// shared) cores to the ones that are.
void SleepingBarrier(MPI_Comm comm) {
  MPI_Request request;
  MPI_Ibarrier(comm, &request);
  int done = 0;
  MPI_Test(&request, &done, MPI_STATUS_IGNORE);
  while (!done) {
    usleep(500);
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
  }
}

// nccl-tests style table: allreduce among the first ranks of each node (one per node, so
// every byte crosses the shaped links), busbw = 2(n-1)/n * bytes / time.
void MeasureBandwidth(const Layout& l, const Options& o) {
  const double link_bits = std::atof(std::getenv("AUTOTUNE_CLUSTER_LINK_BITS_PER_S")
                                         ? std::getenv("AUTOTUNE_CLUSTER_LINK_BITS_PER_S")
                                         : "0");
  const double link_bytes_per_s = link_bits / 8.0;
  if (l.world_rank == 0) {
    std::printf(
        "cluster_probe: cross-node allreduce, %d ranks (one per node), link %.3g "
        "bit/s = %.1f MB/s\n",
        l.cross_size, link_bits, link_bytes_per_s / 1e6);
    std::printf("%12s %12s %10s %10s %10s\n", "bytes", "time_us", "algbw_MB/s", "busbw_MB/s",
                "busbw/link");
  }
  for (int64_t bytes = o.min_bytes; bytes <= o.max_bytes; bytes *= 4) {
    std::vector<float> buf(static_cast<size_t>(bytes / 4), 1.0f);
    double t = 0.0;
    if (l.local_rank == 0) t = TimeAllreduce(l.cross, &buf, o.iters);
    SleepingBarrier(MPI_COMM_WORLD);
    if (l.world_rank == 0) {
      const double n = l.cross_size;
      const double algbw = static_cast<double>(bytes) / t;
      const double busbw = algbw * 2.0 * (n - 1.0) / n;
      std::printf("%12lld %12.1f %10.1f %10.1f %10.3f\n", static_cast<long long>(bytes), t * 1e6,
                  algbw / 1e6, busbw / 1e6, link_bytes_per_s > 0 ? busbw / link_bytes_per_s : 0.0);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  Options options;
  std::string error;
  if (!ParseOptions(argc, argv, &options, &error)) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) std::fprintf(stderr, "cluster_probe: %s\n", error.c_str());
    MPI_Finalize();
    return 2;
  }
  Layout layout = MakeLayout();
  int errors = CheckLayout(layout, options);
  errors += CheckSums(layout, /*hierarchical=*/false);
  errors += CheckSums(layout, /*hierarchical=*/true);
  if (options.bandwidth) MeasureBandwidth(layout, options);

  int total = errors;
  MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (layout.world_rank == 0) {
    std::printf("cluster_probe: %s\n", total == 0 ? "OK" : "FAILED");
  }
  std::fflush(stdout);
  MPI_Comm_free(&layout.cross);
  MPI_Comm_free(&layout.local);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
