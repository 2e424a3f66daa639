// The CSV file read by NCCL's example tuner plugin (ext-tuner/example in NVIDIA/nccl, loaded
// with NCCL_TUNER_PLUGIN and pointed at the file by NCCL_TUNER_CONFIG_FILE).
//
// Tuner CSV, one rule per line, no header line ('#' starts a comment line):
//   collective,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,numPipeOps,regBuff
// The plugin takes the FIRST rule whose collective matches, min_bytes <= message bytes <=
// max_bytes (both inclusive) and whose nNodes/nRanks/numPipeOps/regBuff match (-1 = any).
// It maps an unknown collective to allreduce and an unknown algorithm or protocol to
// ring/simple without a word, and reads at most 255 characters of a line: the writer here
// therefore checks every name and refuses overlapping ranges of one collective/topology
// (a later rule would silently never apply).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "traces/knobs.h"
#include "traces/status.h"

namespace autotune {

// The largest max_bytes the plugin reads (it parses size_t); the example uses 4294967295
// for "every size", which misses messages of 4 GiB and more.
inline constexpr int64_t kNcclTunerAnyBytes = INT64_MAX;

// One line of the tuner CSV.
struct NcclTunerRule {
  // broadcast | reduce | allgather | reducescatter | allreduce. Default allreduce.
  std::string collective = "allreduce";
  int64_t min_bytes = 0;                   // inclusive, >= 0. Default 0.
  int64_t max_bytes = kNcclTunerAnyBytes;  // inclusive, >= min_bytes. Default: no limit.
  // tree | ring | collnet_direct | collnet_chain | nvls | nvls_tree | pat (required).
  std::string algorithm;
  std::string protocol;  // ll | ll128 | simple (required)
  int channels = -1;     // channels (SMs) to use, [1, 64]; -1 = NCCL's choice. Default -1.
  int nodes = -1;        // nNodes the rule applies to; -1 = any. Default -1.
  int ranks = -1;        // nRanks the rule applies to; -1 = any. Default -1.
  int pipe_ops = -1;     // numPipeOps to match; -1 = any. Default -1.
  int reg_buff = -1;     // 0 / 1: only unregistered / registered buffers; -1 = any.

  bool operator==(const NcclTunerRule&) const = default;
};

// Returns OK when every field is in range, else names the field and value at fault.
Status ValidateNcclTunerRule(const NcclTunerRule& rule);

// Formats rules as the plugin's CSV, in the given order, after `comment` (each of its lines
// written as a '#' line; "" = none). Fails, writing nothing, on an invalid rule or on two
// rules of one collective and topology (nodes, ranks, pipe_ops, reg_buff) whose ranges
// overlap; the error names both rules by index.
Status FormatNcclTunerCsv(std::span<const NcclTunerRule> rules, const std::string& comment,
                          std::string* out);
// FormatNcclTunerCsv written to path (replaced if present).
Status WriteNcclTunerCsvFile(const std::string& path, std::span<const NcclTunerRule> rules,
                             const std::string& comment);
// Parses the CSV (8 to 10 fields per line, '#' comments, blank lines) and validates every
// rule; `source` (a file name) and the line number prefix every error.
Status ParseNcclTunerCsv(const std::string& text, const std::string& source,
                         std::vector<NcclTunerRule>* rules);

// The tuner CSV's algorithm name for a Knobs::nccl_algo value ("nvlstree" -> "nvls_tree").
// "collnet" (both CollNet variants for NCCL_ALGO) has no single CSV name: InvalidArgument.
Status NcclTunerAlgorithm(const std::string& knob_algo, std::string* csv_name);

// One rule per collective (allreduce, allgather, ...) covering every message size with the
// knobs' algorithm, protocol and channel count, for the given topology (-1 = any).
// REQUIRES knobs.nccl_algo and knobs.nccl_proto set; else InvalidArgument.
Status NcclTunerRulesFromKnobs(const Knobs& knobs, std::span<const std::string> collectives,
                               int nodes, int ranks, std::vector<NcclTunerRule>* rules);

}  // namespace autotune
