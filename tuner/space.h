// Space: the knobs the tuner may move, and how a setting maps to the unit cube.
//
// A setting ("Point") holds one native value per dimension, in dimension order:
//   continuous: the value in its unit (e.g. 32.0 MB); integer: an integral value;
//   boolean: 0 or 1; categorical: the index of the category.
// Free dimensions are encoded to [0,1]^encoded_size() for the model:
//   continuous / integer: one coordinate, linear, log, or log(1 + x) (which admits 0) between
//     the bounds, or "0 or log" (kZeroOrLog: 0, or log-scaled between the bounds, for a knob
//     whose values between 0 and the lower bound all behave as 0); integers are rounded in
//     native units when decoded;
//   boolean: one coordinate, decoded as value >= 0.5;
//   categorical: ONE-HOT, one coordinate per category, decoded as the arg max (ties go to
//     the first). One-hot rather than ordinal because categories (ring, tree) have no order;
//     each category then gets its own length scale in the ARD kernel.
// Constants (a knob the user fixed) have no coordinates at all: the model never sees them and
// Decode() always writes their fixed value, so the tuner cannot move them.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "traces/status.h"

namespace autotune::tuner {

enum class DimensionKind { kContinuous, kInteger, kBoolean, kCategorical };
// kLog1p encodes log(1 + x), so 0 is allowed. kZeroOrLog: the values are 0 and [lower, upper]
// (0 < lower <= upper; lower == upper makes a two-valued knob: 0 or upper). The coordinate's
// first share (kZeroOrLogZeroShare, or kTwoValuedZeroShare when lower == upper) decodes to 0,
// the rest log-scaled over [lower, upper], so a decoded value never lies between 0 and lower.
enum class Scale { kLinear, kLog, kLog1p, kZeroOrLog };
// 0 is one setting among the rest (no fusion, no cache), so it owns a share of the coordinate
// that a random draw or the acquisition's optimizer can land on, not a point of measure zero.
inline constexpr double kZeroOrLogZeroShare = 0.2;
inline constexpr double kTwoValuedZeroShare = 0.5;
// Runtime knobs may change between samples inside one run; per-launch knobs (library
// environment read at init) only between runs.
enum class Lifetime { kRuntime, kPerLaunch };

struct Dimension {
  std::string name;
  DimensionKind kind = DimensionKind::kContinuous;
  double lower = 0.0;  // continuous/integer: smallest value, native unit
  double upper = 1.0;  // continuous/integer: largest value, native unit
  Scale scale = Scale::kLinear;
  std::vector<std::string> categories;  // categorical only; at least one, distinct
  Lifetime lifetime = Lifetime::kRuntime;
  double default_value = 0.0;  // native value used by Space::Default()
  // Continuous/integer: every value above `upper` behaves as `upper` does (a fusion threshold
  // above the bytes one step reduces): the space holds none of them, and whoever maps a
  // setting into the space maps them to `upper` (tuner/knob_space.h). Space itself only
  // carries the fact.
  bool same_above = false;
  // kZeroOrLog: every value between 0 and `lower` behaves as 0 (a fusion threshold below the
  // two smallest tensors together); mapped to 0 the same way.
  bool zero_below = false;

  static Dimension Continuous(std::string name, double lower, double upper, Scale scale,
                              double default_value, Lifetime lifetime = Lifetime::kRuntime);
  static Dimension Integer(std::string name, double lower, double upper, Scale scale,
                           double default_value, Lifetime lifetime = Lifetime::kRuntime);
  static Dimension Boolean(std::string name, bool default_value,
                           Lifetime lifetime = Lifetime::kRuntime);
  static Dimension Categorical(std::string name, std::vector<std::string> categories,
                               int default_index, Lifetime lifetime = Lifetime::kRuntime);
};

using Point = std::vector<double>;  // native values, one per dimension (constants included)

class Space {
 public:
  Space() = default;

  // Appends a dimension. Fails naming the dimension when bounds are empty (lower == upper is
  // allowed for kZeroOrLog only), a log scale meets a non-positive lower bound (kLog,
  // kZeroOrLog) or one <= -1 (kLog1p), categories are missing or repeated, the default is
  // invalid, or the name is already used.
  Status AddDimension(Dimension dimension);
  // Fixes a dimension to a native value; it is then never tuned. Fails when the name is
  // unknown or the value is not valid for the dimension.
  Status SetConstant(const std::string& name, double native_value);
  // Same, from text a person wrote: "32", a boolean in the knob table's spellings
  // (traces/knob_table.h, ParseBoolText), or a category name.
  Status SetConstantText(const std::string& name, const std::string& text);

  int num_dimensions() const { return static_cast<int>(dimensions_.size()); }
  const Dimension& dimension(int i) const { return dimensions_[i]; }
  // Index of the named dimension, or -1.
  int IndexOf(const std::string& name) const;
  bool is_constant(int i) const { return constant_[i]; }
  // Number of unit-cube coordinates of the free dimensions (0 when everything is fixed).
  int encoded_size() const { return encoded_size_; }

  // Returns OK when every value is valid for its dimension and constants hold their value.
  Status Validate(const Point& point) const;
  // OK when `value` is a valid native value of dimension i (inside the bounds, or 0 on a
  // kZeroOrLog scale; integral where the dimension is, 0/1, a category index); else names the
  // dimension and the value.
  Status CheckValue(int i, double value) const;
  // Native -> unit cube. REQUIRES: point.size() == num_dimensions(). Values outside the bounds
  // are clamped (on a kZeroOrLog scale, a value <= 0 encodes as 0, one in (0, lower) as lower).
  Eigen::VectorXd Encode(const Point& point) const;
  // Unit cube -> native (constants filled in; integers rounded; categories by arg max).
  // REQUIRES: encoded.size() == encoded_size(). Coordinates outside [0,1] are clamped.
  Point Decode(const Eigen::VectorXd& encoded) const;
  // Encode(Decode(encoded)): the unit-cube point of the setting `encoded` stands for.
  Eigen::VectorXd Snap(const Eigen::VectorXd& encoded) const;

  // Every dimension at its default value, constants at their fixed value.
  Point Default() const;
  // A point drawn uniformly in the encoded cube (log-uniform on log dimensions), decoded.
  Point Random(std::mt19937_64& rng) const;

  // Text of one value for people and logs: "32", "3.5", "true", "ring" (continuous values
  // to 6 significant digits; settings move between the tuner and the knobs as numbers).
  std::string ValueText(const Point& point, int i) const;
  // Parses the text of a value for dimension i (SetConstantText's spellings); fails naming
  // the dimension and the text.
  StatusOr<double> ParseValue(int i, const std::string& text) const;
  // "name=value name=value ..." of a point (for logs).
  std::string Describe(const Point& point) const;

  // A copy where every per-launch dimension is a constant at its value in `fixed`: the space
  // an online tuner may search inside one run.
  Space RuntimeOnly(const Point& fixed) const;

 private:
  void Recount();

  std::vector<Dimension> dimensions_;
  std::vector<bool> constant_;
  std::vector<double> constant_value_;
  std::vector<int> offset_;  // first encoded coordinate of each free dimension, -1 if constant
  int encoded_size_ = 0;
};

}  // namespace autotune::tuner
