// What `autotune search` and `autotune record --autotune` share between the
// tuner's points and autotune's knobs: the conversions both ways and the
// --autotune-log-file CSV.
#pragma once

#include <fstream>
#include <string>

#include "simulator/simulation.h"
#include "traces/knobs.h"
#include "traces/status.h"
#include "tuner/bayes_search.h"
#include "tuner/space.h"

namespace autotune::cli {

// A knob setting as a point of the space; fails when a value has no place in it
// (e.g. an NCCL algorithm the space does not list).
Status KnobsToPoint(const tuner::Space& space, const Knobs& knobs, tuner::Point* point);

// The point's values over `base` (the knobs outside the space); validates the
// result.
Status PointToKnobs(const tuner::Space& space, const tuner::Point& point, const Knobs& base,
                    Knobs* knobs);

// The CSV of --autotune-log-file: Horovod's columns first (its units: threshold
// in MB, score in bytes per microsecond), then every other knob, the fidelity
// and the score in bytes/s.
class SampleLog {
 public:
  // An empty path: no log, Write does nothing.
  Status Open(const std::string& path);
  void Write(const Knobs& knobs, const std::string& fidelity, double score_bytes_per_s);

 private:
  std::ofstream file_;
};

// Simulates `point` (its knobs over `base`), writes it to `log` and observes it in `search` as
// a simulated sample: one step of the simulated phase of `search` and `record --autotune`.
Status ObserveSimulated(const sim::Simulation& simulation, const Knobs& base, SampleLog* log,
                        tuner::BayesSearch* search, const tuner::Point& point);

}  // namespace autotune::cli
