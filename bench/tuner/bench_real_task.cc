// The real task: an exhaustive measured grid of the runtime knobs, recorded on the
// emulated cluster by bench/tuner/real_task.sh, is the ground truth; each method "measures" a
// setting by looking up its recorded result, and the figure is the number of measured runs it
// needs before one of them is within --within (3%) of the grid's best score:
//   multi-fidelity search: the simulator replays the default setting's trace (fitted to the
//     calibration in the same database), the tuner spends --sim-budget simulations, then
//     co-kriging picks the runs to measure (what `autotune search` does);
//   measured-only BO: the same GP (noise fixed at --gp-noise, Horovod's 0.8, for both) and
//     expected improvement on measured runs alone (Horovod's way);
//   random: the grid in random order.
// Every method starts from the default setting, already measured (it is the baseline run the
// simulator replays), which counts as run 1. All methods pick only grid settings (the tuner's
// candidate list), so no run is repeated while the grid has unmeasured settings. Median over
// --seeds seeds. A setting measured more than once (real_task.sh --passes, or other recordings
// of the same grid given with --also DB, whose runs only add to the mean scores; the baseline
// trace and calibration stay --db's) scores the mean of its runs. Groups of runs (workload,
// scale, topology, backend) with fewer than 8 settings are skipped.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench/tuner/bench_common.h"
#include "simulator/stored_simulation.h"
#include "store/store.h"
#include "tuner/knob_search.h"
#include "tuner/search_loop.h"

