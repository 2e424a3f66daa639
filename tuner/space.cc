#include "tuner/space.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "traces/knob_table.h"

namespace autotune::tuner {
namespace {

// kZeroOrLog's log part (ToUnit and FromUnit handle its 0 first).
double Transform(Scale scale, double x) {
  switch (scale) {
    case Scale::kLog:
    case Scale::kZeroOrLog:
      return std::log(x);
    case Scale::kLog1p:
      return std::log1p(x);
    case Scale::kLinear:
      break;
  }
  return x;
}

double InverseTransform(Scale scale, double t) {
  switch (scale) {
    case Scale::kLog:
    case Scale::kZeroOrLog:
      return std::exp(t);
    case Scale::kLog1p:
      return std::expm1(t);
    case Scale::kLinear:
      break;
  }
  return t;
}

double ZeroShare(const Dimension& d) {
  return d.lower == d.upper ? kTwoValuedZeroShare : kZeroOrLogZeroShare;
}

// Where t in [0,1] lies between lower and upper on a kZeroOrLog scale (1 when they are equal).
double ZeroOrLogFraction(const Dimension& d, double x) {
  if (d.lower == d.upper) return 1.0;
  return (std::log(x) - std::log(d.lower)) / (std::log(d.upper) - std::log(d.lower));
}

// Unit-cube coordinate of a continuous/integer value.
double ToUnit(const Dimension& d, double x) {
  if (d.scale == Scale::kZeroOrLog) {
    if (!(x > 0.0)) return 0.0;
    const double z = ZeroShare(d);
    return std::clamp(z + (1.0 - z) * ZeroOrLogFraction(d, std::clamp(x, d.lower, d.upper)), z,
                      1.0);
  }
  double lo = Transform(d.scale, d.lower);
  double hi = Transform(d.scale, d.upper);
  double clamped = std::clamp(x, d.lower, d.upper);
  return std::clamp((Transform(d.scale, clamped) - lo) / (hi - lo), 0.0, 1.0);
}

double FromUnit(const Dimension& d, double u) {
  u = std::clamp(u, 0.0, 1.0);
  double x = 0.0;
  if (d.scale == Scale::kZeroOrLog) {
    const double z = ZeroShare(d);
    if (u < z) return 0.0;
    const double t = (u - z) / (1.0 - z);
    x = d.lower == d.upper
            ? d.upper
            : std::exp(std::log(d.lower) + t * (std::log(d.upper) - std::log(d.lower)));
  } else {
    double lo = Transform(d.scale, d.lower);
    double hi = Transform(d.scale, d.upper);
    x = InverseTransform(d.scale, lo + u * (hi - lo));
  }
  if (d.kind == DimensionKind::kInteger) x = std::round(x);
  return std::clamp(x, d.lower, d.upper);
}

// x held inside dimension d's values (0 stays 0 on a kZeroOrLog scale).
double Clamped(const Dimension& d, double x) {
  if (d.scale == Scale::kZeroOrLog && !(x > 0.0)) return 0.0;
  return std::clamp(x, d.lower, d.upper);
}

int Width(const Dimension& d) {
  return d.kind == DimensionKind::kCategorical ? static_cast<int>(d.categories.size()) : 1;
}

std::string FormatNumber(double x, const char* format) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), format, x);
  return buffer;
}

}  // namespace

Dimension Dimension::Continuous(std::string name, double lower, double upper, Scale scale,
                                double default_value, Lifetime lifetime) {
  Dimension d;
  d.name = std::move(name);
  d.kind = DimensionKind::kContinuous;
  d.lower = lower;
  d.upper = upper;
  d.scale = scale;
  d.default_value = default_value;
  d.lifetime = lifetime;
  return d;
}

Dimension Dimension::Integer(std::string name, double lower, double upper, Scale scale,
                             double default_value, Lifetime lifetime) {
  Dimension d = Continuous(std::move(name), lower, upper, scale, default_value, lifetime);
  d.kind = DimensionKind::kInteger;
  return d;
}

