#include "tuner/knob_space.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "traces/knob_table.h"
#include "traces/knobs.h"

namespace autotune::tuner {
namespace {

void MustAdd(Space* space, Dimension dimension) {
  Status status = space->AddDimension(std::move(dimension));
  if (!status.ok()) {  // A defect in the knob table, not a user error.
    std::cerr << "autotune: internal error in the knob space: " << status.message() << "\n";
    std::abort();
  }
}

Scale ScaleOf(KnobScale scale) {
  switch (scale) {
    case KnobScale::kLog:
      return Scale::kLog;
    case KnobScale::kLog1p:
      return Scale::kLog1p;
    default:
      return Scale::kLinear;
  }
}

bool InScope(KnobBackendScope scope, BackendKind backend) {
  return scope == KnobBackendScope::kAll ||
         (scope == KnobBackendScope::kMpi && backend == BackendKind::kMpi) ||
         (scope == KnobBackendScope::kNccl && backend == BackendKind::kNccl);
}

Dimension DimensionOf(const KnobSpec& spec) {
  const Knobs defaults;
  const Lifetime lifetime =
      spec.lifetime == KnobLifetime::kPerLaunch ? Lifetime::kPerLaunch : Lifetime::kRuntime;
  const double default_value = KnobNumber(spec, defaults);
  if (spec.type == KnobType::kBool) return Dimension::Boolean(spec.name, default_value != 0);
  if (spec.type == KnobType::kReal) {
    return Dimension::Continuous(spec.name, spec.min, spec.max, ScaleOf(spec.scale),
                                 default_value, lifetime);
  }
  std::vector<std::string> categories;
  if (spec.type == KnobType::kInteger && spec.scale != KnobScale::kCategorical) {
    return Dimension::Integer(spec.name, spec.min, spec.max, ScaleOf(spec.scale), default_value,
                              lifetime);
  }
  if (spec.type == KnobType::kInteger) {
    for (int v = static_cast<int>(spec.min); v <= static_cast<int>(spec.max); ++v) {
      categories.push_back(std::to_string(v));
    }
  } else {
    categories = spec.search_choices.empty() ? spec.choices : spec.search_choices;
  }
  const std::string default_text = KnobText(spec, defaults);
  const auto it = std::find(categories.begin(), categories.end(), default_text);
  return Dimension::Categorical(spec.name, categories,
                                static_cast<int>(it - categories.begin()), lifetime);
}

// The row of dimension i, by the dimension's name (KnobSearchSpace names them after rows).
const KnobSpec* RowOf(const Space& space, int i) { return FindKnob(space.dimension(i).name); }

// A categorical dimension over an integer knob's ids lists them from the row's minimum.
bool IsIdCategory(const KnobSpec& spec) { return spec.type == KnobType::kInteger; }

// A value the job cannot tell from a bound of dimension d, as that bound (Dimension::same_above,
// zero_below); any other value as it is.
double SameAsBound(const Dimension& d, double value) {
  if (d.same_above && value > d.upper) return d.upper;
  if (d.zero_below && value > 0.0 && value < d.lower) return 0.0;
  return value;
}

}  // namespace

StatusOr<double> KnobCoordinate(const Space& space, int i, const Knobs& knobs) {
  const Dimension& d = space.dimension(i);
  const KnobSpec* spec = RowOf(space, i);
  if (spec == nullptr) return Status::InvalidArgument("dimension '" + d.name + "' is no knob");
  if (d.kind == DimensionKind::kContinuous) {
    const double value = SameAsBound(d, RoundToKnobPrecision(KnobNumber(*spec, knobs)));
    AUTOTUNE_RETURN_IF_ERROR(space.CheckValue(i, value));
    return value;
  }
  if (d.kind != DimensionKind::kCategorical) {
    const double value = SameAsBound(d, KnobNumber(*spec, knobs));
    AUTOTUNE_RETURN_IF_ERROR(space.CheckValue(i, value));
    return value;
  }
  if (IsIdCategory(*spec)) {
    const double index = KnobNumber(*spec, knobs) - spec->min;
    if (index >= 0 && index < static_cast<double>(d.categories.size())) return index;
  } else {
    const std::string& value = knobs.*std::get<std::string Knobs::*>(spec->field);
    const auto it = std::find(d.categories.begin(), d.categories.end(), value);
    if (it != d.categories.end()) return static_cast<double>(it - d.categories.begin());
  }
  return Status::InvalidArgument("dimension '" + d.name + "': '" + KnobText(*spec, knobs) +
                                 "' is not one of its categories");
}

void SetKnobCoordinate(const Space& space, const Point& point, int i, Knobs* knobs) {
  const Dimension& d = space.dimension(i);
  const KnobSpec& spec = *RowOf(space, i);
  // The upper bound of a same_above dimension stands for every value above it: a knob already
  // above it (the default 128 MB threshold of a 30 MB model) keeps its value, so the setting
  // written is the one the user has, not a new number that behaves the same.
  if (d.same_above && point[i] == d.upper && KnobNumber(spec, *knobs) > d.upper) return;
  if (d.kind == DimensionKind::kContinuous) {
    SetKnobNumber(spec, RoundToKnobPrecision(point[i]), knobs);
  } else if (d.kind != DimensionKind::kCategorical) {
    SetKnobNumber(spec, point[i], knobs);
  } else if (IsIdCategory(spec)) {
    SetKnobNumber(spec, spec.min + point[i], knobs);
  } else {
    knobs->*std::get<std::string Knobs::*>(spec.field) =
        d.categories.at(static_cast<size_t>(point[i]));
  }
}

Status FixKnobAt(Space* space, const std::string& name, const Knobs& knobs) {
  const int i = space->IndexOf(name);
  if (i < 0) return Status::InvalidArgument("no dimension named '" + name + "' to fix");
  StatusOr<double> value = KnobCoordinate(*space, i, knobs);
  if (!value.ok()) return value.status();
  return space->SetConstant(name, *value);
}

Space KnobSearchSpace(BackendKind backend, Framework framework) {
  Space space;
  for (const KnobSpec& spec : KnobTable()) {
    if (InScope(spec.scope, backend) && KnobInFramework(spec, framework) &&
        !spec.set_with_others) {
      MustAdd(&space, DimensionOf(spec));
    }
  }
  return space;
}

}  // namespace autotune::tuner