namespace autotune {
namespace {

using tuner::Fidelity;
using tuner::Point;

struct Options {
  std::string db;
  std::vector<std::string> also;  // --also DB: more recordings of the same grids
  int seeds = 30;
  int sim_budget = 40;
  double within = 0.03;
  int threads = 0;
  bool show = false;  // --show: print each method's measured runs for the first seed
  // --gp-noise: fixed noise of the measured fidelity, as `autotune search` and Horovod (0.8);
  // < 0: learned.
  double gp_noise = 0.8;
};

// The runtime knobs the grid spans; the search space frees those that vary in the grid.
const char* const kGridKnobs[] = {"fusion_threshold_mb", "cycle_time_ms", "cache_capacity",
                                  "hierarchical_allreduce", "hierarchical_allgather"};

struct Grid {
  std::string label;           // "resnet50 x0.1 2x2 mpi"
  std::vector<RunInfo> runs;   // one per distinct setting (repeats: the median-score run,
                               // whose knobs, and for the default its trace, are used)
  std::vector<double> scores;  // per setting: the mean score of its runs, bytes/s
  std::vector<int> counts;     // per setting: its runs
  int default_index = -1;      // the run at the default knobs: the simulator's baseline
};

double SpearmanRho(const std::vector<double>& a, const std::vector<double>& b) {
  auto ranks = [](const std::vector<double>& v) {
    std::vector<size_t> order(v.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](size_t i, size_t j) { return v[i] < v[j]; });
    std::vector<double> r(v.size());
    for (size_t i = 0; i < order.size();) {
      size_t j = i;
      while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
      for (size_t k = i; k <= j; ++k) r[order[k]] = 0.5 * (i + j) + 1.0;
      i = j + 1;
    }
    return r;
  };
  std::vector<double> ra = ranks(a), rb = ranks(b);
  const double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / ra.size();
  const double mb = std::accumulate(rb.begin(), rb.end(), 0.0) / rb.size();
  double cov = 0, va = 0, vb = 0;
  for (size_t i = 0; i < ra.size(); ++i) {
    cov += (ra[i] - ma) * (rb[i] - mb);
    va += (ra[i] - ma) * (ra[i] - ma);
    vb += (rb[i] - mb) * (rb[i] - mb);
  }
  return va > 0 && vb > 0 ? cov / std::sqrt(va * vb) : 0.0;
}

bool IsGridRun(const RunInfo& run) {
  return run.kind == RunKind::kMeasured && run.complete && run.score_bytes_per_s > 0;
}

std::string GroupLabel(const RunInfo& run) {
  char label[256];
  std::snprintf(label, sizeof(label), "%s x%g %s %s", run.workload.name.c_str(), run.scale,
                run.topology.key().c_str(), BackendName(run.backend));
  return label;
}

// Adds the runs of another recording of the same grids (--also DB): each run of a setting in
// a grid joins that setting's mean score. Returns the runs added.
StatusOr<int> AddRecording(Store& store, std::vector<Grid>* grids) {
  std::vector<RunInfo> runs;
  AUTOTUNE_RETURN_IF_ERROR(store.ListRuns(&runs));
  int added = 0;
  for (const RunInfo& run : runs) {
    if (!IsGridRun(run)) continue;
    for (Grid& grid : *grids) {
      if (grid.label != GroupLabel(run)) continue;
      for (size_t i = 0; i < grid.runs.size(); ++i) {
        if (grid.runs[i].knobs != run.knobs) continue;
        grid.scores[i] =
            (grid.scores[i] * grid.counts[i] + run.score_bytes_per_s) / (grid.counts[i] + 1);
        ++grid.counts[i];
        ++added;
        break;  // a grid holds each setting once
      }
    }
  }
  return added;
}

Status LoadGrids(Store& store, std::vector<Grid>* grids) {
  std::vector<RunInfo> runs;
  AUTOTUNE_RETURN_IF_ERROR(store.ListRuns(&runs));
  std::map<std::string, std::vector<RunInfo>> groups;
  for (const RunInfo& run : runs) {
    if (IsGridRun(run)) groups[GroupLabel(run)].push_back(run);
  }
  const Knobs defaults;
  for (auto& [label, members] : groups) {
    Grid grid;
    grid.label = label;
    // Repeated settings: keep the run with the median score (its trace is a typical one).
    std::vector<std::vector<RunInfo>> by_setting;
    for (const RunInfo& run : members) {
      auto same = std::find_if(by_setting.begin(), by_setting.end(),
                               [&](const auto& s) { return s.front().knobs == run.knobs; });
      if (same == by_setting.end()) {
        by_setting.push_back({run});
      } else {
        same->push_back(run);
      }
    }
    for (std::vector<RunInfo>& repeats : by_setting) {
      std::sort(repeats.begin(), repeats.end(), [](const RunInfo& a, const RunInfo& b) {
        return a.score_bytes_per_s < b.score_bytes_per_s;
      });
      grid.runs.push_back(repeats[repeats.size() / 2]);
      double sum = 0.0;
      for (const RunInfo& run : repeats) sum += run.score_bytes_per_s;
      grid.scores.push_back(sum / repeats.size());
      grid.counts.push_back(static_cast<int>(repeats.size()));
      if (repeats.front().knobs == defaults) {
        grid.default_index = static_cast<int>(grid.runs.size()) - 1;
      }
    }
    if (grid.runs.size() < 8) continue;
    if (grid.default_index < 0) {
      std::fprintf(stderr, "# %s: no run at the default knobs (the baseline); skipped\n",
                   label.c_str());
      continue;
    }
    grids->push_back(std::move(grid));
  }
  return Status::Ok();
}

// The outcome of one method on one seed: measured runs until within the target (the default
// included), or grid size + 1 when it never got there.
using Method = std::function<int(uint64_t seed)>;

struct Task {
  const Grid* grid = nullptr;
  tuner::Space space;
  std::vector<Point> points;      // grid settings as points of `space`
  std::vector<double> measured;   // scores, bytes/s
  std::vector<double> simulated;  // predicted scores, bytes/s
  double best = 0.0;
  int IndexOf(const Point& p) const {
    auto it = std::find(points.begin(), points.end(), p);
    return it == points.end() ? -1 : static_cast<int>(it - points.begin());
  }
  bool Hit(int i, double within) const { return measured[i] * (1.0 + within) >= best; }
};

int RunRandom(const Task& task, const Options& options, uint64_t seed) {
  const int n = static_cast<int>(task.points.size());
  const int start = task.grid->default_index;
  if (task.Hit(start, options.within)) return 1;
  std::vector<int> order;
  for (int i = 0; i < n; ++i) {
    if (i != start) order.push_back(i);
  }
  std::mt19937_64 rng(seed);
  std::shuffle(order.begin(), order.end(), rng);
  for (size_t k = 0; k < order.size(); ++k) {
    if (task.Hit(order[k], options.within)) return static_cast<int>(k) + 2;
  }
  return n + 1;
}

int RunBayes(const Task& task, const Options& options, uint64_t seed, bool multi_fidelity) {
  const int n = static_cast<int>(task.points.size());
  const int start = task.grid->default_index;
  if (task.Hit(start, options.within)) return 1;
  tuner::SearchOptions search;
  search.seed = seed;
  search.model.simulated_gp.seed = seed;
  search.model.residual_gp.seed = seed;
  search.model.residual_gp.fixed_noise_stddev = options.gp_noise;
  search.candidates = task.points;
  search.stop.max_measured_samples = n - 1;
  search.simulated_budget = multi_fidelity ? std::min(options.sim_budget, n) : 0;
  int runs = 1;
  bool reached = false;
  tuner::Objective measured = [&](const Point& p) -> StatusOr<double> {
    const int i = task.IndexOf(p);
    if (i < 0) return Status::Internal("suggestion off the grid: " + task.space.Describe(p));
    ++runs;
    if (options.show && seed == 1000) {
      std::printf("#   %s run %d: %s measured %.4g GB/s (best %.4g)\n",
                  multi_fidelity ? "multi_fidelity" : "measured_bo", runs,
                  KnobsShort(task.grid->runs[i].knobs).c_str(), task.measured[i] / 1e9,
                  task.best / 1e9);
    }
    if (task.Hit(i, options.within)) {
      reached = true;
      return Status::Aborted("reached");
    }
    return task.measured[i];
  };
  tuner::Objective simulated = [&](const Point& p) -> StatusOr<double> {
    const int i = task.IndexOf(p);
    if (i < 0) return Status::Internal("suggestion off the grid: " + task.space.Describe(p));
    return task.simulated[i];
  };
  std::vector<tuner::Observation> prior = {
      {task.points[start], Fidelity::kMeasured, task.measured[start]}};
  if (multi_fidelity) {
    prior.push_back({task.points[start], Fidelity::kSimulated, task.simulated[start]});
  }
  StatusOr<tuner::SearchResult> result = tuner::RunBayesSearch(
      task.space, search, measured, multi_fidelity ? simulated : tuner::Objective(), prior);
  if (!reached && !result.ok()) {
    std::fprintf(stderr, "# %s seed %llu: %s\n", task.grid->label.c_str(),
                 static_cast<unsigned long long>(seed), result.status().message().c_str());
    return n + 1;
  }
  return reached ? runs : n + 1;
}

// Runs `method` over the seeds on `threads` threads; the runs needed per seed.
std::vector<double> OverSeeds(const Options& options, const Method& method) {
  std::vector<double> runs(options.seeds);
  std::atomic<int> next{0};
  const int threads = options.threads > 0
                          ? options.threads
                          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (int t = 0; t < std::min(threads, options.seeds); ++t) {
    pool.emplace_back([&] {
      for (int s = next++; s < options.seeds; s = next++) runs[s] = method(1000 + s);
    });
  }
  for (std::thread& t : pool) t.join();
  return runs;
}

double Quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(std::lround(q * (v.size() - 1)))];
}

