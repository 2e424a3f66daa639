// The search space shaped by the job (DESIGN.md, "Knobs"; issue 22): from what one step of the
// job reduces, its topology, its step time and the target it runs on, the bounds inside which
// each knob's values differ at all, and the knobs that do nothing here, each with the one-line
// reason a search prints. A pure function of those facts; KnobSpace (tuner/knob_search.h)
// applies it to the knob table's space.
//
// What it decides (values in the knob's own unit):
//   fusion_threshold_mb: 0, or from the two smallest tensors of one kind (op and dtype)
//     together (below that no two tensors share a buffer: it behaves as 0) to the bytes the
//     largest kind reduces in one step (above that one buffer takes them all: every value
//     behaves the same); held when no two tensors can share a buffer.
//   cycle_time_ms: from min(0.5 ms, 0.1% of the step time) (at least the table's 0.1 ms) to
//     the step time (a cycle that long collects a whole step's gradients; a longer one only
//     holds them back).
//   cache_capacity: 0 (off) or the number of tensors one step negotiates (every value from
//     there up caches them all; a smaller cache evicts each tensor before it comes back, so it
//     only adds its own work), as Horovod's autotune tunes the cache: on or off.
//   hierarchical_allreduce / _allgather: held on one node, with one rank per node, on CPU
//     Horovod (it runs them flat), and (allgather) when the job allgathers nothing.
//   ddp_bucket_cap_mb: whole MB (the Hugging Face Trainer's ddp_bucket_cap_mb is an int, and
//     Lightning passes DDP's argument on) from 1 to the step's bytes rounded up.
//   ddp_first_bucket_mb: up to the step's bytes; noted as having no Trainer or Lightning
//     argument (only `autotune apply` sets it).
// A fact that is not known (no tensors, no step time, no topology) shapes nothing.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "traces/backend_kind.h"
#include "traces/framework.h"
#include "traces/knobs.h"
#include "traces/topology.h"
#include "traces/workload.h"
#include "tuner/space.h"
#include "tuner/target.h"

namespace autotune::tuner {

// What is known of the job whose knobs are searched.
struct JobFacts {
  Workload workload;                 // the tensors one step reduces; none: not known
  std::optional<Topology> topology;  // nodes x ranks per node; empty: not known
  double step_ms = 0.0;              // the job's step time, ms; 0: not known
};

// How the job shapes one knob.
struct KnobShape {
  std::string knob;   // the knob table's name
  bool held = false;  // true: a constant at the search's base value; else searched as below
  // When searched: the values, in the knob's unit. kZeroOrLog: 0 and [lower, upper].
  double lower = 0.0;
  double upper = 0.0;
  Scale scale = Scale::kLog;
  bool integer = false;     // whole values only
  bool same_above = false;  // every value above upper behaves as upper (Dimension::same_above)
  bool zero_below = false;  // kZeroOrLog: every value between 0 and lower behaves as 0
  // Why: "above 29.2743 MB (the bytes one step reduces) every value behaves the same".
  std::string reason;
};

// The knobs the job shapes, in knob-table order.
struct JobSpace {
  std::vector<KnobShape> knobs;
  // The shape of `knob`, or nullptr.
  const KnobShape* Find(const std::string& knob) const;
};

// The shape of the space of the knobs of `framework` for `job` measured on `target`.
JobSpace ShapeSpaceForJob(const JobFacts& job, Target target, Framework framework);

// The dimension `table` (the knob table's dimension of the same knob) shaped by `shape`,
// widened where needed so that each of `must_hold` (the knob's default and the search's base
// value) has a place in it: a value above a same_above upper maps to upper, one between 0 and
// a zero_below lower maps to 0; any other value outside moves the bound. Empty when no such
// dimension exists (a fractional value for a whole-valued shape). REQUIRES: !shape.held.
std::optional<Dimension> ShapedDimension(const Dimension& table, const KnobShape& shape,
                                         const std::vector<double>& must_hold);

// The note a search prints for the knob `shape` shapes in `space` (a free dimension, or a
// constant when held), without a prefix: "fusion_threshold_mb searched in 0 or [0.00195313,
// 29.2744] MB: ...", "hierarchical_allreduce held at false: ...". REQUIRES: the knob is a
// dimension of `space`.
std::string JobSpaceNote(const KnobShape& shape, const Space& space);

// The knobs a search sets with a setting of the others (the knob table's set_with_others):
// `knobs` with them filled in for `job` on `backend` under `framework`. One rule today:
//   mpi_tcp_eager_limit: on Open MPI (kMpi) Horovod jobs of more than one node (their
//     cross-node messages go over the TCP BTL), when the setting's allreduces are small
//     (a fusion threshold of at most 1 MiB: its buffers; 0: each allreduce tensor alone, the
//     largest of at most 1 MiB), the limit that sends the largest message of Open MPI's
//     allreduce of the largest of them (Rabenseifner's first step: half the buffer, plus the
//     header) eagerly: the least power of two above it, when that is over Open MPI's own 64
//     KiB. Such messages otherwise go by rendezvous, a handshake that stalls where ranks share
//     cores (bench/executor/README.md, allreduce_spread), and the simulator, which prices
//     collectives at the calibrate's medians, predicts them as if they went eagerly. A value
//     already set (not 0) is kept, and so is every value of a setting the rule does not touch.
Knobs WithCompanionKnobs(const Knobs& knobs, const JobFacts& job, BackendKind backend,
                         Framework framework);

// Why `knobs` (a setting WithCompanionKnobs completed) carries what the rule sets: one line,
// "" when the rule sets nothing for its other knobs or the value is not the rule's.
std::string CompanionNote(const Knobs& knobs, const JobFacts& job, BackendKind backend,
                          Framework framework);

}  // namespace autotune::tuner
