// CheckImportedTrace (formats/import_options.h): what every importer's trace must keep.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "formats/import_options.h"
#include "traces/workload.h"

namespace autotune {
namespace {

constexpr double kMaxTimeUs = kMaxImportedStepMs * 1e3;

bool Plausible(double us) { return std::isfinite(us) && std::fabs(us) <= kMaxTimeUs; }

std::string Show(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.6g", v);
  return buffer;
}

}  // namespace

std::string ImportSourceHash(const std::string& content, const ImportOptions& options) {
  uint64_t hash = 14695981039346656037ull;  // FNV-1a, 64 bits
  const auto add = [&hash](const std::string& bytes) {
    for (const unsigned char c : bytes) hash = (hash ^ c) * 1099511628211ull;
    hash = (hash ^ 0xff) * 1099511628211ull;  // a separator no byte sequence can imitate alone
  };
  add(content);
  add(std::to_string(options.topology.nodes) + "x" +
      std::to_string(options.topology.ranks_per_node));
  add(std::to_string(options.warmup_steps) + "/" + std::to_string(options.max_steps));
  add(options.workload_name);
  add(KnobsToJson(options.knobs).dump());
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(hash));
  return hex;
}

Status CheckImportedTrace(const Trace& trace, const std::string& source) {
  const Workload& w = trace.run.workload;
  Status name = ValidateName(w.name);
  if (!name.ok())
    return Status::InvalidArgument(source + ": the workload's name " + name.message());
  {  // the workload must read back as the store will read it
    Workload back;
    Status readable;
    try {
      readable = ParseWorkloadJson(WorkloadToJson(w).dump(), "workload", &back);
    } catch (const nlohmann::json::exception&) {
      readable = Status::InvalidArgument("workload: a name is not UTF-8");
    }
    if (!readable.ok()) return readable.WithPrefix(source);
  }
  for (const StepTrace& st : trace.steps) {
    const std::string at = source + ": step " + std::to_string(st.step) + ": ";
    if (!(st.step_ms > 0.0) || st.step_ms > kMaxImportedStepMs) {
      return Status::InvalidArgument(at + "lasts " + Show(st.step_ms) +
                                     " ms, outside (0, 86400000] ms (a day); are the "
                                     "timestamps microseconds?");
    }
    const auto out_of_range = [&](const char* what, double us) {
      return Status::InvalidArgument(at + what + " " + Show(us) +
                                     " us is more than a day (8.64e10 us) from the step's start");
    };
    if (!Plausible(st.backward_start_us))
      return out_of_range("backward start", st.backward_start_us);
    for (const TensorEvent& e : st.tensors) {
      if (!Plausible(e.ready_us)) return out_of_range("a ready time", e.ready_us);
      if (!Plausible(e.done_us)) return out_of_range("a done time", e.done_us);
    }
    for (const CollectiveRecord& c : st.collectives) {
      for (double us : {c.start_us, c.copy_in_end_us, c.comm_end_us, c.end_us}) {
        if (!Plausible(us)) return out_of_range("a collective's time", us);
      }
    }
    for (const CycleRecord& c : st.cycles) {
      for (double us : {c.start_us, c.negotiate_end_us}) {
        if (!Plausible(us)) return out_of_range("a cycle's time", us);
      }
    }
  }
  return Status::Ok();
}

}  // namespace autotune
