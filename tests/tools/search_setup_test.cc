// The one search set-up (tools/search/setup.h) and the flags `search` and `record --autotune`
// share (tools/search/tuning_flags.h): hand-derived spaces, bases and options for runs of each
// kind, the stored samples a search learns from, and --autotune's list of online knobs.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "store/store.h"
#include "tests/support/cli.h"
#include "tools/search/setup.h"
#include "tools/search/tuning_flags.h"
#include "traces/knob_table.h"

namespace autotune::cli {
namespace {

using Names = std::set<std::string>;

// The knobs the space lets the search move.
Names FreeNames(const tuner::Space& space) {
  Names names;
  for (int i = 0; i < space.num_dimensions(); ++i) {
    if (!space.is_constant(i)) names.insert(space.dimension(i).name);
  }
  return names;
}

// The setting the space holds at its default point over `base`.
Knobs DefaultKnobs(const SearchSetup& setup) {
  Knobs knobs;
  EXPECT_TRUE(tuner::PointToKnobs(setup.space, setup.space.Default(), setup.base, &knobs).ok());
  return knobs;
}

// A run the executor recorded on mpi on 2 nodes of 2 ranks with num_groups 4 and a 2 ms cycle
// (no workload or step time: nothing else shapes its space).
RunInfo RecordedRun() {
  RunInfo run;
  run.kind = RunKind::kMeasured;
  run.backend = BackendKind::kMpi;
  run.topology.nodes = 2;
  run.topology.ranks_per_node = 2;
  run.knobs.num_groups = 4;
  run.knobs.cycle_time_ms = 2.0;
  return run;
}

const Names kHorovodRuntime = {"fusion_threshold_mb", "cycle_time_ms", "cache_capacity",
                               "hierarchical_allreduce", "hierarchical_allgather"};

TEST(SearchSetupTest, NumGroupsIsHeldAtTheRunsValueUnlessRequested) {
  const RunInfo run = RecordedRun();
  SearchSetup setup;
  ASSERT_TRUE(SetUpSearch(run, SearchRequest(), &setup).ok());
  EXPECT_EQ(setup.base.num_groups, 4);
  EXPECT_EQ(DefaultKnobs(setup).num_groups, 4);
  // The other knobs start from the defaults, not the run's.
  EXPECT_EQ(setup.base.cycle_time_ms, 1.0);
  EXPECT_EQ(FreeNames(setup.space), kHorovodRuntime);
  EXPECT_FALSE(setup.scope.tune_on_request);

  SearchRequest requested;
  requested.tune_on_request = true;  // --tune-groups
  ASSERT_TRUE(SetUpSearch(run, requested, &setup).ok());
  EXPECT_EQ(setup.base.num_groups, 0);
  Names with_groups = kHorovodRuntime;
  with_groups.insert("num_groups");
  EXPECT_EQ(FreeNames(setup.space), with_groups);
  EXPECT_TRUE(setup.scope.tune_on_request);

  SearchRequest given;  // --num-groups 2
  given.knobs.num_groups = 2;
  given.constants = {"num_groups"};
  ASSERT_TRUE(SetUpSearch(run, given, &setup).ok());
  EXPECT_EQ(setup.base.num_groups, 2);
  EXPECT_EQ(DefaultKnobs(setup).num_groups, 2);
  EXPECT_EQ(FreeNames(setup.space), kHorovodRuntime);
}

TEST(SearchSetupTest, TheTargetComesFromTheRunUnlessGiven) {
  RunInfo run = RecordedRun();
  EXPECT_EQ(TargetOf(run), tuner::Target::kExecutor);
  run.backend = BackendKind::kNccl;
  EXPECT_EQ(TargetOf(run), tuner::Target::kNccl);
  run.kind = RunKind::kImported;
  EXPECT_EQ(TargetOf(run), tuner::Target::kNccl);
  run.backend = BackendKind::kMpi;
  EXPECT_EQ(TargetOf(run), tuner::Target::kCpu);

  // An imported MPI run: Horovod on CPUs has no hierarchical collectives.
  SearchSetup setup;
  ASSERT_TRUE(SetUpSearch(run, SearchRequest(), &setup).ok());
  EXPECT_EQ(setup.scope.target, tuner::Target::kCpu);
  EXPECT_EQ(FreeNames(setup.space),
            (Names{"fusion_threshold_mb", "cycle_time_ms", "cache_capacity"}));
  // --target executor.
  SearchRequest request;
  request.target = tuner::Target::kExecutor;
  ASSERT_TRUE(SetUpSearch(run, request, &setup).ok());
  EXPECT_EQ(setup.scope.target, tuner::Target::kExecutor);
  EXPECT_EQ(FreeNames(setup.space), kHorovodRuntime);
}

TEST(SearchSetupTest, OfflineAndOnlineSearchesMoveAndStopAsTheirCommandsDo) {
  RunInfo run = RecordedRun();
  SearchRequest request;
  request.tuning.max_samples = 7;
  request.tuning.gp_noise = 0.5;
  request.tuning.seed = 9;
  request.min_expected_improvement_ratio = 0.01;
  SearchSetup setup;
  ASSERT_TRUE(SetUpSearch(run, request, &setup).ok());
  EXPECT_EQ(setup.options.stop.max_measured_samples, 7);
  EXPECT_EQ(setup.options.stop.min_expected_improvement_ratio, 0.01);
  EXPECT_EQ(setup.options.refit_period, 20);
  EXPECT_EQ(setup.options.seed, 9u);
  EXPECT_EQ(setup.options.model.residual_gp.fixed_noise_stddev, 0.5);
  EXPECT_EQ(setup.options.model.residual_gp.seed, 9u);
  EXPECT_EQ(setup.options.model.simulated_gp.seed, 9u);
  // The backend's algorithm knob stays unless asked (--tune-backend-knobs).
  EXPECT_EQ(FreeNames(setup.space).count("mpi_allreduce_algorithm"), 0u);
  request.tune_backend_knobs = true;
  ASSERT_TRUE(SetUpSearch(run, request, &setup).ok());
  EXPECT_EQ(FreeNames(setup.space).count("mpi_allreduce_algorithm"), 1u);

  // record --autotune on nccl: the runtime knobs move, not the per-launch NCCL ones, and the
  // sample budget alone stops it.
  run.backend = BackendKind::kNccl;
  SearchRequest online;
  online.mode = SearchMode::kOnline;
  online.knobs = run.knobs;
  online.target = tuner::Target::kExecutor;
  online.tuning.max_samples = 5;
  online.tune_backend_knobs = true;  // no effect online
  ASSERT_TRUE(SetUpSearch(run, online, &setup).ok());
  EXPECT_EQ(FreeNames(setup.space), kHorovodRuntime);
  EXPECT_EQ(setup.base, run.knobs);
  EXPECT_EQ(setup.options.stop.max_measured_samples, 5);
  EXPECT_EQ(setup.options.stop.min_expected_improvement_ratio, 0.0);
  EXPECT_EQ(setup.options.refit_period, 10);
  // A constant runtime knob stays.
  online.constants = {"cycle_time_ms"};
  ASSERT_TRUE(SetUpSearch(run, online, &setup).ok());
  EXPECT_EQ(FreeNames(setup.space).count("cycle_time_ms"), 0u);
  EXPECT_EQ(DefaultKnobs(setup).cycle_time_ms, 2.0);
}

// The job shapes the space: the run's topology, tensors and step time reach it (the shapes
// themselves are tests/tuner/job_space_test.cc's).
TEST(SearchSetupTest, TheRunsJobShapesTheSpace) {
  RunInfo run = RecordedRun();
  run.workload.tensors = {{.name = "a", .shape = {256}}, {.name = "b", .shape = {256}}};
  run.step_ms_median = 40.0;
  EXPECT_EQ(JobFactsOf(run).step_ms, 40.0);
  run.untraced_step_ms = 30.0;  // the production step time wins where the import was given it
  EXPECT_EQ(JobFactsOf(run).step_ms, 30.0);
  EXPECT_EQ(JobFactsOf(run).workload.tensors.size(), 2u);
  ASSERT_TRUE(JobFactsOf(run).topology.has_value());
  EXPECT_EQ(JobFactsOf(run).topology->key(), "2x2");

  SearchSetup setup;
  ASSERT_TRUE(SetUpSearch(run, SearchRequest(), &setup).ok());
  const tuner::Dimension& cycle = setup.space.dimension(setup.space.IndexOf("cycle_time_ms"));
  EXPECT_EQ(cycle.upper, 30.0);
  // The two 1 KiB tensors: no fusion, or both (2048 B = 0.001953125 MB, 0.00195313 at the
  // knob's precision rounded up).
  const tuner::Dimension& fusion =
      setup.space.dimension(setup.space.IndexOf("fusion_threshold_mb"));
  EXPECT_EQ(fusion.scale, tuner::Scale::kZeroOrLog);
  EXPECT_EQ(fusion.lower, std::strtod("0.00195313", nullptr));
  EXPECT_EQ(fusion.upper, fusion.lower);
  Names shaped;
  for (const tuner::KnobShape& s : setup.shape.knobs) shaped.insert(s.knob);
  // The job allgathers nothing: hierarchical allgather is held.
  EXPECT_EQ(shaped, (Names{"fusion_threshold_mb", "cycle_time_ms", "cache_capacity",
                           "hierarchical_allgather"}));
  EXPECT_EQ(FreeNames(setup.space),
            (Names{"fusion_threshold_mb", "cycle_time_ms", "cache_capacity",
                   "hierarchical_allreduce"}));

  // One node: no hierarchical knob moves.
  run.topology.nodes = 1;
  run.topology.ranks_per_node = 4;
  ASSERT_TRUE(SetUpSearch(run, SearchRequest(), &setup).ok());
  EXPECT_EQ(FreeNames(setup.space),
            (Names{"fusion_threshold_mb", "cycle_time_ms", "cache_capacity"}));
}

TEST(SearchSetupTest, ADdpRunSearchesDdpsKnobs) {
  RunInfo run = RecordedRun();
  run.framework = Framework::kDdp;
  SearchSetup setup;
  ASSERT_TRUE(SetUpSearch(run, SearchRequest(), &setup).ok());
  EXPECT_EQ(setup.scope.framework, Framework::kDdp);
  EXPECT_EQ(FreeNames(setup.space),
            (Names{"ddp_bucket_cap_mb", "ddp_first_bucket_mb", "ddp_gradient_as_bucket_view"}));
}

TEST(SearchSetupTest, AConstantWithNoPlaceInTheSpaceIsNamed) {
  RunInfo run = RecordedRun();
  run.backend = BackendKind::kNccl;
  SearchRequest request;
  request.knobs.nccl_algo = "bogus";
  request.constants = {"nccl_algo"};
  SearchSetup setup;
  const Status refused = SetUpSearch(run, request, &setup);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.message().rfind("constant nccl_algo", 0), 0u) << refused.message();
}

// A run of "toy" on 1x2 at `scale` whose steps took `step_ms`; complete, so a measured sample
// of its knobs unless it holds samples of its own.
// An import (kind imported) given `untraced_step_ms` when positive.
int64_t AddRun(Store* store, double scale, const std::vector<double>& step_ms,
               RunKind kind = RunKind::kMeasured, double untraced_step_ms = 0.0) {
  RunInfo run;
  run.kind = kind;
  run.untraced_step_ms = untraced_step_ms;
  run.workload.name = "toy";
  run.workload.tensors.push_back({.name = "w", .shape = {250}});
  run.topology.nodes = 1;
  run.topology.ranks_per_node = 2;
  run.scale = scale;
  const Status created = store->CreateRun(&run);
  EXPECT_TRUE(created.ok()) << created.message();
  for (size_t i = 0; i < step_ms.size(); ++i) {
    StepTrace step;
    step.step = static_cast<int>(i);
    step.step_ms = step_ms[i];
    step.bytes = 1000;
    step.score_bytes_per_s = 1000 / step_ms[i] * 1e3;
    EXPECT_TRUE(store->AppendStep(run.id, step).ok());
  }
  return run.id;
}

TEST(SearchSetupTest, StoredSamplesAreTheRunsOwnAndStepsOnlyOfWholeRuns) {
  testing::TempDir dir;
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(dir.File("runs.db"), Store::Mode::kReadWrite, &store).ok());
  const int64_t whole = AddRun(store.get(), 1.0, {10.0, 12.0});
  ASSERT_TRUE(store->FinishRun(whole, true).ok());
  const int64_t other_scale = AddRun(store.get(), 0.5, {5.0});
  ASSERT_TRUE(store->FinishRun(other_scale, true).ok());
  // A run tuned online: two settings' samples, their steps mixed in one series.
  const int64_t tuned = AddRun(store.get(), 1.0, {20.0, 21.0});
  RunInfo toy;
  ASSERT_TRUE(store->GetRun(whole, &toy).ok());
  std::vector<Sample> samples(2);
  for (Sample& sample : samples) {
    sample.fidelity = Fidelity::kMeasured;
    sample.run_id = tuned;
    sample.trace_run_id = tuned;
    sample.workload = "toy";
    sample.topology = toy.topology;
    sample.score_bytes_per_s = 1e5;
  }
  samples[1].knobs.cycle_time_ms = 5.0;
  ASSERT_TRUE(store->AddSamples(&samples).ok());
  ASSERT_TRUE(store->FinishRun(tuned, true).ok());

