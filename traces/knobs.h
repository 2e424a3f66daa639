// Knobs: the communication settings autotune tunes (DESIGN.md, "Knobs").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "traces/framework.h"
#include "traces/status.h"

namespace autotune {

// A knob setting. The defaults are here (the initializers); every other fact about a knob
// (range, unit, lifetime, flag, YAML key, environment) is its row in the knob table
// (traces/knob_table.h).
struct Knobs {
  double fusion_threshold_mb = 128.0;  // tensor fusion buffer, MB (1024*1024 bytes); 0 = none
  double cycle_time_ms = 1.0;          // background cycle period, ms
  int cache_capacity = 1024;           // response cache entries; 0 = off
  bool hierarchical_allreduce = false;
  bool hierarchical_allgather = false;
  int num_groups = 0;                  // fusion groups; 0 = greedy fusion

  // Per-launch backend knobs; "" / 0 = the library's own default.
  std::string nccl_algo;               // NCCL_ALGO
  std::string nccl_proto;              // NCCL_PROTO
  int nccl_max_nchannels = 0;          // NCCL_MAX_NCHANNELS
  std::string nccl_cross = "nccl";     // hierarchical cross-node step on GPUs: nccl | mpi
  int mpi_allreduce_algorithm = 0;     // OMPI_MCA_coll_tuned_allreduce_algorithm id
  int mpi_tcp_eager_limit = 0;         // OMPI_MCA_btl_tcp_eager_limit, bytes

  // PyTorch DDP's knobs (arguments of DistributedDataParallel, set by `apply` without edits).
  double ddp_bucket_cap_mb = 25.0;     // bucket_cap_mb: gradient bucket size, MB
  double ddp_first_bucket_mb = 1.0;    // the first bucket's size, MB
  bool ddp_gradient_as_bucket_view = false;  // gradients are views into the buckets

  // Fusion threshold in bytes (fusion_threshold_mb * 1024 * 1024, rounded).
  int64_t threshold_bytes() const;
  // DDP's bucket caps in bytes (MB * 1024 * 1024 truncated, as DDP computes them).
  int64_t ddp_bucket_cap_bytes() const;
  int64_t ddp_first_bucket_bytes() const;
  // Returns OK when every field is inside its range, else names the first field at fault.
  Status Validate() const;
  bool operator==(const Knobs&) const = default;
};

// The knob names, in knob-table order (the order CSV files and tables show them).
const std::vector<std::string>& KnobNames();

nlohmann::json KnobsToJson(const Knobs& knobs);
// Parses the object written by KnobsToJson (unknown keys are an error). Validates.
Status KnobsFromJson(const nlohmann::json& j, Knobs* knobs);
// Sets one knob by name from its text value ("32", "true", "ring"). Does not validate ranges.
Status SetKnob(Knobs* knobs, const std::string& name, const std::string& value);
// Text value of one knob ("" if the name is unknown).
std::string KnobValue(const Knobs& knobs, const std::string& name);
// "threshold=64MB cycle=1ms cache=1024 hier_ar=0 hier_ag=0 groups=0" style summary.
// Only the knobs of `framework` (KnobInFramework) are shown.
std::string KnobsShort(const Knobs& knobs, Framework framework = Framework::kHorovod);

}  // namespace autotune
