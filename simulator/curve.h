// MeasuredCurve: one calibrated curve (collective time against message size), evaluated by
// piecewise-linear interpolation in bytes inside the measured range: exact for a
// latency + bytes/bandwidth cost between two measured sizes, where log-log interpolation
// of the same cost errs by a few percent at 4x size steps.
#pragma once

#include <cstdint>
#include <vector>

namespace autotune::sim {

class MeasuredCurve {
 public:
  struct Point {
    double bytes = 0.0;
    double time_us = 0.0;
  };

  MeasuredCurve() = default;
  // Builds the curve from points in any order. Repeated sizes are merged (median time);
  // points with bytes <= 0 or time_us <= 0 are dropped. A size that took more than 1.5x
  // the log-log interpolation of its two neighbours is a spike and gets that
  // interpolation. The times are then made non-decreasing in size (isotonic regression):
  // a bigger message never costs less, whatever the measurement noise said.
  explicit MeasuredCurve(std::vector<Point> points);

  bool empty() const { return bytes_.empty(); }
  int size() const { return static_cast<int>(bytes_.size()); }
  double min_bytes() const { return min_bytes_; }
  double max_bytes() const { return max_bytes_; }
  // True when bytes lies inside [min_bytes, max_bytes].
  bool Covers(double bytes) const { return !empty() && bytes >= min_bytes_ && bytes <= max_bytes_; }
  // Interpolated time in microseconds. REQUIRES: !empty(); bytes is clamped to the range.
  double TimeUs(double bytes) const;
  // The (smoothed) points, ascending in bytes.
  std::vector<Point> Points() const;

 private:
  std::vector<double> bytes_;    // ascending
  std::vector<double> time_us_;  // non-decreasing
  double min_bytes_ = 0.0;
  double max_bytes_ = 0.0;
};

}  // namespace autotune::sim
