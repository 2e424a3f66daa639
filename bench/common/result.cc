#include "bench/common/result.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace autotune::bench {
namespace {

struct ComparisonName {
  Comparison comparison;
  const char* op;
};

// Longest operators first, so that "<=" is not read as "<".
constexpr ComparisonName kComparisons[] = {{Comparison::kAtMost, "<="},
                                           {Comparison::kAtLeast, ">="},
                                           {Comparison::kBelow, "<"},
                                           {Comparison::kAbove, ">"}};

Target Make(Comparison comparison, double bound) {
  Target t;
  t.comparison = comparison;
  t.bound = bound;
  return t;
}

// text with every whitespace character replaced by '_' ("-" when empty): one token.
std::string Token(const std::string& text) {
  if (text.empty()) return "-";
  std::string out = text;
  for (char& c : out) {
    if (std::isspace(static_cast<unsigned char>(c))) c = '_';
  }
  return out;
}

std::string Number(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, v);
  return buf;
}

}  // namespace

Target NoTarget() { return Target(); }
Target RatioBelow(double bound) { return Make(Comparison::kBelow, bound); }
Target RatioAtMost(double bound) { return Make(Comparison::kAtMost, bound); }
Target RatioAtLeast(double bound) { return Make(Comparison::kAtLeast, bound); }
Target RatioAbove(double bound) { return Make(Comparison::kAbove, bound); }

double Ratio(const Figure& figure) {
  if (figure.anchor_value == 0.0 || !std::isfinite(figure.value) ||
      !std::isfinite(figure.anchor_value)) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  return figure.value / figure.anchor_value;
}

Verdict Judge(const Figure& figure) {
  if (!figure.valid) return Verdict::kMissed;
  const Target& t = figure.target;
  if (t.comparison == Comparison::kNone) return Verdict::kNoTarget;
  const double r = Ratio(figure);
  if (std::isnan(r)) return Verdict::kMissed;
  bool met = false;
  switch (t.comparison) {
    case Comparison::kBelow:
      met = r < t.bound;
      break;
    case Comparison::kAtMost:
      met = r <= t.bound;
      break;
    case Comparison::kAtLeast:
      met = r >= t.bound;
      break;
    case Comparison::kAbove:
      met = r > t.bound;
      break;
    case Comparison::kNone:
      break;
  }
  return met ? Verdict::kMet : Verdict::kMissed;
}

std::string FormatTarget(const Target& target) {
  for (const ComparisonName& c : kComparisons) {
    if (c.comparison == target.comparison) {
      return std::string("ratio") + c.op + Number("%g", target.bound);
    }
  }
  return "none";
}

bool ParseTarget(const std::string& text, Target* target) {
  if (text == "none") {
    *target = NoTarget();
    return true;
  }
  if (text.rfind("ratio", 0) != 0) return false;
  for (const ComparisonName& c : kComparisons) {
    const std::string prefix = std::string("ratio") + c.op;
    if (text.rfind(prefix, 0) != 0) continue;
    const std::string number = text.substr(prefix.size());
    char* end = nullptr;
    const double bound = std::strtod(number.c_str(), &end);
    if (number.empty() || *end != '\0' || !std::isfinite(bound)) return false;
    *target = Make(c.comparison, bound);
    return true;
  }
  return false;
}

std::string FormatFigure(const Figure& figure) {
  const double ratio = Ratio(figure);
  const Verdict verdict = Judge(figure);
  const char* met = verdict == Verdict::kMet ? "yes" : verdict == Verdict::kMissed ? "no" : "n/a";
  return "bench=" + Token(figure.bench) + " value=" + Number("%.6g", figure.value) +
         " unit=" + Token(figure.unit) + " anchor=" + Token(figure.anchor) +
         " anchor_value=" + Number("%.6g", figure.anchor_value) +
         " ratio=" + (std::isnan(ratio) ? std::string("n/a") : Number("%.4g", ratio)) +
         " target=" + FormatTarget(figure.target) + " met=" + met;
}

Verdict PrintFigure(const Figure& figure) {
  std::printf("%s\n", FormatFigure(figure).c_str());
  std::fflush(stdout);
  return Judge(figure);
}

std::string SizeLabel(int64_t bytes) {
  constexpr int64_t kKiB = 1024, kMiB = kKiB * kKiB;
  if (bytes > 0 && bytes % kMiB == 0) return std::to_string(bytes / kMiB) + "MiB";
  if (bytes > 0 && bytes % kKiB == 0) return std::to_string(bytes / kKiB) + "KiB";
  return std::to_string(bytes) + "B";
}

}  // namespace autotune::bench