  StoredSamples stored;
  ASSERT_TRUE(LoadStoredSamples(*store, toy, &stored).ok());
  EXPECT_EQ(stored.measured.size(), 3u);  // the whole run's and the tuned run's two
  EXPECT_EQ(stored.other_measured, 1);    // the run at scale 0.5
  ASSERT_EQ(stored.steps.size(), 1u);
  EXPECT_EQ(stored.steps[0].step_ms, (std::vector<double>{10.0, 12.0}));

  // The search observes those whose knobs fit its space: with cycle_time_ms a constant at 1
  // ms, the tuned run's 5 ms sample is left out.
  SearchRequest request;
  request.constants = {"cycle_time_ms"};
  SearchSetup setup;
  ASSERT_TRUE(SetUpSearch(toy, request, &setup).ok());
  tuner::KnobSearch search(setup.space, setup.base, setup.options);
  StatusOr<int> left_out = ObserveStored(stored.measured, &search);
  ASSERT_TRUE(left_out.ok()) << left_out.status().message();
  EXPECT_EQ(*left_out, 1);
  EXPECT_EQ(search.measured(), 2);
}

// Traced imports and production imports are not compared: once one import holds its
// production step time, the traced-only imports' samples are left out, and the production
// one's sample is the production job's (as the verdict's step times are).
TEST(SearchSetupTest, ProductionImportsAloneAreLearnedFromOnceOneExists) {
  testing::TempDir dir;
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(dir.File("runs.db"), Store::Mode::kReadWrite, &store).ok());
  const int64_t traced = AddRun(store.get(), 1.0, {10.0, 12.0}, RunKind::kImported);
  ASSERT_TRUE(store->FinishRun(traced, true).ok());
  RunInfo toy;
  ASSERT_TRUE(store->GetRun(traced, &toy).ok());
  StoredSamples alone;
  ASSERT_TRUE(LoadStoredSamples(*store, toy, &alone).ok());
  EXPECT_EQ(alone.measured.size(), 1u);  // traced only: kept
  EXPECT_EQ(alone.traced_left_out, 0);

  const int64_t production = AddRun(store.get(), 1.0, {8.0, 8.0}, RunKind::kImported, 16.0);
  ASSERT_TRUE(store->FinishRun(production, true).ok());
  const int64_t recorded = AddRun(store.get(), 1.0, {9.0});
  ASSERT_TRUE(store->FinishRun(recorded, true).ok());
  StoredSamples stored;
  ASSERT_TRUE(LoadStoredSamples(*store, toy, &stored).ok());
  ASSERT_EQ(stored.measured.size(), 2u);
  EXPECT_EQ(stored.traced_left_out, 1);
  EXPECT_EQ(stored.measured[0].run_id, production);
  EXPECT_EQ(stored.measured[1].run_id, recorded);
  // 1000 bytes a step over the 16 ms production step, not the traced 8 ms.
  EXPECT_DOUBLE_EQ(stored.measured[0].score_bytes_per_s, 1000 / 0.016);
  ASSERT_EQ(stored.steps.size(), 1u);  // the verdict's: the production run's alone
  EXPECT_EQ(stored.steps[0].step_ms, (std::vector<double>{16.0, 16.0}));
}

