// Prints one benchmark result line (bench/common/result.h) for the shell benchmarks, so that
// they print exactly what the C++ ones do:
//   bench_figure --bench NAME --value V --unit U --anchor NAME --anchor-value A
//                [--target none|ratio<B|ratio<=B|ratio>=B|ratio>B] [--invalid]
// Exit status 0 when the line is printed (met or not), 2 on bad usage (one line on stderr).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench/common/result.h"

namespace autotune::bench {
namespace {

bool ParseNumber(const std::string& text, double* out) {
  char* end = nullptr;
  *out = std::strtod(text.c_str(), &end);
  return !text.empty() && *end == '\0';
}

// Fills figure from argv; the flag at fault in *error otherwise.
bool ParseArgs(int argc, char** argv, Figure* figure, std::string* error) {
  bool have_value = false, have_anchor_value = false;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--invalid") {
      figure->valid = false;
      continue;
    }
    if (i + 1 >= argc) {
      *error = flag + ": missing value";
      return false;
    }
    const std::string v = argv[++i];
    bool ok = true;
    if (flag == "--bench") {
      figure->bench = v;
    } else if (flag == "--value") {
      ok = have_value = ParseNumber(v, &figure->value);
    } else if (flag == "--unit") {
      figure->unit = v;
    } else if (flag == "--anchor") {
      figure->anchor = v;
    } else if (flag == "--anchor-value") {
      ok = have_anchor_value = ParseNumber(v, &figure->anchor_value);
    } else if (flag == "--target") {
      ok = ParseTarget(v, &figure->target);
    } else {
      *error = flag + ": unknown flag";
      return false;
    }
    if (!ok) {
      *error = flag + " " + v + ": not a valid value";
      return false;
    }
  }
  if (figure->bench.empty() || !have_value || figure->unit.empty() || figure->anchor.empty() ||
      !have_anchor_value) {
    *error = "--bench, --value, --unit, --anchor and --anchor-value are required";
    return false;
  }
  return true;
}

}  // namespace
}  // namespace autotune::bench

int main(int argc, char** argv) {
  autotune::bench::Figure figure;
  std::string error;
  if (!autotune::bench::ParseArgs(argc, argv, &figure, &error)) {
    std::fprintf(stderr, "bench_figure: %s\n", error.c_str());
    return 2;
  }
  autotune::bench::PrintFigure(figure);
  return 0;
}
