// The one result line every benchmark prints for each figure it measures:
//
//   bench=NAME value=V unit=U anchor=NAME anchor_value=A ratio=R target=T met=yes|no|n/a
//
// NAME is "<benchmark>.<figure>" (e.g. executor.fused_allreduce_4MiB); anchor names what the
// value is compared with; ratio = value / anchor_value ("n/a" when the anchor value is 0 or
// a number is not finite); target is a bound on the ratio ("ratio>=0.9", "ratio<1", ...)
// or "none"; met says whether the ratio is within it, "n/a" when there is no target, and
// "no" whenever the measurement failed a check. Every field is one token: whitespace in a
// name or unit is printed as '_'. Values print with 6 significant digits, the ratio with 4.
// Lines that start with '#' are context (quartiles, sizes, load) and carry no figure.
#pragma once

#include <cstdint>
#include <string>

namespace autotune::bench {

// How the ratio must compare with a target's bound.
enum class Comparison { kNone, kBelow, kAtMost, kAtLeast, kAbove };

// A bound on ratio = value / anchor_value; Comparison::kNone: the figure is information.
struct Target {
  Comparison comparison = Comparison::kNone;
  double bound = 0.0;
};

// No target: the figure is printed for information.
Target NoTarget();
// ratio < bound, ratio <= bound, ratio >= bound, ratio > bound.
Target RatioBelow(double bound);
Target RatioAtMost(double bound);
Target RatioAtLeast(double bound);
Target RatioAbove(double bound);

struct Figure {
  std::string bench;          // "<benchmark>.<figure>"
  double value = 0.0;         // in `unit`
  std::string unit;           // e.g. "GB/s", "ms", "runs", "1" for a pure number
  std::string anchor;         // what the value is compared with
  double anchor_value = 0.0;  // in `unit`
  Target target = {};         // default: none (information)
  bool valid = true;          // false: the measurement failed a check (met=no)
};

enum class Verdict { kMet, kMissed, kNoTarget };

// value / anchor_value; NaN when anchor_value is 0 or either is not finite.
double Ratio(const Figure& figure);

// kMissed when the figure is not valid or its ratio is NaN or outside the target; kNoTarget
// when a valid figure has no target; kMet otherwise.
Verdict Judge(const Figure& figure);

// "none", or "ratio" followed by "<", "<=", ">=" or ">" and the bound (%g).
std::string FormatTarget(const Target& target);

// Parses FormatTarget's output; false (target unchanged) for anything else.
bool ParseTarget(const std::string& text, Target* target);

// The figure's result line (see the top of this file), without a newline.
std::string FormatFigure(const Figure& figure);

// Prints FormatFigure's line and a newline to stdout and flushes; returns Judge(figure).
Verdict PrintFigure(const Figure& figure);

// A size as a token for figure names: "4MiB" for whole MiB, "64KiB" for whole KiB, else "1000B".
std::string SizeLabel(int64_t bytes);

}  // namespace autotune::bench