Dimension Dimension::Boolean(std::string name, bool default_value, Lifetime lifetime) {
  Dimension d;
  d.name = std::move(name);
  d.kind = DimensionKind::kBoolean;
  d.lower = 0.0;
  d.upper = 1.0;
  d.default_value = default_value ? 1.0 : 0.0;
  d.lifetime = lifetime;
  return d;
}

Dimension Dimension::Categorical(std::string name, std::vector<std::string> categories,
                                 int default_index, Lifetime lifetime) {
  Dimension d;
  d.name = std::move(name);
  d.kind = DimensionKind::kCategorical;
  d.lower = 0.0;
  d.upper = static_cast<double>(categories.size()) - 1.0;
  d.categories = std::move(categories);
  d.default_value = default_index;
  d.lifetime = lifetime;
  return d;
}

Status Space::AddDimension(Dimension d) {
  const std::string where = "dimension '" + d.name + "'";
  if (d.name.empty()) return Status::InvalidArgument("dimension without a name");
  if (IndexOf(d.name) >= 0) return Status::InvalidArgument(where + " is defined twice");
  switch (d.kind) {
    case DimensionKind::kContinuous:
    case DimensionKind::kInteger:
      if (!std::isfinite(d.lower) || !std::isfinite(d.upper) || !(d.lower <= d.upper) ||
          (d.lower == d.upper && d.scale != Scale::kZeroOrLog)) {
        return Status::InvalidArgument(where + ": bounds [" + FormatNumber(d.lower, "%g") + ", " +
                                       FormatNumber(d.upper, "%g") + "] are empty");
      }
      if ((d.scale == Scale::kLog || d.scale == Scale::kZeroOrLog) && d.lower <= 0.0) {
        return Status::InvalidArgument(where + ": log scale needs a positive lower bound");
      }
      if (d.scale == Scale::kLog1p && d.lower <= -1.0) {
        return Status::InvalidArgument(where + ": log(1+x) scale needs a lower bound > -1");
      }
      if (d.kind == DimensionKind::kInteger &&
          (d.lower != std::round(d.lower) || d.upper != std::round(d.upper))) {
        return Status::InvalidArgument(where + ": integer bounds must be integral");
      }
      break;
    case DimensionKind::kBoolean:
      d.lower = 0.0;
      d.upper = 1.0;
      break;
    case DimensionKind::kCategorical: {
      if (d.categories.empty()) return Status::InvalidArgument(where + ": no categories");
      std::set<std::string> seen(d.categories.begin(), d.categories.end());
      if (seen.size() != d.categories.size()) {
        return Status::InvalidArgument(where + ": repeated category");
      }
      d.lower = 0.0;
      d.upper = static_cast<double>(d.categories.size()) - 1.0;
      break;
    }
  }
  dimensions_.push_back(std::move(d));
  constant_.push_back(false);
  constant_value_.push_back(0.0);
  Status default_ok = CheckValue(num_dimensions() - 1, dimensions_.back().default_value);
  if (!default_ok.ok()) {
    dimensions_.pop_back();
    constant_.pop_back();
    constant_value_.pop_back();
    return default_ok.WithPrefix("default value");
  }
  Recount();
  return Status::Ok();
}

Status Space::CheckValue(int i, double value) const {
  const Dimension& d = dimensions_[i];
  const std::string where = "dimension '" + d.name + "'";
  if (!std::isfinite(value)) return Status::InvalidArgument(where + ": value is not finite");
  switch (d.kind) {
    case DimensionKind::kContinuous:
      break;
    case DimensionKind::kInteger:
      if (value != std::round(value)) {
        return Status::InvalidArgument(where + ": " + FormatNumber(value, "%g") +
                                       " is not an integer");
      }
      break;
    case DimensionKind::kBoolean:
      if (value != 0.0 && value != 1.0) {
        return Status::InvalidArgument(where + ": boolean value must be 0 or 1");
      }
      return Status::Ok();
    case DimensionKind::kCategorical:
      if (value != std::round(value) || value < 0.0 || value > d.upper) {
        return Status::InvalidArgument(where + ": no category with index " +
                                       FormatNumber(value, "%g"));
      }
      return Status::Ok();
  }
  if (d.scale == Scale::kZeroOrLog && value == 0.0) return Status::Ok();
  if (value < d.lower || value > d.upper) {
    return Status::InvalidArgument(
        where + ": " + FormatNumber(value, "%g") + " is outside " +
        (d.scale == Scale::kZeroOrLog ? "{0} and " : "") + "[" + FormatNumber(d.lower, "%g") +
        ", " + FormatNumber(d.upper, "%g") + "]");
  }
  return Status::Ok();
}

