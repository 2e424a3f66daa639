// The search space of autotune's knobs, derived from the knob table (traces/knob_table.h):
// every searched knob of the run's backend, with the table's range, scale, default and
// lifetime, by knob name (so a Point moves in and out of a Knobs by name).
#pragma once

#include "traces/backend_kind.h"
#include "traces/framework.h"
#include "tuner/space.h"

namespace autotune::tuner {

// One dimension per knob-table row that exists for `backend` and `framework`: kReal ->
// continuous, kInteger -> integer (categorical where the table says its values are ids),
// kBool -> boolean, kChoice -> categorical over the row's search choices.
Space KnobSearchSpace(BackendKind backend, Framework framework = Framework::kHorovod);

}  // namespace autotune::tuner
