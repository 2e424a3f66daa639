#include "traces/trace.h"

#include <algorithm>
#include <cmath>

#include "traces/calibration.h"

namespace autotune {

const char* AlgorithmName(Algorithm a) {
  return a == Algorithm::kHierarchical ? "hierarchical" : "flat";
}

const char* RunKindName(RunKind kind) {
  switch (kind) {
    case RunKind::kMeasured: return "measured";
    case RunKind::kSimulated: return "simulated";
    case RunKind::kImported: return "imported";
  }
  return "measured";
}

bool IsMeasuredKind(RunKind kind) { return kind != RunKind::kSimulated; }

BackendKind CollectiveLibrary(const RunInfo& run) {
  return run.framework == Framework::kDdp && run.backend != BackendKind::kNccl ? BackendKind::kGloo
                                                                               : run.backend;
}

Status ParseRunKind(const std::string& name, RunKind* out) {
  for (RunKind k : {RunKind::kMeasured, RunKind::kSimulated, RunKind::kImported}) {
    if (name == RunKindName(k)) {
      *out = k;
      return Status::Ok();
    }
  }
  return Status::InvalidArgument("unknown run kind \"" + name +
                                 "\" (measured | simulated | imported)");
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double Mean(const std::vector<double>& v) {
  double sum = 0.0;
  for (double x : v) sum += x;
  return v.empty() ? 0.0 : sum / static_cast<double>(v.size());
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  // Nearest rank: the smallest value with at least p% of the values at or below it.
  double rank = std::ceil(p / 100.0 * static_cast<double>(v.size()));
  size_t index = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  return v[std::min(index, v.size() - 1)];
}

const char* ScopeName(Scope s) {
  switch (s) {
    case Scope::kWorld: return "world";
    case Scope::kIntra: return "intra";
    case Scope::kCross: return "cross";
    case Scope::kHierarchical: return "hierarchical";
    case Scope::kCopy: return "copy";
  }
  return "world";
}

Status ParseScope(const std::string& s, Scope* out) {
  for (Scope c : {Scope::kWorld, Scope::kIntra, Scope::kCross, Scope::kHierarchical,
                  Scope::kCopy}) {
    if (s == ScopeName(c)) {
      *out = c;
      return Status::Ok();
    }
  }
  return Status::InvalidArgument("unknown calibration scope \"" + s + "\"");
}

}  // namespace autotune
