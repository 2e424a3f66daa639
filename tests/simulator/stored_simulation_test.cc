// LoadSimulation: one loader of "the simulation of stored run N", one not-found message.
#include "simulator/stored_simulation.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "store/store.h"
#include "tests/support/sim_fixtures.h"
#include "tests/support/synthetic.h"

namespace autotune::sim {
namespace {

using testing::Topo;

class StoredSimulationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("autotune_stored_simulation_test_" + std::to_string(getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    db_ = (dir_ / "runs.db").string();
    ASSERT_TRUE(Store::Open(db_, Store::Mode::kReadWrite, &store_).ok());
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  NetworkModel Network() const {
    return NetworkModel::FromParams(NetworkParams::Uniform(40, 115), Topo(2, 2));
  }

  // A complete synthetic measured run of scaled resnet50 on 2x2; its id. `kind` and
  // `framework` say where it came from; `knobs` are those it ran with, over `steps` steps.
  // edit, where given, changes the run before it is stored.
  int64_t AddRun(RunKind kind = RunKind::kMeasured, Framework framework = Framework::kHorovod,
                 const Knobs& knobs = Knobs(), int steps = 2,
                 const std::function<void(RunInfo*)>& edit = nullptr) {
    Workload w;
    EXPECT_TRUE(BuiltinWorkload("resnet50", &w).ok());
    EXPECT_TRUE(ScaleWorkload(0.02, &w).ok());
    Trace trace;
    SyntheticTraceOptions options;
    options.steps = steps;
    const NetworkModel net = Network();
    EXPECT_TRUE(
        SynthesizeTrace(w, knobs, net, NegotiationModel::Prior(net, 161), options, &trace).ok());
    RunInfo run = trace.run;
    run.kind = kind;
    run.framework = framework;
    if (edit) edit(&run);
    EXPECT_TRUE(store_->CreateRun(&run).ok());
    for (const StepTrace& s : trace.steps) EXPECT_TRUE(store_->AppendStep(run.id, s).ok());
    EXPECT_TRUE(store_->FinishRun(run.id, true).ok());
    return run.id;
  }

  std::filesystem::path dir_;
  std::string db_;
  std::unique_ptr<Store> store_;
};

TEST_F(StoredSimulationTest, MissingCalibrationIsOneNotFoundEitherWay) {
  const int64_t run = AddRun();
  const std::string message = "no calibration for topology 2x2 (mpi) in " + db_ +
                              "; make one with: mpirun -np 4 --hostfile HOSTS autotune "
                              "calibrate --db " +
                              db_ + " (2 nodes x 2 ranks)";
  StoredSimulation loaded;
  Status s = LoadSimulation(*store_, run, {}, IfUncalibrated::kFail, &loaded);
  EXPECT_EQ(s.code(), Status::Code::kNotFound);
  EXPECT_EQ(s.message(), message);
  s = LoadSimulation(*store_, run, {}, IfUncalibrated::kNoSimulation, &loaded);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_FALSE(loaded.simulation.has_value());
  EXPECT_EQ(loaded.run.id, run);
  EXPECT_EQ(loaded.network.missing.code(), Status::Code::kNotFound);
  EXPECT_EQ(loaded.network.missing.message(), message);
}

TEST_F(StoredSimulationTest, BuildsTheSimulationForTheTarget) {
  const int64_t run = AddRun();
  Calibration calibration = SynthesizeCalibration(Network());
  ASSERT_TRUE(store_->SaveCalibration(&calibration).ok());
  StoredSimulation loaded;
  Status s = LoadSimulation(*store_, run, {}, IfUncalibrated::kFail, &loaded);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_TRUE(loaded.simulation.has_value());
  EXPECT_TRUE(loaded.network.missing.ok());
  EXPECT_EQ(loaded.network.calibration.id, calibration.id);
  EXPECT_EQ(loaded.simulation->topology().key(), "2x2");
  EXPECT_EQ(loaded.simulation->trace().steps().size(), 2u);
  s = LoadSimulation(*store_, run, {4, 0}, IfUncalibrated::kFail, &loaded);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(loaded.simulation->topology().key(), "4x2");
  EXPECT_TRUE(loaded.simulation->topology().hosts.empty());
}

// An imported job's own collectives are its network model; with a calibrate of the same
// library they are merged, while a DDP job on CPUs (gloo) does not take a calibrate of Open MPI.
// The calibrate here is 10x slower than the network the runs were synthesized on, so which one
// the model follows shows in a predicted collective.
TEST_F(StoredSimulationTest, ADdpJobOnCpusDoesNotTakeACalibrateOfOpenMpi) {
  Calibration calibration = SynthesizeCalibration(
      NetworkModel::FromParams(NetworkParams::Uniform(400, 11.5), Topo(2, 2)));
  ASSERT_TRUE(store_->SaveCalibration(&calibration).ok());
  const double own_us = Network().FlatUs(Op::kAllreduce, 1 << 20);

  const int64_t horovod = AddRun(RunKind::kImported, Framework::kHorovod);
  StoredSimulation loaded;
  Status s = LoadSimulation(*store_, horovod, {}, IfUncalibrated::kFail, &loaded);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(loaded.network.measured_calibration);
  EXPECT_NE(loaded.network.source.find("calibration " + std::to_string(calibration.id) +
                                       " (mpi) elsewhere"),
            std::string::npos)
      << loaded.network.source;

  const int64_t ddp = AddRun(RunKind::kImported, Framework::kDdp);
  s = LoadSimulation(*store_, ddp, {}, IfUncalibrated::kFail, &loaded);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_FALSE(loaded.network.measured_calibration);
  EXPECT_EQ(loaded.network.source,
            "the own collectives of run " + std::to_string(ddp) +
                " (DDP's gloo allreduce; calibration " + std::to_string(calibration.id) +
                " measured Open MPI's, another library: not used; `autotune calibrate "
                "--backend gloo` measures gloo's)");
  EXPECT_EQ(loaded.simulation->options().launch_cpu_us, 0.0);  // its own latency: not again
  // The synthesized 1 MiB allreduce, not the calibrate's 10x slower one.
  const double predicted_us =
      loaded.simulation->network().FlatUs(Op::kAllreduce, 1 << 20);
  EXPECT_NEAR(predicted_us, own_us, 0.05 * own_us);
}

// A calibrate of Open MPI on host memory times its collectives on idle cores; a Horovod job's
// own ran beside its compute. Merged, the calibrate gives the sizes the job lacks at the job's
// level. The calibrate here is the network the runs were synthesized on at twice every time
// (twice the latency, half the bandwidth), so the job's collectives took half of it at every
// size: its 1 KiB allreduce (below the job's own sizes) is predicted at the job's own, not at
// the calibrate's. On NCCL the calibrate keeps its level (its collectives run on the GPU).
TEST_F(StoredSimulationTest, AHorovodJobOnOpenMpiTakesItsCalibrateAtItsOwnLevel) {
  Calibration calibration = SynthesizeCalibration(
      NetworkModel::FromParams(NetworkParams::Uniform(80, 57.5), Topo(2, 2)));
  ASSERT_TRUE(store_->SaveCalibration(&calibration).ok());
  const int64_t horovod = AddRun(RunKind::kImported, Framework::kHorovod);
  StoredSimulation loaded;
  Status s = LoadSimulation(*store_, horovod, {}, IfUncalibrated::kFail, &loaded);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_NEAR(loaded.network.agreement.time_ratio, 0.5, 0.02);
  EXPECT_NE(loaded.network.source.find(" (mpi) elsewhere, scaled by 0.50 to the job's level"),
            std::string::npos)
      << loaded.network.source;
  const double own_us = Network().FlatUs(Op::kAllreduce, 1024);
  EXPECT_NEAR(loaded.simulation->network().FlatUs(Op::kAllreduce, 1024), own_us, 0.05 * own_us);

  Calibration nccl = calibration;
  nccl.backend = BackendKind::kNccl;
  ASSERT_TRUE(store_->SaveCalibration(&nccl).ok());
  const int64_t on_gpus = AddRun(RunKind::kImported, Framework::kHorovod, Knobs(), 2,
                                 [](RunInfo* run) { run->backend = BackendKind::kNccl; });
  s = LoadSimulation(*store_, on_gpus, {}, IfUncalibrated::kFail, &loaded);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_NE(loaded.network.source.find(" (nccl) elsewhere; the job's"), std::string::npos)
      << loaded.network.source;
  const double calibrate_us = 2.0 * own_us;
  EXPECT_NEAR(loaded.simulation->network().FlatUs(Op::kAllreduce, 1024), calibrate_us,
              0.05 * calibrate_us);
}

// A gloo calibrate (`calibrate --backend gloo`) is a DDP job's on CPUs, taken over Open MPI's,
// and Horovod's jobs do not take it: merged with the job's own collectives as a Horovod job's
// calibrate is, it gives the sizes they lack (with one size of their own, no latency), scaled
// to the job's level where both measured. The gloo calibrate has 10x the latency of the
// network the runs were synthesized on and 0.8x its bandwidth (Open MPI's is 100x slower), so
// its curve shows at 1 KiB, and the job's level is about 0.77 of it at the runs' fused size
// (about 2 MB: 160 + 26,087 us against 1,600 + 32,609 us).
TEST_F(StoredSimulationTest, ADdpJobOnCpusTakesAGlooCalibrateBesideItsOwnCollectives) {
  Calibration mpi = SynthesizeCalibration(
      NetworkModel::FromParams(NetworkParams::Uniform(4000, 1.15), Topo(2, 2)));
  ASSERT_TRUE(store_->SaveCalibration(&mpi).ok());
  const NetworkModel gloo_network =
      NetworkModel::FromParams(NetworkParams::Uniform(400, 92), Topo(2, 2));
  Calibration gloo = SynthesizeCalibration(gloo_network);
  gloo.backend = BackendKind::kGloo;
  ASSERT_TRUE(store_->SaveCalibration(&gloo).ok());
  const double own_us = Network().FlatUs(Op::kAllreduce, 1024);
  const double gloo_us = gloo_network.FlatUs(Op::kAllreduce, 1024);
  ASSERT_GT(gloo_us, 5 * own_us);  // the two are apart at 1 KiB

  // One collective a step (a cycle of 100 ms, longer than the step, fuses every tensor), 4
  // steps: one size, 4 collectives (3 are the least a self-calibration takes).
  Knobs one_cycle;
  one_cycle.cycle_time_ms = 100;
  const int64_t one_size = AddRun(RunKind::kImported, Framework::kDdp, one_cycle, 4);
  StoredSimulation loaded;
  Status s = LoadSimulation(*store_, one_size, {}, IfUncalibrated::kFail, &loaded);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(loaded.network.measured_calibration);
  EXPECT_EQ(loaded.network.calibration.id, gloo.id);
  EXPECT_EQ(loaded.network.source.rfind("the own collectives of run " +
                                            std::to_string(one_size) + " where they measured (",
                                        0),
            0u)
      << loaded.network.source;
  const double level = loaded.network.agreement.time_ratio;
  EXPECT_GT(level, 0.7);
  EXPECT_LT(level, 0.85);
  char scaled[64];
  std::snprintf(scaled, sizeof(scaled), ", scaled by %.2f to the job's level", level);
  for (const std::string& part : {"calibration " + std::to_string(gloo.id) + " (gloo) elsewhere" +
                                      scaled,
                                  std::string("over their time (1 sizes")}) {
    EXPECT_NE(loaded.network.source.find(part), std::string::npos) << loaded.network.source;
  }
  EXPECT_NEAR(loaded.simulation->network().FlatUs(Op::kAllreduce, 1024), level * gloo_us,
              0.05 * level * gloo_us);

  // With the default cycle the job's collectives come in several sizes (pooled with the run
  // above): merged the same way, the job's own where they measured, gloo's at 1 KiB at the
  // job's level.
  const int64_t sizes = AddRun(RunKind::kImported, Framework::kDdp);
  s = LoadSimulation(*store_, sizes, {}, IfUncalibrated::kFail, &loaded);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(loaded.network.measured_calibration);
  EXPECT_NE(loaded.network.source.find("calibration " + std::to_string(gloo.id) +
                                       " (gloo) elsewhere"),
            std::string::npos)
      << loaded.network.source;
  EXPECT_EQ(loaded.network.self_calibration_runs, (std::vector<int64_t>{sizes, one_size}));
  const double pooled_level = loaded.network.agreement.time_ratio;
  EXPECT_GT(pooled_level, 0.7);
  EXPECT_LT(pooled_level, 0.85);
  EXPECT_NEAR(loaded.simulation->network().FlatUs(Op::kAllreduce, 1024), pooled_level * gloo_us,
              0.05 * pooled_level * gloo_us);
  // Its launches beside the compute cost the compute the model's fixed cost of an allreduce
  // (ReplayOptions::launch_cpu_us): positive here, none for a Horovod job or without gloo's.
  EXPECT_GT(loaded.simulation->options().launch_cpu_us, 0.0);

  // A Horovod job of the same shape on MPI takes Open MPI's calibrate, not gloo's.
  const int64_t horovod = AddRun(RunKind::kImported, Framework::kHorovod);
  s = LoadSimulation(*store_, horovod, {}, IfUncalibrated::kFail, &loaded);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(loaded.network.calibration.id, mpi.id);
  EXPECT_EQ(loaded.simulation->options().launch_cpu_us, 0.0);
}

// Two imported runs of one job, traced at a cost of 10% and of 2% of their production step
// on 4 ranks over 2 cores: each one's collectives are brought to the tracer of the run
// simulated before they are pooled (TracerCommScale: (4 + 0.4) / (4 + 0.08)), and the source
// says by how much.
TEST_F(StoredSimulationTest, AnotherRunsCollectivesAreBroughtToTheSimulatedRunsTracingCost) {
  auto traced = [](double traced_ms) {
    return [traced_ms](RunInfo* run) {
      run->host.cores = 2;
      run->host.nodes_per_host = 2;
      run->traced_step_ms = traced_ms;
      run->untraced_step_ms = 1000.0;
    };
  };
  const int64_t costly =
      AddRun(RunKind::kImported, Framework::kHorovod, Knobs(), 2, traced(1100.0));
  const int64_t cheap = AddRun(RunKind::kImported, Framework::kHorovod, Knobs(), 2, traced(1020.0));
  RunInfo info;
  NetworkChoice of_costly, of_cheap;
  ASSERT_TRUE(store_->GetRun(costly, &info).ok());
  ASSERT_TRUE(NetworkOfRun(*store_, info, &of_costly).ok());
  ASSERT_TRUE(store_->GetRun(cheap, &info).ok());
  ASSERT_TRUE(NetworkOfRun(*store_, info, &of_cheap).ok());
  EXPECT_NE(of_costly.source.find("(run " + std::to_string(cheap) +
                                  "'s collectives at 1.078x: to run " + std::to_string(costly) +
                                  "'s tracing cost)"),
            std::string::npos)
      << of_costly.source;
  EXPECT_NE(of_cheap.source.find("(run " + std::to_string(costly) + "'s collectives at 0.927x"),
            std::string::npos)
      << of_cheap.source;
  // The two runs' collectives took the same times (one synthetic job): each pooled point is
  // (1 + s) / 2 of them for the costly run's simulation and (1 + 1 / s) / 2 for the cheap
  // run's, s = 4.4 / 4.08; so the first is s times the second, point by point.
  const double s = 4.4 / 4.08;
  const std::vector<CalibrationPoint>& pooled = of_costly.calibration.points;
  ASSERT_EQ(pooled.size(), of_cheap.calibration.points.size());
  ASSERT_FALSE(pooled.empty());
  for (size_t i = 0; i < pooled.size(); ++i) {
    EXPECT_NEAR(pooled[i].median_us / of_cheap.calibration.points[i].median_us, s, 1e-9) << i;
  }
}

// A job's runs at another Open MPI eager limit show what that limit does to its collectives
// (eager_limit.h), not what they take at its own: the self-calibration pools only the runs at
// the simulated run's own effective limit (65536 and 0 are both Open MPI's own,
// traces/knob_table.h).
TEST_F(StoredSimulationTest, TheOwnCollectivesArePooledOnlyFromRunsAtTheSameEagerLimit) {
  auto at_limit = [](int limit) {
    return [limit](RunInfo* run) { run->knobs.mpi_tcp_eager_limit = limit; };
  };
  const int64_t a = AddRun(RunKind::kImported, Framework::kHorovod, Knobs(), 2, at_limit(0));
  const int64_t b = AddRun(RunKind::kImported, Framework::kHorovod, Knobs(), 2, at_limit(65536));
  const int64_t c = AddRun(RunKind::kImported, Framework::kHorovod, Knobs(), 2, at_limit(524288));
  RunInfo info;
  NetworkChoice of_a, of_c;
  ASSERT_TRUE(store_->GetRun(a, &info).ok());
  ASSERT_TRUE(NetworkOfRun(*store_, info, &of_a).ok());
  EXPECT_EQ(of_a.self_calibration_runs, (std::vector<int64_t>{a, b}));
  ASSERT_TRUE(store_->GetRun(c, &info).ok());
  ASSERT_TRUE(NetworkOfRun(*store_, info, &of_c).ok());
  EXPECT_EQ(of_c.self_calibration_runs, (std::vector<int64_t>{c}));
}

// The listings' answer (NetworkOfRun, for `runs` and `report`) is the simulation's own: a
// recorded run without a calibrate has none, with one the calibrate; an imported run its own
// collectives, pooled with its job's other imported run and merged with the calibrate.
TEST_F(StoredSimulationTest, TheListingsNameTheNetworkTheSimulationUses) {
  const int64_t recorded = AddRun();
  const int64_t imported = AddRun(RunKind::kImported);
  const int64_t again = AddRun(RunKind::kImported);
  RunInfo info;
  ASSERT_TRUE(store_->GetRun(recorded, &info).ok());
  NetworkChoice choice;
  ASSERT_TRUE(NetworkOfRun(*store_, info, &choice).ok());
  EXPECT_EQ(choice.missing.code(), Status::Code::kNotFound);
  ASSERT_TRUE(store_->GetRun(imported, &info).ok());
  ASSERT_TRUE(NetworkOfRun(*store_, info, &choice).ok());
  EXPECT_TRUE(choice.missing.ok());
  EXPECT_EQ(choice.source, "the own collectives of runs " + std::to_string(imported) + ", " +
                               std::to_string(again) +
                               " (self-calibrated: no mpi calibrate of 2x2 in the database)");
  EXPECT_EQ(choice.self_calibration_runs, (std::vector<int64_t>{imported, again}));

  Calibration calibration = SynthesizeCalibration(Network());
  ASSERT_TRUE(store_->SaveCalibration(&calibration).ok());
  ASSERT_TRUE(store_->GetRun(recorded, &info).ok());
  ASSERT_TRUE(NetworkOfRun(*store_, info, &choice).ok());
  EXPECT_EQ(choice.source, "calibration " + std::to_string(calibration.id));
  ASSERT_TRUE(store_->GetRun(imported, &info).ok());
  ASSERT_TRUE(NetworkOfRun(*store_, info, &choice).ok());
  StoredSimulation loaded;
  ASSERT_TRUE(LoadSimulation(*store_, imported, {}, IfUncalibrated::kFail, &loaded).ok());
  EXPECT_EQ(choice.source, loaded.network.source);
  EXPECT_TRUE(choice.measured_calibration);
  EXPECT_NE(choice.source.find(" where they measured ("), std::string::npos) << choice.source;
}

// TargetAtJobLevel: a job whose collectives run at half its calibrate's time at every size
// (both parametric, 2x the latency and half the bandwidth: allreduce and allgather alike)
// halves every collective point of the target's calibrate; the fusion copy is the host's and
// is kept; a ratio below kMinJobLevel is clamped; no calibrate to compare with keeps them all.
TEST(TargetAtJobLevelTest, ScalesEachCollectivePointByTheJobsRatioToItsCalibrate) {
  const NetworkModel job = NetworkModel::FromParams(NetworkParams::Uniform(40, 115), Topo(2, 2));
  const NetworkModel calibrate =
      NetworkModel::FromParams(NetworkParams::Uniform(80, 57.5), Topo(2, 2));
  const Calibration target = SynthesizeCalibration(
      NetworkModel::FromParams(NetworkParams::Uniform(300, 20), Topo(4, 1)), 7);
  std::vector<double> ratios;
  const Calibration scaled = TargetAtJobLevel(target, job, &calibrate, &ratios);
  ASSERT_EQ(scaled.points.size(), target.points.size());
  EXPECT_EQ(scaled.id, 7);
  EXPECT_EQ(scaled.topology.key(), "4x1");
  int copies = 0;
  for (size_t i = 0; i < target.points.size(); ++i) {
    const CalibrationPoint& was = target.points[i];
    const CalibrationPoint& now = scaled.points[i];
    const double want = was.scope == Scope::kCopy ? 1.0 : 0.5;
    copies += was.scope == Scope::kCopy ? 1 : 0;
    EXPECT_NEAR(now.median_us, want * was.median_us, 1e-9 * was.median_us) << i;
    EXPECT_NEAR(now.min_us, want * was.min_us, 1e-9 * was.min_us + 1e-12) << i;
    EXPECT_NEAR(now.max_us, want * was.max_us, 1e-9 * was.max_us + 1e-12) << i;
  }
  ASSERT_GT(copies, 0);
  ASSERT_EQ(ratios.size(), target.points.size() - copies);
  for (double r : ratios) EXPECT_NEAR(r, 0.5, 1e-9);

  // A calibrate 10x the job: clamped to kMinJobLevel.
  const NetworkModel slow = NetworkModel::FromParams(NetworkParams::Uniform(400, 11.5), Topo(2, 2));
  const Calibration clamped = TargetAtJobLevel(target, job, &slow);
  for (size_t i = 0; i < target.points.size(); ++i) {
    if (target.points[i].scope == Scope::kCopy) continue;
    EXPECT_NEAR(clamped.points[i].median_us, kMinJobLevel * target.points[i].median_us,
                1e-9 * target.points[i].median_us);
  }
  const Calibration kept = TargetAtJobLevel(target, job, nullptr);
  for (size_t i = 0; i < target.points.size(); ++i) {
    EXPECT_EQ(kept.points[i].median_us, target.points[i].median_us);
  }
}

// Predicting another topology shape: a calibrate of that shape in the store is its network,
// at the job's level where the job's collectives were compared with a calibrate of their own
// topology; else the recorded model is extrapolated, and the source line says which. The
// recorded shape's calibrate is twice the network the runs were synthesized on; the target's
// calibrate is far from the extrapolation (12.5x its latency), so which one the model follows
// shows at 1 KiB. The job's level (half its calibrate's) holds at every size: at its own, and
// below them, where the calibrate on host memory is taken at the job's level too.
TEST_F(StoredSimulationTest, AnotherTopologyTakesItsOwnCalibrateAtTheJobsLevel) {
  Calibration recorded_shape = SynthesizeCalibration(
      NetworkModel::FromParams(NetworkParams::Uniform(80, 57.5), Topo(2, 2)));
  ASSERT_TRUE(store_->SaveCalibration(&recorded_shape).ok());
  const int64_t recorded = AddRun();
  const int64_t imported = AddRun(RunKind::kImported);
  const TargetShape four_nodes{4, 0};

  StoredSimulation loaded;
  Status s = LoadSimulation(*store_, imported, four_nodes, IfUncalibrated::kFail, &loaded);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_NE(loaded.network.source.find(
                "; 4x2 extrapolated from 2x2 (no mpi calibrate of 4x2 in the database; "
                "Open MPI's allreduce: 2(N-1)/N of a buffer over each node's link on N nodes)"),
            std::string::npos)
      << loaded.network.source;
  const double extrapolated_us = loaded.simulation->network().FlatUs(Op::kAllreduce, 1024);

  const NetworkModel target_network =
      NetworkModel::FromParams(NetworkParams::Uniform(1000, 115), Topo(4, 2));
  Calibration target = SynthesizeCalibration(target_network);
  ASSERT_TRUE(store_->SaveCalibration(&target).ok());
  const double target_us = target_network.FlatUs(Op::kAllreduce, 1024);
  ASSERT_GT(target_us, 5 * extrapolated_us);

  s = LoadSimulation(*store_, imported, four_nodes, IfUncalibrated::kFail, &loaded);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(loaded.simulation->topology().key(), "4x2");
  EXPECT_TRUE(loaded.simulation->topology().hosts.empty());
  EXPECT_TRUE(loaded.simulation->assumption().empty());
  const std::string job_level = "; 4x2 by calibration " + std::to_string(target.id) +
                                " (mpi) at the job's level (its collectives' ratio to "
                                "calibration " +
                                std::to_string(recorded_shape.id) + " on 2x2: ";
  EXPECT_NE(loaded.network.source.find(job_level), std::string::npos) << loaded.network.source;
  EXPECT_NEAR(loaded.simulation->network().FlatUs(Op::kAllreduce, 1024), 0.5 * target_us,
              0.02 * target_us);
  // At 1 MiB, where the job measured its own collectives (the runs' fused size), they took half
  // the recorded shape's calibrate (synthesized on a network of half its latency and twice its
  // bandwidth): the target's calibrate is taken at half too.
  const double target_1m_us = target_network.FlatUs(Op::kAllreduce, 1 << 20);
  EXPECT_NEAR(loaded.simulation->network().FlatUs(Op::kAllreduce, 1 << 20), 0.5 * target_1m_us,
              0.02 * target_1m_us);
  EXPECT_NE(loaded.network.source.find("0.50x at the median, 0.50-0.50x)"), std::string::npos)
      << loaded.network.source;

  // A recorded run has no collectives of its own beside its calibrate: the target's as is.
  s = LoadSimulation(*store_, recorded, four_nodes, IfUncalibrated::kFail, &loaded);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(loaded.network.source,
            "calibration " + std::to_string(recorded_shape.id) + "; 4x2 by calibration " +
                std::to_string(target.id) +
                " (mpi) at the calibrate's level (no job's own collectives compared with a "
                "calibrate of 2x2)");
  EXPECT_NEAR(loaded.simulation->network().FlatUs(Op::kAllreduce, 4 << 20),
              target_network.FlatUs(Op::kAllreduce, 4 << 20), 1e-6 * target_us);
  // The recorded shape itself is not retargeted: its own calibrate, no line added.
  s = LoadSimulation(*store_, recorded, {}, IfUncalibrated::kFail, &loaded);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(loaded.network.source, "calibration " + std::to_string(recorded_shape.id));
}

TEST_F(StoredSimulationTest, OnlyAMeasuredRunWithStepsIsReplayed) {
  const int64_t measured = AddRun();
  StoredSimulation loaded;
  Status s = LoadSimulation(*store_, 99, {}, IfUncalibrated::kNoSimulation, &loaded);
  EXPECT_EQ(s.code(), Status::Code::kNotFound);
  EXPECT_NE(s.message().find("run 99 not found"), std::string::npos) << s.message();

  RunInfo simulated;
  ASSERT_TRUE(BuiltinWorkload("vgg16", &simulated.workload).ok());
  simulated.topology = Topo(2, 2);
  simulated.kind = RunKind::kSimulated;
  simulated.source_run = measured;
  ASSERT_TRUE(store_->CreateRun(&simulated).ok());
  s = LoadSimulation(*store_, simulated.id, {}, IfUncalibrated::kNoSimulation, &loaded);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("simulate a measured run"), std::string::npos) << s.message();

  RunInfo empty;
  ASSERT_TRUE(BuiltinWorkload("vgg16", &empty.workload).ok());
  empty.topology = Topo(2, 2);
  ASSERT_TRUE(store_->CreateRun(&empty).ok());
  s = LoadSimulation(*store_, empty.id, {}, IfUncalibrated::kNoSimulation, &loaded);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("has no recorded steps"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace autotune::sim
