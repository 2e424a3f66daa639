#include "tools/flag_checks.h"

#include <cmath>
#include <sstream>

namespace autotune::cli {
namespace {

// 1, 0.5, 1e+06: the shortest form that shows the bound.
std::string Show(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

// The value as a number, or false when it is not one.
bool ToNumber(const std::string& text, double* value) {
  if (text.empty()) return false;
  std::istringstream in(text);
  in >> *value;
  return in && in.peek() == std::istringstream::traits_type::eof() && std::isfinite(*value);
}

}  // namespace

CLI::Validator AtLeast(double min) {
  const std::string bound = Show(min);
  return CLI::Validator(
      [min, bound](std::string& value) -> std::string {
        double v = 0;
        if (!ToNumber(value, &v)) return "must be a number, not '" + value + "'";
        return v >= min ? std::string() : "must be at least " + bound;
      },
      ">= " + bound, "at least " + bound);
}

CLI::Validator GreaterThan(double min) {
  const std::string bound = Show(min);
  return CLI::Validator(
      [min, bound](std::string& value) -> std::string {
        double v = 0;
        if (!ToNumber(value, &v)) return "must be a number, not '" + value + "'";
        return v > min ? std::string() : "must be greater than " + bound;
      },
      "> " + bound, "greater than " + bound);
}

CLI::Validator Between(double min, double max) {
  const std::string low = Show(min), high = Show(max);
  return CLI::Validator(
      [min, max, low, high](std::string& value) -> std::string {
        double v = 0;
        if (!ToNumber(value, &v)) return "must be a number, not '" + value + "'";
        return v >= min && v <= max ? std::string() : "must be between " + low + " and " + high;
      },
      low + " to " + high, "between " + low + " and " + high);
}

}  // namespace autotune::cli
