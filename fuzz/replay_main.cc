// Replays a fuzz target's corpus without libFuzzer: calls LLVMFuzzerTestOneInput once on every
// file of each directory (or file) named on the command line. Exit status 0 when all ran;
// a finding aborts the process, as it does under the fuzzer.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

int RunFile(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    std::cerr << file.string() << ": cannot read\n";
    return 1;
  }
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: " << argv[0] << " CORPUS_DIR_OR_FILE...\n";
    return 2;
  }
  int failures = 0, files = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path arg(argv[i]);
    std::vector<std::filesystem::path> inputs;
    if (std::filesystem::is_directory(arg)) {
      for (const auto& entry : std::filesystem::directory_iterator(arg)) {
        if (entry.is_regular_file()) inputs.push_back(entry.path());
      }
    } else {
      inputs.push_back(arg);
    }
    std::sort(inputs.begin(), inputs.end());
    for (const auto& input : inputs) {
      failures += RunFile(input);
      ++files;
    }
  }
  std::cout << files << " inputs replayed, " << failures << " unreadable\n";
  return files == 0 || failures > 0 ? 1 : 0;
}
