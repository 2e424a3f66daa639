// Knobs: the communication settings autotune tunes. One plain struct; every field
// states its unit, range and default right beside it (DESIGN.md, "Knobs").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "traces/status.h"

namespace autotune {

struct Knobs {
  // Tensor fusion buffer size in MB (MB = 1024*1024 bytes, horovodrun's meaning).
  // 0 disables fusion (one collective per tensor). Range [0, 512]. Default 128.
  double fusion_threshold_mb = 128.0;
  // Background cycle period in milliseconds. Range [0.1, 100]. Default 1.
  double cycle_time_ms = 1.0;
  // Response cache capacity in entries; 0 turns the cache off. Range [0, 4096]. Default 1024.
  int cache_capacity = 1024;
  // Hierarchical allreduce (intra reduce-scatter, cross allreduce, intra allgather). Default off.
  bool hierarchical_allreduce = false;
  // Hierarchical allgather (intra gather, cross allgather, intra broadcast). Default off.
  bool hierarchical_allgather = false;
  // Fusion groups; 0 = greedy fusion over all ready tensors. Range [0, 64]. Default 0.
  int num_groups = 0;

  // Per-launch backend knobs (read by the library at init; change only between runs).
  // Empty / 0 means the library's own default.
  std::string nccl_algo;      // NCCL_ALGO: "", ring, tree, collnet, nvls, ...
  std::string nccl_proto;     // NCCL_PROTO: "", simple, ll, ll128
  int nccl_max_nchannels = 0; // NCCL_MAX_NCHANNELS: 0 = default, else [1, 64]
  // Hierarchical cross-node step on GPUs: "nccl" or "mpi" (host staging). Default "nccl".
  std::string nccl_cross = "nccl";
  // Open MPI coll_tuned allreduce algorithm id (OMPI_MCA_coll_tuned_allreduce_algorithm);
  // 0 = Open MPI's own decision. Range [0, 6].
  int mpi_allreduce_algorithm = 0;

  // Fusion threshold in bytes (fusion_threshold_mb * 1024 * 1024, rounded).
  int64_t threshold_bytes() const;
  // Returns OK when every field is inside its range, else names the first field at fault.
  Status Validate() const;
  bool operator==(const Knobs&) const = default;
};

// The tunable knob names, in the order CSV files and tables show them.
const std::vector<std::string>& KnobNames();

nlohmann::json KnobsToJson(const Knobs& knobs);
// Parses the object written by KnobsToJson (unknown keys are an error). Validates.
Status KnobsFromJson(const nlohmann::json& j, Knobs* knobs);
// Sets one knob by name from its text value ("32", "true", "ring"). Does not validate ranges.
Status SetKnob(Knobs* knobs, const std::string& name, const std::string& value);
// Text value of one knob ("" if the name is unknown).
std::string KnobValue(const Knobs& knobs, const std::string& name);
// "threshold=64MB cycle=1ms cache=1024 hier_ar=0 hier_ag=0 groups=0" style summary.
std::string KnobsShort(const Knobs& knobs);

}  // namespace autotune
