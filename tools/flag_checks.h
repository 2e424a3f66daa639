// Range checks of numeric flags whose refusal reads as the help does: "--np must be at least
// 1" (CLI11's own ranges print "Value 0 not in range 0.000000 to 1797...", a 309-digit bound).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace autotune::cli {

// The flag's value must be a number >= min. Help: ">= MIN"; refusal: "must be at least MIN".
CLI::Validator AtLeast(double min);
// The flag's value must be a number > min. Help: "> MIN"; refusal: "must be greater than MIN".
CLI::Validator GreaterThan(double min);
// The flag's value must lie in [min, max]. Help: "MIN to MAX"; refusal: "must be between MIN
// and MAX".
CLI::Validator Between(double min, double max);

}  // namespace autotune::cli