Status Space::SetConstant(const std::string& name, double native_value) {
  int i = IndexOf(name);
  if (i < 0) return Status::InvalidArgument("no dimension named '" + name + "' to fix");
  AUTOTUNE_RETURN_IF_ERROR(CheckValue(i, native_value).WithPrefix("constant"));
  constant_[i] = true;
  constant_value_[i] = native_value;
  Recount();
  return Status::Ok();
}

Status Space::SetConstantText(const std::string& name, const std::string& text) {
  int i = IndexOf(name);
  if (i < 0) return Status::InvalidArgument("no dimension named '" + name + "' to fix");
  StatusOr<double> value = ParseValue(i, text);
  if (!value.ok()) return value.status();
  return SetConstant(name, *value);
}

int Space::IndexOf(const std::string& name) const {
  for (int i = 0; i < num_dimensions(); ++i) {
    if (dimensions_[i].name == name) return i;
  }
  return -1;
}

void Space::Recount() {
  offset_.assign(dimensions_.size(), -1);
  encoded_size_ = 0;
  for (int i = 0; i < num_dimensions(); ++i) {
    if (constant_[i]) continue;
    offset_[i] = encoded_size_;
    encoded_size_ += Width(dimensions_[i]);
  }
}

Status Space::Validate(const Point& point) const {
  if (static_cast<int>(point.size()) != num_dimensions()) {
    return Status::InvalidArgument("point has " + std::to_string(point.size()) + " values for " +
                                   std::to_string(num_dimensions()) + " dimensions");
  }
  for (int i = 0; i < num_dimensions(); ++i) {
    AUTOTUNE_RETURN_IF_ERROR(CheckValue(i, point[i]));
    if (constant_[i] && point[i] != constant_value_[i]) {
      return Status::InvalidArgument("dimension '" + dimensions_[i].name +
                                     "' is a constant and must stay at " + ValueText(Default(), i));
    }
  }
  return Status::Ok();
}

Eigen::VectorXd Space::Encode(const Point& point) const {
  Eigen::VectorXd encoded = Eigen::VectorXd::Zero(encoded_size_);
  for (int i = 0; i < num_dimensions(); ++i) {
    if (constant_[i]) continue;
    const Dimension& d = dimensions_[i];
    int at = offset_[i];
    switch (d.kind) {
      case DimensionKind::kContinuous:
      case DimensionKind::kInteger:
        encoded[at] = ToUnit(d, point[i]);
        break;
      case DimensionKind::kBoolean:
        encoded[at] = point[i] >= 0.5 ? 1.0 : 0.0;
        break;
      case DimensionKind::kCategorical: {
        int index = std::clamp(static_cast<int>(std::lround(point[i])), 0, Width(d) - 1);
        encoded[at + index] = 1.0;
        break;
      }
    }
  }
  return encoded;
}

Point Space::Decode(const Eigen::VectorXd& encoded) const {
  Point point(dimensions_.size());
  for (int i = 0; i < num_dimensions(); ++i) {
    if (constant_[i]) {
      point[i] = constant_value_[i];
      continue;
    }
    const Dimension& d = dimensions_[i];
    int at = offset_[i];
    switch (d.kind) {
      case DimensionKind::kContinuous:
      case DimensionKind::kInteger:
        point[i] = FromUnit(d, encoded[at]);
        break;
      case DimensionKind::kBoolean:
        point[i] = encoded[at] >= 0.5 ? 1.0 : 0.0;
        break;
      case DimensionKind::kCategorical: {
        int best = 0;
        for (int c = 1; c < Width(d); ++c) {
          if (encoded[at + c] > encoded[at + best]) best = c;
        }
        point[i] = best;
        break;
      }
    }
  }
  return point;
}