Status BuildTask(Store& store, const Grid& grid, const Options& options, Task* task) {
  task->grid = &grid;
  task->space = tuner::KnobSearchSpace(BackendKind::kMpi);
  const Knobs& base = grid.runs[grid.default_index].knobs;
  std::vector<std::string> varying;
  for (const char* name : kGridKnobs) {
    for (const RunInfo& run : grid.runs) {
      if (KnobValue(run.knobs, name) != KnobValue(base, name)) {
        varying.push_back(name);
        break;
      }
    }
  }
  for (int i = 0; i < task->space.num_dimensions(); ++i) {
    const std::string& name = task->space.dimension(i).name;
    if (std::find(varying.begin(), varying.end(), name) != varying.end()) continue;
    AUTOTUNE_RETURN_IF_ERROR(tuner::FixKnobAt(&task->space, name, base));
  }
  std::vector<Knobs> settings;
  for (const RunInfo& run : grid.runs) {
    Point point;
    AUTOTUNE_RETURN_IF_ERROR(tuner::KnobsToPoint(task->space, run.knobs, &point));
    AUTOTUNE_RETURN_IF_ERROR(
        task->space.Validate(point).WithPrefix("run " + std::to_string(run.id)));
    task->points.push_back(point);
    settings.push_back(run.knobs);
  }
  task->measured = grid.scores;
  task->best = *std::max_element(task->measured.begin(), task->measured.end());
  sim::StoredSimulation loaded;
  AUTOTUNE_RETURN_IF_ERROR(sim::LoadSimulation(store, grid.runs[grid.default_index].id, {},
                                               sim::IfUncalibrated::kFail, &loaded));
  for (const sim::SettingResult& r : loaded.simulation->EvaluateAll(settings, options.threads)) {
    task->simulated.push_back(r.score_bytes_per_s);
  }
  std::string names;
  for (const std::string& v : varying) names += (names.empty() ? "" : ", ") + v;
  const size_t top_measured =
      std::max_element(task->measured.begin(), task->measured.end()) - task->measured.begin();
  std::printf(
      "# %s: %zu settings over %s, measured %d+ times each (score: the mean); "
      "baseline run %lld; best measured %.4g GB/s (%s)\n",
      grid.label.c_str(), grid.runs.size(), names.c_str(),
      *std::min_element(grid.counts.begin(), grid.counts.end()),
      static_cast<long long>(grid.runs[grid.default_index].id), task->best / 1e9,
      KnobsShort(grid.runs[top_measured].knobs).c_str());
  int hits = 0;
  for (size_t i = 0; i < task->points.size(); ++i) {
    hits += task->Hit(static_cast<int>(i), options.within);
  }
  const size_t top_sim =
      std::max_element(task->simulated.begin(), task->simulated.end()) - task->simulated.begin();
  std::printf(
      "# %s: %d of %zu settings within %.0f%% of the best; simulator vs measured: "
      "Spearman %.3f, simulated best is measured at %.1f%% of the best\n",
      grid.label.c_str(), hits, task->points.size(), 100 * options.within,
      SpearmanRho(task->simulated, task->measured), 100 * task->measured[top_sim] / task->best);
  return Status::Ok();
}

