// The search space of autotune's knobs, derived from the knob table (traces/knob_table.h):
// every searched knob of the run's backend, with the table's range, scale, default and
// lifetime, by knob name (so a Point moves in and out of a Knobs by name).
#pragma once

#include <string>

#include "traces/backend_kind.h"
#include "traces/framework.h"
#include "traces/knobs.h"
#include "traces/status.h"
#include "tuner/space.h"

namespace autotune::tuner {

// One dimension per knob-table row that exists for `backend` and `framework`: kReal ->
// continuous, kInteger -> integer (categorical where the table says its values are ids),
// kBool -> boolean, kChoice -> categorical over the row's search choices.
Space KnobSearchSpace(BackendKind backend, Framework framework = Framework::kHorovod);

// Values move between a Knobs and a point of a KnobSearchSpace as numbers, through the knob
// table's field pointers (never as text); a real knob's value both ways at the precision its
// text carries (RoundToKnobPrecision). i: a dimension of `space`, named after its knob.

// The native value of dimension i for the knob's value in `knobs`: the number, 0/1, or the
// index of its category; a value the job cannot tell from a bound is that bound (above the
// upper bound of a same_above dimension, between 0 and the lower bound of a zero_below one:
// tuner/space.h). Fails naming the dimension when the value has no place in it (a choice the
// space does not list, a number outside its bounds, a fraction for a whole-valued dimension).
StatusOr<double> KnobCoordinate(const Space& space, int i, const Knobs& knobs);
// Writes dimension i of `point` into its knob of `knobs` (the inverse of KnobCoordinate); at the
// upper bound of a same_above dimension a knob already above it keeps its value (the same
// setting, as the user wrote it). REQUIRES: point[i] is a valid value of the dimension
// (Space::CheckValue).
void SetKnobCoordinate(const Space& space, const Point& point, int i, Knobs* knobs);
// Fixes the dimension `name` of `space` at the knob's value in `knobs` (Space::SetConstant).
// Fails as KnobCoordinate does, or when the space has no such dimension.
Status FixKnobAt(Space* space, const std::string& name, const Knobs& knobs);

}  // namespace autotune::tuner
