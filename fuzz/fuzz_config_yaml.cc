// Fuzz target: the config-file YAML parser (formats/config_file.h) on arbitrary bytes. Whatever
// the input, ParseConfigYaml returns a Status of one line; a file it accepts writes back to
// YAML that parses again.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "formats/config_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  autotune::ConfigFile config;
  autotune::Status s = autotune::ParseConfigYaml(text, "fuzz.yaml", &config);
  if (!s.ok()) {
    if (s.message().empty() || s.message().find('\n') != std::string::npos) std::abort();
    return 0;
  }
  autotune::ConfigFile again;
  if (!autotune::ParseConfigYaml(autotune::ConfigToYaml(config), "again", &again).ok()) {
    std::abort();
  }
  return 0;
}