// Parses the command line into *options. Returns 0 when it is complete and valid, else prints
// why to stderr and returns the process's exit code (2); exits with 2 when a flag lacks its
// value.
int ParseArgs(int argc, char** argv, Options* options) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "bench_tuner_real_task: %s needs a value\n", arg.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--db") {
      options->db = value();
    } else if (arg == "--also") {
      options->also.push_back(value());
    } else if (arg == "--seeds") {
      options->seeds = std::atoi(value().c_str());
    } else if (arg == "--sim-budget") {
      options->sim_budget = std::atoi(value().c_str());
    } else if (arg == "--within") {
      options->within = std::atof(value().c_str());
    } else if (arg == "--threads") {
      options->threads = std::atoi(value().c_str());
    } else if (arg == "--gp-noise") {
      options->gp_noise = std::atof(value().c_str());
    } else if (arg == "--show") {
      options->show = true;
    } else {
      std::fprintf(stderr,
                   "bench_tuner_real_task: unknown argument %s (usage: --db DB [--seeds 30] "
                   "[--also DB ...] [--sim-budget 40] [--within 0.03] [--threads N] "
                   "[--gp-noise 0.8] [--show])\n",
                   arg.c_str());
      return 2;
    }
  }
  if (options->db.empty() || options->seeds < 1 || options->sim_budget < 0 || options->within < 0) {
    std::fprintf(stderr,
                 "bench_tuner_real_task: needs --db DB (written by real_task.sh), "
                 "--seeds >= 1, --sim-budget >= 0, --within >= 0\n");
    return 2;
  }
  return 0;
}

// Opens --db into *store and loads its grids into *grids, then adds the runs of every --also
// recording to their mean scores (printing how many each added). Errors name the --also
// database at fault.
Status OpenGrids(const Options& options, std::unique_ptr<Store>* store, std::vector<Grid>* grids) {
  Status status = Store::Open(options.db, Store::Mode::kReadOnly, store);
  if (status.ok()) status = LoadGrids(**store, grids);
  for (size_t i = 0; status.ok() && i < options.also.size(); ++i) {
    std::unique_ptr<Store> other;
    status = Store::Open(options.also[i], Store::Mode::kReadOnly, &other);
    StatusOr<int> added = status.ok() ? AddRecording(*other, grids) : StatusOr<int>(status);
    if (!added.ok()) {
      status = added.status().WithPrefix(options.also[i]);
    } else {
      std::printf("# %s: %d runs of the same grids added to the mean scores\n",
                  options.also[i].c_str(), *added);
    }
  }
  return status;
}

