// What Open MPI's TCP eager limit (the knob mpi_tcp_eager_limit) does to a job's flat
// collectives, from calibrates of the job's topology made at several limits.
//
// A message larger than the limit (header included) goes by rendezvous: a handshake before
// the data, which stalls where ranks share cores (bench/executor/README.md). Which of a
// collective's messages cross the limit depends on Open MPI's algorithm for its size, so the
// effect is not derived: it is measured. A setting's flat collective of S bytes takes the
// job's own model times calibrate(limit)(S) / calibrate(job's limit)(S), the two calibrates'
// world points at S (interpolated in log bytes between the sizes both measured). A point's
// time is its mean where both calibrates measured one, else its median: the stall is a tail
// (on the emulated cluster 256 KiB allreduces had the same median at both limits and a mean
// far above it at Open MPI's own), and a job running the collective a hundred times a step
// pays the mean. The fitted network model is not used here: its spike rule would take out
// exactly that tail.
//
// A higher limit than the job's takes the stall out of the job's own collectives: where the
// job's traces show a size (SetJobTails: the same size bin, 10 collectives or more), its
// collectives there take their own median instead of their mean, times the calibrate at the
// setting's limit (its mean) over the one at the job's (its median): the job's own tail,
// which a loaded job's collectives show lighter than a calibrate's, is what the limit
// removes (on the real MLP's 256 KiB allreduces 1.43x their median, the calibrate's 1.81x).
//
// Where no message of the collective can lie between the two limits, the ratio is 1 exactly
// (calibrate noise is not carried into predictions): a collective of S bytes over p ranks
// sends messages of at most S and of about S / p and more (ring, Rabenseifner; recursive
// doubling sends S), so only S above half the lower limit and S / p up to twice the higher
// one are taken to change (the margins: the message header, and pieces of a segmented
// algorithm). A setting whose limit has no calibrate takes the calibrated limit between the
// job's and its own that is nearest its own (which sends no more and no fewer messages
// eagerly than the setting would: the change is not overstated), and the job's own
// collectives where none is.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "simulator/self_calibration.h"
#include "traces/calibration.h"
#include "traces/status.h"

namespace autotune::sim {

class EagerLimitEffect {
 public:
  EagerLimitEffect() = default;

  // job_limit: the job's mpi_tcp_eager_limit (0: Open MPI's own). base: an mpi calibrate of
  // the job's topology at that limit; others: calibrates of the same topology and backend at
  // other limits (any at job_limit's effective value, or sharing no size with base, are
  // ignored). InvalidArgument when one is of another topology or backend.
  static Status Fit(int job_limit, const Calibration& base, const std::vector<Calibration>& others,
                    EagerLimitEffect* out);

  // The job's own collectives' tails (CollectiveTailsFromTraces of its imported runs).
  void SetJobTails(const std::vector<CollectiveTail>& tails);
  // The job's own collectives at another limit (CollectiveTailsFromTraces of its imported runs
  // at `limit`), against `at_job_limit` (those of its runs at its own limit): where both show
  // a size bin with 10 or more collectives, a setting that takes the calibrate at `limit`
  // takes the ratio of the job's own means there instead of the calibrates' (what the job
  // itself did at that limit; on bench/horovod's real MLP a calibrate priced 256 KiB at 0.43x
  // at 524288 where the job's own ran no faster). Calls for a limit with no calibrate are
  // kept for none.
  void SetJobAtLimit(int limit, const std::vector<CollectiveTail>& at_limit,
                     const std::vector<CollectiveTail>& at_job_limit);

  bool empty() const { return limits_.empty(); }
  // The calibrate standing for a setting's limit: an index for Ratio, or -1 (the job's own
  // collectives: its limit, or none calibrated between the job's and the setting's).
  int Choose(int setting_limit) const;
  // The flat collective's time at `index`'s limit over the job's limit's, fusion_bytes as
  // NetworkModel::FlatUs counts them (allgather: the gathered output); 1 for index -1.
  double Ratio(int index, Op op, int64_t fusion_bytes) const;
  int limit(int index) const { return limits_[index].limit; }
  int64_t calibration_id(int index) const { return limits_[index].calibration_id; }
  int64_t base_calibration_id() const { return base_calibration_id_; }

  // One line: the limits calibrated, by which calibrations, and the allreduce's ratio at
  // each at the sizes where it can differ.
  std::string Describe() const;

 private:
  // log(message bytes per rank) and the ratio there, ascending, per op (allreduce, allgather).
  using RatioCurve = std::vector<std::pair<double, double>>;
  struct AtLimit {
    int limit = 0;  // the knob's value
    int64_t calibration_id = 0;
    RatioCurve curves[2];
    // Its mean over the job's limit's median (its median where either lacks means), per op:
    // what a collective of the job's without its own tail takes at this limit.
    RatioCurve untailed[2];
    bool means = false;  // every ratio from means
    // The job's own mean at this limit over its mean at its own limit, by size bin, per op
    // (SetJobAtLimit); where a bin has one, it stands for the curves'.
    std::vector<std::pair<int, double>> own[2];
  };
  // The job's own median over its mean, by size bin, per op.
  std::vector<std::pair<int, double>> tails_[2];
  int job_limit_ = 0;
  int world_size_ = 1;
  int64_t base_calibration_id_ = 0;
  std::vector<AtLimit> limits_;  // ascending effective limit
};

}  // namespace autotune::sim
