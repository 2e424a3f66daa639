// Self-calibration: the measurements of a network model taken from real jobs' own traces (each
// collective's bytes and duration, each fusion-buffer copy, on the very cluster and under the
// very load the job ran with), as a Calibration the NetworkModel fits like any other. It is
// derived from the stored traces when a simulation is built, not stored a second time: the
// trace is the one fact.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "simulator/network_model.h"
#include "traces/calibration.h"
#include "traces/status.h"
#include "traces/trace.h"

namespace autotune::sim {

// Collective times a trace must show before it can stand in for a calibration.
inline constexpr int kMinSelfCalibrationCollectives = 3;

// The calibration points of traces (all of one topology shape, backend and framework; the
// first one's are taken): per op, scope (flat -> world, hierarchical) and size bin (a factor
// of sqrt(2)), the MEAN duration of the collectives in the bin (stored as the point's
// median_us: a step pays the sum of its collectives, and a loaded job's are skewed by
// scheduling hiccups that a median would drop); copies of 64 KiB and more give copy points. A
// collective's duration is its time alone (SoloTimes, trace_calibration.h: collectives that
// ran at once shared the link, as MeasuredCommRatios counts them). Where a trace shows
// kMinSelfCalibrationCollectives or more collectives that ran after its steps' compute (the
// network alone), only those make its points; the others ran beside the compute, whose cost
// the replay's comm_contention carries. With one collective in flight, what a collective
// waited for its predecessor is counted as the predecessor's (simulator/README.md, "what a
// collective waited for"). Traces of another shape, backend or framework than the
// first are skipped. `scales`, where given (one per trace), multiplies each trace's collective
// and copy times before they are binned: what brings them to the first trace's load
// (TracerCommScale, cpu_share.h). NotFound when fewer than
// kMinSelfCalibrationCollectives collectives have a positive duration. The result has id 0,
// the first trace's topology, backend and hardware, and `hardware` prefixed with the source.
StatusOr<Calibration> CalibrationFromTraces(std::span<const Trace* const> traces,
                                            std::span<const double> scales = {});

// The size bin of a message of `bytes` per rank (as a calibration counts them): bins span a
// factor of sqrt(2).
int SelfCalibrationBin(double bytes);

// The tail of a job's own flat collectives per op and size bin (the bins of
// CalibrationFromTraces, the same collectives): the median of their times and the mean. A
// bin's mean above its median is what hiccups and stalls add, such as Open MPI's TCP
// rendezvous (simulator/eager_limit.h). Empty where the traces show too few collectives.
// `scales` as CalibrationFromTraces's: each trace's times brought to one tracer's load.
struct CollectiveTail {
  Op op = Op::kAllreduce;
  int64_t bytes = 0;  // the bin's median message bytes per rank, as a calibration counts them
  int bin = 0;        // SelfCalibrationBin of the bin's messages
  int count = 0;
  double median_us = 0.0;
  double mean_us = 0.0;
};
std::vector<CollectiveTail> CollectiveTailsFromTraces(std::span<const Trace* const> traces,
                                                      std::span<const double> scales = {});

// A measured calibration (autotune calibrate) with the self-calibration's points in place of
// its own where both measured the same curve (op, scope, communicator size) at sizes within
// the self-calibration's range: the job's own times where it has them, the calibration's
// elsewhere. Keeps measured's id, topology, backend and hardware.
Calibration MergeCalibrations(const Calibration& measured, const Calibration& self);

// How the job's own collective times compare to a measured calibration's model, over the
// self-calibration's points of flat world collectives.
struct CalibrationAgreement {
  int points = 0;
  // The sum of the job's own times over the sum of the model's at the same points (self /
  // calibrate): the ratio where the job's communication time is (its large collectives weigh
  // by their time, a small one slowed by what ran beside it does not set the level alone).
  double time_ratio = 1.0;
  double min_ratio = 1.0;  // of one point's own time over the model's
  double max_ratio = 1.0;
};
CalibrationAgreement CompareCalibrations(const Calibration& self, const NetworkModel& measured);

}  // namespace autotune::sim
