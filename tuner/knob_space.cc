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

}  // namespace

Space KnobSearchSpace(BackendKind backend, Framework framework) {
  Space space;
  for (const KnobSpec& spec : KnobTable()) {
    if (InScope(spec.scope, backend) && KnobInFramework(spec, framework)) {
      MustAdd(&space, DimensionOf(spec));
    }
  }
  return space;
}

}  // namespace autotune::tuner