// --autotune's help names the knobs the online search moves in a Horovod run: the table's
// runtime Horovod knobs, the two hierarchical ones written as one.
TEST(TuningFlagsTest, AutotuneHelpListsTheOnlineKnobs) {
  EXPECT_EQ(OnlineKnobList(),
            "fusion_threshold_mb, cycle_time_ms, cache_capacity, "
            "hierarchical_allreduce/allgather");
  for (const KnobSpec& spec : KnobTable()) {
    if (spec.lifetime != KnobLifetime::kRuntime || !KnobInFramework(spec, Framework::kHorovod)) {
      continue;
    }
    const std::string name = spec.name;
    const std::string last_word = name.substr(name.rfind('_') + 1);
    EXPECT_TRUE(OnlineKnobList().find(name) != std::string::npos ||
                OnlineKnobList().find("/" + last_word) != std::string::npos)
        << name;
  }
  const testing::CommandResult help = testing::RunAutotune("record --help");
  ASSERT_EQ(help.exit_code, 0) << help.err;
  EXPECT_NE(help.out.find("rank 0 runs the GP tuner over fusion_threshold_mb, cycle_time_ms, "
                          "cache_capacity, hierarchical_allreduce/allgather (knobs given"),
            std::string::npos)
      << help.out;
}

// Each command gets its own names and help for the shared flags, and both parse into the
// same fields.
TEST(TuningFlagsTest, EachCommandGetsItsNamesAndBothFillTheSameFields) {
  for (TuningCommand command : {TuningCommand::kSearch, TuningCommand::kRecordAutotune}) {
    CLI::App app;
    TuningFlags flags;
    AddTuningFlags(&app, command,
                   {TuningFlag::kMaxSamples, TuningFlag::kGpNoise, TuningFlag::kSeed,
                    TuningFlag::kLogFile, TuningFlag::kWarmupSamples, TuningFlag::kStepsPerSample,
                    TuningFlag::kWarmupTime, TuningFlag::kSamplingConfidenceTime},
                   &flags);
    const bool search = command == TuningCommand::kSearch;
    const std::string args = std::string("--autotune-max-samples 7 ") +
                             "--autotune-gaussian-process-noise 0.5 " +
                             (search ? "--seed 9 " : "--autotune-seed 9 ") +
                             "--autotune-log-file log.csv --autotune-warmup-samples 2 "
                             "--autotune-steps-per-sample 4 --autotune-warmup-time-s 1.5 "
                             "--autotune-sampling-confidence-time-s 2.5";
    ASSERT_NO_THROW(app.parse(args, false));
    EXPECT_EQ(flags.max_samples, 7);
    EXPECT_EQ(flags.gp_noise, 0.5);
    EXPECT_EQ(flags.seed, 9u);
    EXPECT_EQ(flags.log_file, "log.csv");
    EXPECT_EQ(flags.warmup_samples, 2);
    EXPECT_EQ(flags.steps_per_sample, 4);
    EXPECT_EQ(flags.warmup_time_s, 1.5);
    EXPECT_EQ(flags.sampling_confidence_time_s, 2.5);
    EXPECT_TRUE(flags.time_based());
    EXPECT_EQ(app.get_option_no_throw("--max-samples") != nullptr, search);
    EXPECT_EQ(app.get_option_no_throw("--seed") != nullptr, search);
    EXPECT_EQ(app.get_option_no_throw("--autotune-seed") != nullptr, !search);
  }
}

}  // namespace
}  // namespace autotune::cli