Eigen::VectorXd Space::Snap(const Eigen::VectorXd& encoded) const {
  return Encode(Decode(encoded));
}

Point Space::Default() const {
  Point point(dimensions_.size());
  for (int i = 0; i < num_dimensions(); ++i) {
    point[i] = constant_[i] ? constant_value_[i] : dimensions_[i].default_value;
  }
  return point;
}

Point Space::Random(std::mt19937_64& rng) const {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  Point point = Default();
  for (int i = 0; i < num_dimensions(); ++i) {
    if (constant_[i]) continue;
    const Dimension& d = dimensions_[i];
    switch (d.kind) {
      case DimensionKind::kContinuous:
        point[i] = FromUnit(d, unit(rng));
        break;
      case DimensionKind::kInteger: {
        // Uniform over the encoded interval, each integer owning the part that rounds to it.
        point[i] = FromUnit(d, unit(rng));
        break;
      }
      case DimensionKind::kBoolean:
        point[i] = unit(rng) < 0.5 ? 0.0 : 1.0;
        break;
      case DimensionKind::kCategorical:
        point[i] = std::uniform_int_distribution<int>(0, Width(d) - 1)(rng);
        break;
    }
  }
  return point;
}

std::string Space::ValueText(const Point& point, int i) const {
  const Dimension& d = dimensions_[i];
  switch (d.kind) {
    case DimensionKind::kContinuous:
      return FormatNumber(point[i], "%.6g");
    case DimensionKind::kInteger:
      return FormatNumber(point[i], "%.0f");
    case DimensionKind::kBoolean:
      return point[i] >= 0.5 ? "true" : "false";
    case DimensionKind::kCategorical: {
      int index = std::clamp(static_cast<int>(std::lround(point[i])), 0, Width(d) - 1);
      return d.categories[index];
    }
  }
  return "";
}

StatusOr<double> Space::ParseValue(int i, const std::string& text) const {
  const Dimension& d = dimensions_[i];
  const std::string where = "dimension '" + d.name + "'";
  switch (d.kind) {
    case DimensionKind::kBoolean: {
      bool value = false;
      if (ParseBoolText(text, &value)) return value ? 1.0 : 0.0;
      return Status::InvalidArgument(where + ": '" + text + "' is not a boolean");
    }
    case DimensionKind::kCategorical:
      for (size_t c = 0; c < d.categories.size(); ++c) {
        if (d.categories[c] == text) return static_cast<double>(c);
      }
      return Status::InvalidArgument(where + ": '" + text + "' is not one of its categories");
    case DimensionKind::kContinuous:
    case DimensionKind::kInteger: {
      errno = 0;
      char* end = nullptr;
      double value = std::strtod(text.c_str(), &end);
      if (text.empty() || end != text.c_str() + text.size() || errno != 0) {
        return Status::InvalidArgument(where + ": '" + text + "' is not a number");
      }
      AUTOTUNE_RETURN_IF_ERROR(CheckValue(i, value));
      return value;
    }
  }
  return Status::Internal(where + ": unknown kind");
}

std::string Space::Describe(const Point& point) const {
  std::string out;
  for (int i = 0; i < num_dimensions(); ++i) {
    if (!out.empty()) out += ' ';
    out += dimensions_[i].name + "=" + ValueText(point, i);
  }
  return out;
}

Space Space::RuntimeOnly(const Point& fixed) const {
  Space runtime = *this;
  for (int i = 0; i < num_dimensions(); ++i) {
    if (dimensions_[i].lifetime == Lifetime::kPerLaunch && !constant_[i]) {
      runtime.constant_[i] = true;
      runtime.constant_value_[i] = Clamped(dimensions_[i], fixed[i]);
    }
  }
  runtime.Recount();
  return runtime;
}

}  // namespace autotune::tuner
