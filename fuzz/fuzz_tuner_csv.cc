// Fuzz target: the NCCL tuner CSV parser (formats/nccl_tuner_csv.h) on arbitrary bytes.
// Whatever the input, ParseNcclTunerCsv returns a Status of one line; every rule it accepts
// is valid and formats back to a line it reads again as the same rule.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "formats/nccl_tuner_csv.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<autotune::NcclTunerRule> rules;
  autotune::Status s = autotune::ParseNcclTunerCsv(text, "fuzz.csv", &rules);
  if (!s.ok()) {
    if (s.message().empty() || s.message().find('\n') != std::string::npos) std::abort();
    return 0;
  }
  for (const autotune::NcclTunerRule& rule : rules) {
    if (!autotune::ValidateNcclTunerRule(rule).ok()) std::abort();
    std::string line;
    if (!autotune::FormatNcclTunerCsv({&rule, 1}, "", &line).ok()) std::abort();
    std::vector<autotune::NcclTunerRule> back;
    if (!autotune::ParseNcclTunerCsv(line, "again", &back).ok()) std::abort();
    if (back.size() != 1 || !(back[0] == rule)) std::abort();
  }
  return 0;
}