// Prints one summary line per method (label, runs needed per seed) for `grid`.
void PrintMethodSummaries(const Grid& grid, const Options& options,
                          const std::vector<std::pair<const char*, std::vector<double>*>>& runs) {
  for (auto [label, v] : runs) {
    std::printf(
        "# %s %s: runs to within %.0f%%: median %.1f, quartiles %.1f-%.1f, mean %.2f, "
        "max %.0f over %d seeds\n",
        grid.label.c_str(), label, 100 * options.within, tuner::bench::Median(*v),
        Quantile(*v, 0.25), Quantile(*v, 0.75),
        std::accumulate(v->begin(), v->end(), 0.0) / v->size(),
        *std::max_element(v->begin(), v->end()), options.seeds);
  }
}

// Prints the figures of one workload from the median runs of each method. Targets:
// multi-fidelity within 8 runs, and within half of measured-only BO's runs.
void PrintFigures(const std::string& workload, double mf_median, double bo_median,
                  double random_median) {
  const std::string prefix = "tuner.real_task." + workload;
  bench::PrintFigure({.bench = prefix + ".multi_fidelity_runs",
                      .value = mf_median,
                      .unit = "runs",
                      .anchor = "target",
                      .anchor_value = 8.0,
                      .target = bench::RatioAtMost(1.0)});
  bench::PrintFigure({.bench = prefix + ".multi_fidelity_runs",
                      .value = mf_median,
                      .unit = "runs",
                      .anchor = "measured_bo_runs",
                      .anchor_value = bo_median,
                      .target = bench::RatioAtMost(0.5)});
  bench::PrintFigure({.bench = prefix + ".measured_bo_runs",
                      .value = bo_median,
                      .unit = "runs",
                      .anchor = "random_runs",
                      .anchor_value = random_median});
}

// Builds the task of `grid`, runs the three methods over the seeds and prints their summaries
// and figures. Returns BuildTask's error, if any, before running anything.
Status BenchGrid(Store& store, const Grid& grid, const Options& options) {
  Task task;
  AUTOTUNE_RETURN_IF_ERROR(BuildTask(store, grid, options, &task));
  std::vector<double> mf =
      OverSeeds(options, [&](uint64_t s) { return RunBayes(task, options, s, true); });
  std::vector<double> bo =
      OverSeeds(options, [&](uint64_t s) { return RunBayes(task, options, s, false); });
  std::vector<double> rnd =
      OverSeeds(options, [&](uint64_t s) { return RunRandom(task, options, s); });
  PrintMethodSummaries(grid, options,
                       {{"multi_fidelity", &mf}, {"measured_bo", &bo}, {"random", &rnd}});
  PrintFigures(grid.runs.front().workload.name, tuner::bench::Median(mf), tuner::bench::Median(bo),
               tuner::bench::Median(rnd));
  return Status::Ok();
}

int Main(int argc, char** argv) {
  Options options;
  if (int code = ParseArgs(argc, argv, &options); code != 0) return code;
  std::unique_ptr<Store> store;
  std::vector<Grid> grids;
  Status status = OpenGrids(options, &store, &grids);
  if (!status.ok()) {
    std::fprintf(stderr, "bench_tuner_real_task: %s\n", status.message().c_str());
    return 1;
  }
  if (grids.empty()) {
    std::fprintf(stderr,
                 "bench_tuner_real_task: %s holds no grid of at least 8 measured "
                 "settings with a default-knob run; run bench/tuner/real_task.sh\n",
                 options.db.c_str());
    return 1;
  }
  for (const Grid& grid : grids) {
    status = BenchGrid(*store, grid, options);
    if (!status.ok()) {
      std::fprintf(stderr, "bench_tuner_real_task: %s: %s\n", grid.label.c_str(),
                   status.message().c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace
}  // namespace autotune

int main(int argc, char** argv) { return autotune::Main(argc, argv); }
