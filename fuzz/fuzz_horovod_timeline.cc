// Fuzz target: the Horovod timeline importer (formats/horovod_timeline.h) on arbitrary bytes,
// once with the topology taken from the rank ticks and one warm-up step, once with a given
// 2x2 topology, no warm-up and at most 3 steps. Whatever the input, ParseHorovodTimeline
// returns a Status of one line; a trace it accepts has the steps and tensors it reports.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "formats/horovod_timeline.h"

namespace {

void ImportOnce(const std::string& text, const autotune::ImportOptions& options) {
  autotune::Trace trace;
  autotune::ImportSummary summary;
  autotune::Status s = autotune::ParseHorovodTimeline(text, options, &trace, &summary);
  if (!s.ok()) {
    if (s.message().empty() || s.message().find('\n') != std::string::npos) std::abort();
    return;
  }
  if (trace.steps.empty() || summary.steps != static_cast<int>(trace.steps.size())) std::abort();
  if (summary.tensors != static_cast<int>(trace.run.workload.tensors.size())) std::abort();
  const size_t events = trace.run.workload.tensors.size() * trace.run.topology.world_size();
  for (const autotune::StepTrace& st : trace.steps) {
    if (!(st.step_ms > 0) || st.tensors.size() != events) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  autotune::ImportOptions options;
  options.source = "fuzz.json";
  ImportOnce(text, options);
  options.topology.nodes = 2;
  options.topology.ranks_per_node = 2;
  options.warmup_steps = 0;
  options.max_steps = 3;
  ImportOnce(text, options);
  return 0;
}
