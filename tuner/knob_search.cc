#include "tuner/knob_search.h"

#include <optional>
#include <utility>

#include "traces/knob_table.h"

namespace autotune::tuner {
namespace {

// Whether `free` or `scope` keeps dimension d at its base value.
bool Fixed(FreeKnobs free, const SpaceScope& scope, const Dimension& d) {
  const KnobSpec* spec = FindKnob(d.name);
  if (!scope.tune_on_request && spec != nullptr && KnobSearchedOnRequest(*spec)) return true;
  switch (free) {
    case FreeKnobs::kAll:
      return false;
    case FreeKnobs::kAllButBackend:
      return spec != nullptr && spec->scope != KnobBackendScope::kAll;
    case FreeKnobs::kOnline:
      return !IsOnlineKnob(d.name);
  }
  return true;
}

// The knob table's space of `backend` and scope.framework with each knob `job` shapes (and
// `constants` does not name) in its shaped dimension; *applied gets the shapes that took effect.
Status ShapedSpace(BackendKind backend, const Knobs& base, const std::set<std::string>& constants,
                   const SpaceScope& scope, const JobSpace& job, Space* out, JobSpace* applied) {
  const Space table = KnobSearchSpace(backend, scope.framework);
  const Knobs defaults;
  for (int i = 0; i < table.num_dimensions(); ++i) {
    Dimension d = table.dimension(i);
    const KnobShape* shape = job.Find(d.name);
    if (shape != nullptr && constants.count(d.name) == 0) {
      if (shape->held) {
        applied->knobs.push_back(*shape);
      } else {
        const KnobSpec& spec = *FindKnob(d.name);
        const bool real = d.kind == DimensionKind::kContinuous;
        auto value = [&](const Knobs& knobs) {
          return real ? RoundToKnobPrecision(KnobNumber(spec, knobs)) : KnobNumber(spec, knobs);
        };
        std::optional<Dimension> shaped =
            ShapedDimension(d, *shape, {value(defaults), value(base)});
        if (shaped) {
          d = std::move(*shaped);
          applied->knobs.push_back(*shape);
        }
      }
    }
    AUTOTUNE_RETURN_IF_ERROR(out->AddDimension(std::move(d)).WithPrefix("job-shaped space"));
  }
  return Status::Ok();
}

}  // namespace

Status KnobsToPoint(const Space& space, const Knobs& knobs, Point* point) {
  point->assign(space.num_dimensions(), 0.0);
  for (int i = 0; i < space.num_dimensions(); ++i) {
    StatusOr<double> value = KnobCoordinate(space, i, knobs);
    if (!value.ok()) return value.status();
    (*point)[i] = *value;
  }
  return Status::Ok();
}

Status PointToKnobs(const Space& space, const Point& point, const Knobs& base, Knobs* knobs) {
  *knobs = base;
  for (int i = 0; i < space.num_dimensions(); ++i) {
    AUTOTUNE_RETURN_IF_ERROR(space.CheckValue(i, point[i]));
    SetKnobCoordinate(space, point, i, knobs);
  }
  return knobs->Validate();
}

bool IsOnlineKnob(const std::string& name) {
  const KnobSpec* spec = FindKnob(name);
  return spec != nullptr && spec->lifetime == KnobLifetime::kRuntime;
}

std::vector<std::string> OnlineKnobNames(Framework framework) {
  std::vector<std::string> names;
  for (const KnobSpec& spec : KnobTable()) {
    if (IsOnlineKnob(spec.name) && !KnobSearchedOnRequest(spec) &&
        KnobInFramework(spec, framework)) {
      names.push_back(spec.name);
    }
  }
  return names;
}

Status KnobSpace(BackendKind backend, const Knobs& base, const std::set<std::string>& constants,
                 FreeKnobs free, const SpaceScope& scope, Space* out, JobSpace* shaped) {
  const JobSpace job = ShapeSpaceForJob(scope.job, scope.target, scope.framework);
  Space space;
  JobSpace applied;
  AUTOTUNE_RETURN_IF_ERROR(ShapedSpace(backend, base, constants, scope, job, &space, &applied));
  for (const std::string& name : constants) {
    // A knob of the other backend or framework: stays in base.
    if (space.IndexOf(name) < 0) continue;
    AUTOTUNE_RETURN_IF_ERROR(FixKnobAt(&space, name, base).WithPrefix("constant " + name));
  }
  for (int i = 0; i < space.num_dimensions(); ++i) {
    const std::string name = space.dimension(i).name;
    const KnobShape* shape = applied.Find(name);
    const bool held = shape != nullptr && shape->held;
    if (space.is_constant(i) || !(held || Fixed(free, scope, space.dimension(i)))) continue;
    AUTOTUNE_RETURN_IF_ERROR(FixKnobAt(&space, name, base).WithPrefix("constant " + name));
  }
  if (shaped != nullptr) {
    // A knob searched in its shaped bounds that another rule holds has no note of its own.
    shaped->knobs.clear();
    for (const KnobShape& shape : applied.knobs) {
      if (shape.held || !space.is_constant(space.IndexOf(shape.knob))) {
        shaped->knobs.push_back(shape);
      }
    }
  }
  *out = std::move(space);
  return Status::Ok();
}

KnobSearch::KnobSearch(Space space, Knobs base, SearchOptions options, SampleListener listener,
                       KnobCompletion complete)
    : loop_(std::move(space), std::move(options)),
      base_(std::move(base)),
      listener_(std::move(listener)),
      complete_(std::move(complete)) {}

StatusOr<Point> KnobSearch::ToPoint(const Knobs& knobs) const {
  Point point;
  AUTOTUNE_RETURN_IF_ERROR(KnobsToPoint(space(), knobs, &point));
  AUTOTUNE_RETURN_IF_ERROR(space().Validate(point));
  if (!complete_) return point;
  // A knob written with the others (KnobSpec::set_with_others) is no dimension, but a run at
  // another value of it is not a run of the setting the search writes at this point (the
  // real MLP's 0.3 MB buffers: 1.18x faster with the eager limit than without).
  StatusOr<Knobs> written = ToKnobs(point);
  if (!written.ok()) return written.status();
  for (const KnobSpec& spec : KnobTable()) {
    if (!spec.set_with_others) continue;
    const std::string ran = KnobText(spec, knobs), writes = KnobText(spec, *written);
    if (ran != writes) {
      return Status::InvalidArgument(std::string(spec.name) + " " + ran +
                                     ": the search writes this setting with " + writes);
    }
  }
  return point;
}

StatusOr<Knobs> KnobSearch::ToKnobs(const Point& point) const {
  Knobs knobs;
  AUTOTUNE_RETURN_IF_ERROR(PointToKnobs(space(), point, base_, &knobs));
  if (!complete_) return knobs;
  Knobs completed = complete_(knobs);
  AUTOTUNE_RETURN_IF_ERROR(completed.Validate());
  return completed;
}

Status KnobSearch::ObserveMeasured(const Knobs& knobs, double score_bytes_per_s) {
  StatusOr<Point> point = ToPoint(knobs);
  if (!point.ok()) return point.status();
  if (listener_) {
    StatusOr<Knobs> seen = ToKnobs(*point);  // the setting as the search sees it
    listener_(seen.ok() ? *seen : knobs, Fidelity::kMeasured, score_bytes_per_s);
  }
  return loop_.Observe({*point, Fidelity::kMeasured, score_bytes_per_s});
}

Status KnobSearch::SimulatePrior(const SimulatedScore& simulate, int budget,
                                 const std::function<void(int picked)>& picked) {
  std::vector<Point> nested;
  for (const Observation& o : loop_.search().observations()) {
    if (o.fidelity == Fidelity::kMeasured) nested.push_back(o.point);
  }
  nested.push_back(space().Default());
  const Objective objective = [&](const Point& point) -> StatusOr<double> {
    StatusOr<Knobs> knobs = ToKnobs(point);
    if (!knobs.ok()) return knobs.status();
    const double score = simulate(*knobs);
    if (listener_) listener_(*knobs, Fidelity::kSimulated, score);
    return score;
  };
  return loop_.SimulatePrior(nested, budget, objective, picked);
}

StatusOr<SearchLoop::Conclusion> KnobSearch::Conclude(int propose,
                                                      const std::vector<MeasuredSteps>& steps) {
  return loop_.Conclude(propose, space().Default(), ByPoint(steps));
}

StatusOr<SearchLoop::Conclusion> KnobSearch::Judge(const std::vector<MeasuredSteps>& steps) {
  return loop_.Judge(space().Default(), ByPoint(steps));
}

SearchLoop::StepTimes KnobSearch::ByPoint(const std::vector<MeasuredSteps>& steps) const {
  SearchLoop::StepTimes by_point;
  for (size_t i = 0; i < steps.size(); ++i) {
    const MeasuredSteps& sample = steps[i];
    StatusOr<Point> point = ToPoint(sample.knobs);
    if (!point.ok()) continue;
    const int64_t sequence = sample.sequence >= 0 ? sample.sequence : static_cast<int64_t>(i);
    by_point[*point].push_back(RealRun(sample.step_ms, sequence, sample.run_id));
  }
  return by_point;
}

StatusOr<KnobSearch::Next> KnobSearch::NextMeasured() {
  StatusOr<SearchLoop::Next> next = loop_.NextMeasured();
  if (!next.ok()) return next.status();
  Next out;
  out.stop = next->stop;
  if (out.stop == StopReason::kNotStopped) {
    StatusOr<Knobs> knobs = ToKnobs(next->suggestion.point);
    if (!knobs.ok()) return knobs.status();
    out.knobs = *knobs;
  }
  return out;
}

}  // namespace autotune::tuner
