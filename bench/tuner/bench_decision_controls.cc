// The decision rule (tuner/run_comparison.h: CompareRuns, the one rule behind search, search
// --live and record --autotune) applied to real runs whose answer is known: pairs of settings
// that run the job the same way (decision_controls.py finds them in bench/horovod's and
// bench/ddp's stored grids). Every "faster" verdict on such a pair is a false one.
//
// Reads one JSON object on stdin:
//   {"comparisons": [{"name": "...",
//                     "default": [{"steps": [ms, ...], "sequence": N}, ...],
//                     "candidate": [...],
//                     "every_setting": [[{"steps": [...]}, ...], ...]}]}
// ("every_setting": each measured setting's runs, for the run-to-run noise pooled over all of
// them, as a search that had measured them would pool it; absent or empty: the comparison's
// own repeats). Prints one JSON line per comparison: its name, the verdict and the interval.
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tuner/run_comparison.h"

namespace {

using autotune::tuner::CompareOptions;
using autotune::tuner::CompareRuns;
using autotune::tuner::RealRun;
using autotune::tuner::RealRuns;
using autotune::tuner::Remeasure;
using autotune::tuner::RunComparison;
using autotune::tuner::RunToRun;
using autotune::tuner::RunToRunNoise;

RealRuns ReadRuns(const nlohmann::json& runs) {
  RealRuns out;
  for (const nlohmann::json& r : runs) {
    out.emplace_back(r.at("steps").get<std::vector<double>>(), r.value("sequence", -1));
  }
  return out;
}

const char* RemeasureName(Remeasure r) {
  switch (r) {
    case Remeasure::kNone: return "none";
    case Remeasure::kDefault: return "default";
    case Remeasure::kCandidate: return "candidate";
  }
  return "?";
}

}  // namespace

int main() {
  nlohmann::json in;
  try {
    std::cin >> in;
    for (const nlohmann::json& c : in.at("comparisons")) {
      CompareOptions options;
      if (c.contains("every_setting") && !c["every_setting"].empty()) {
        std::vector<RealRuns> every;
        for (const nlohmann::json& s : c["every_setting"]) every.push_back(ReadRuns(s));
        const RunToRunNoise noise = RunToRun(every);
        options.across_cv = noise.cv;
        options.across_degrees = noise.degrees;
      }
      const RunComparison r =
          CompareRuns(ReadRuns(c.at("default")), ReadRuns(c.at("candidate")), options);
      nlohmann::json out = {{"name", c.at("name")},
                            {"faster", r.Faster()},
                            {"valid", r.valid},
                            {"run_to_run_known", r.run_to_run_known},
                            {"remeasure", RemeasureName(r.remeasure)},
                            {"speedup", r.speedup.speedup},
                            {"low", r.speedup.low},
                            {"high", r.speedup.high},
                            {"across_cv", options.across_cv}};
      std::cout << out.dump() << "\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "bench_decision_controls: bad input: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
