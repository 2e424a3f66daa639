// KnobSearch: the search loop (tuner/search_loop.h) over autotune's knobs. `autotune search`,
// `search --live` and `record --autotune` are thin adapters of it: they hand it the measured
// samples they have as (knobs, score) pairs and the simulator as a plain function of the
// knobs, and turn its answers into files and lines. It knows nothing of SQLite or MPI.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "traces/fidelity.h"
#include "traces/knobs.h"
#include "traces/status.h"
#include "tuner/job_space.h"
#include "tuner/knob_space.h"
#include "tuner/search_loop.h"
#include "tuner/space.h"
#include "tuner/target.h"

namespace autotune::tuner {

// A knob setting as a point of the space; fails when a value has no place in it
// (e.g. an NCCL algorithm the space does not list).
Status KnobsToPoint(const Space& space, const Knobs& knobs, Point* point);

// The point's values over `base` (the knobs outside the space); validates the
// result.
Status PointToKnobs(const Space& space, const Point& point, const Knobs& base, Knobs* knobs);

// The runtime knobs (knob table) the online tuner moves; everything else is fixed at its
// starting value.
bool IsOnlineKnob(const std::string& name);

// The knobs an online search (FreeKnobs::kOnline, nothing requested) moves in a run of
// `framework`: its IsOnlineKnob knobs that the table searches by default, in table order.
std::vector<std::string> OnlineKnobNames(Framework framework);

// Which knobs of the space a search may move; a constant never moves.
enum class FreeKnobs {
  kAll,      // every knob of the space
  kAllButBackend,  // the backend's own algorithm knobs stay: the simulator does not model them
  kOnline,   // IsOnlineKnob's only: what can change between samples inside one run
};

// Beyond FreeKnobs: what the target runs, what the user asked to tune, and the job.
struct SpaceScope {
  Target target = Target::kExecutor;  // kCpu: the hierarchical knobs are constants
  // Whether the knobs the table searches only on request (KnobSearched::kOnRequest, such as a
  // training-script argument `apply` cannot set) are searched; else they are constants.
  bool tune_on_request = false;
  Framework framework = Framework::kHorovod;  // only this framework's knobs are in the space
  JobFacts job = {};  // what shapes the space (ShapeSpaceForJob); nothing known: the table's ranges
};

// The search space of `backend`'s knobs for a search from `base` (defaults + constants): each
// knob shaped by the job (ShapeSpaceForJob(scope.job, scope.target, scope.framework), widened
// to hold the knob's default and its value in `base`) unless it is in `constants`; each knob in
// `constants`, each knob `free` excludes, each knob the job's shape holds, and the knobs
// searched only on request unless scope.tune_on_request, is a constant at its value in `base`.
// `shaped`, when given, gets the shapes that took effect (a knob searched in its shaped
// bounds, or held by the shape), for the notes a search prints (JobSpaceNote).
// Fails naming the knob ("constant NAME: ...") whose value has no place in the space.
Status KnobSpace(BackendKind backend, const Knobs& base, const std::set<std::string>& constants,
                 FreeKnobs free, const SpaceScope& scope, Space* space,
                 JobSpace* shaped = nullptr);

// The measured step times of one measured sample of a setting (one real run of it), ms.
struct MeasuredSteps {
  Knobs knobs;
  std::vector<double> step_ms;
  int64_t run_id = 0;     // the database's run, 0: none
  int64_t sequence = -1;  // when it ran among the others (larger: later); -1: in list order
};

// The knobs a search sets with a setting of the others (tuner::WithCompanionKnobs).
using KnobCompletion = std::function<Knobs(const Knobs& knobs)>;

// The simulator, as the search sees it: the predicted score of a setting, bytes/s.
using SimulatedScore = std::function<double(const Knobs& knobs)>;
// Told every sample the search takes in, before it does (for logs).
using SampleListener =
    std::function<void(const Knobs& knobs, Fidelity fidelity, double score_bytes_per_s)>;

class KnobSearch {
 public:
  // space: from KnobSpace; base: the knobs outside it (defaults + constants); options: the
  // model and the stop rule; listener: optional; complete: optional, the knobs outside the
  // space that go with a point's setting (WithCompanionKnobs), applied by ToKnobs.
  KnobSearch(Space space, Knobs base, SearchOptions options, SampleListener listener = nullptr,
             KnobCompletion complete = nullptr);

  const Space& space() const { return loop_.space(); }
  const Knobs& base() const { return base_; }
  int measured() const { return loop_.measured(); }
  int simulated() const { return loop_.simulated(); }
  double rho() const { return loop_.search().rho(); }

  // The point of `knobs`; fails when a value has no place in the space or a constant moved,
  // or when a knob written with the others (the constructor's `complete`) has another value
  // than the search writes at that point: a run at it is not a run of that setting.
  StatusOr<Point> ToPoint(const Knobs& knobs) const;
  // The knobs of a point of the space, over base(), completed (the constructor's `complete`);
  // fails when the result is invalid.
  StatusOr<Knobs> ToKnobs(const Point& point) const;

  // Takes in a measured sample (ToPoint's failures, then the model's).
  Status ObserveMeasured(const Knobs& knobs, double score_bytes_per_s);
  // The simulated-prior phase: simulates each measured setting so far and the default, then
  // `budget` settings chosen by expected improvement on the simulated model; picked(i), when
  // given, after the i-th of those.
  Status SimulatePrior(const SimulatedScore& simulate, int budget,
                       const std::function<void(int picked)>& picked = nullptr);

  // Online: the knobs to measure next, or why to stop (SearchLoop::NextMeasured).
  struct Next {
    StopReason stop = StopReason::kNotStopped;
    Knobs knobs;  // valid when stop == kNotStopped
  };
  StatusOr<Next> NextMeasured();
  // Offline: one round's conclusion (SearchLoop::Conclude) around the space's default, judged
  // on `steps` (samples whose knobs have no place in the space are left out; repeats of one
  // setting are its samples).
  StatusOr<SearchLoop::Conclusion> Conclude(int propose,
                                            const std::vector<MeasuredSteps>& steps = {});
  // The same conclusion without proposals (SearchLoop::Judge): the decision alone.
  StatusOr<SearchLoop::Conclusion> Judge(const std::vector<MeasuredSteps>& steps);
  // The measured incumbent with its repeats; NotFound when nothing was measured.
  StatusOr<Reported> Incumbent() { return loop_.Incumbent(); }
  // The observed setting of `fidelity` with the best posterior mean.
  StatusOr<tuner::Incumbent> Best(Fidelity fidelity) { return loop_.search().Best(fidelity); }

 private:
  // The real runs of `steps` by point (those whose knobs have no place in the space left out).
  SearchLoop::StepTimes ByPoint(const std::vector<MeasuredSteps>& steps) const;

  SearchLoop loop_;
  Knobs base_;
  SampleListener listener_;
  KnobCompletion complete_;
};

}  // namespace autotune::tuner
