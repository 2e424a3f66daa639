#include "simulator/curve.h"

#include <algorithm>
#include <cmath>

#include "traces/trace.h"

namespace autotune::sim {
namespace {

// Pool-adjacent-violators: the non-decreasing sequence closest to y in least squares.
std::vector<double> Isotonic(const std::vector<double>& y) {
  std::vector<double> level;
  std::vector<int> count;
  for (double v : y) {
    level.push_back(v);
    count.push_back(1);
    while (level.size() > 1 && level[level.size() - 2] > level.back()) {
      double merged_sum =
          level[level.size() - 2] * count[count.size() - 2] + level.back() * count.back();
      int merged_count = count[count.size() - 2] + count.back();
      level.pop_back();
      count.pop_back();
      level.back() = merged_sum / merged_count;
      count.back() = merged_count;
    }
  }
  std::vector<double> out;
  out.reserve(y.size());
  for (size_t i = 0; i < level.size(); ++i) out.insert(out.end(), count[i], level[i]);
  return out;
}

// An interior point more than this factor above the log-log interpolation of its two
// neighbours is a spike (the calibration's repetitions of that size all ran while
// something else held the cores), not the shape of the curve: a real change of algorithm
// moves the following sizes too.
constexpr double kSpikeFactor = 1.5;

// Replaces each spike by its neighbours' interpolation; judged against the raw neighbours.
void RemoveSpikes(const std::vector<double>& bytes, std::vector<double>* time_us) {
  const std::vector<double> raw = *time_us;
  for (size_t i = 1; i + 1 < raw.size(); ++i) {
    const double f = std::log(bytes[i] / bytes[i - 1]) / std::log(bytes[i + 1] / bytes[i - 1]);
    const double expected = raw[i - 1] * std::pow(raw[i + 1] / raw[i - 1], f);
    if (raw[i] > kSpikeFactor * expected) (*time_us)[i] = expected;
  }
}

}  // namespace

MeasuredCurve::MeasuredCurve(std::vector<Point> points) {
  std::erase_if(points, [](const Point& p) {
    return !(p.bytes > 0.0) || !(p.time_us > 0.0) || !std::isfinite(p.bytes) ||
           !std::isfinite(p.time_us);
  });
  if (points.empty()) return;
  std::sort(points.begin(), points.end(),
            [](const Point& a, const Point& b) { return a.bytes < b.bytes; });
  std::vector<double> times_by_size;
  for (size_t i = 0; i < points.size();) {
    size_t j = i;
    std::vector<double> times;
    while (j < points.size() && points[j].bytes == points[i].bytes) {
      times.push_back(points[j].time_us);
      ++j;
    }
    bytes_.push_back(points[i].bytes);
    times_by_size.push_back(Median(std::move(times)));
    max_bytes_ = points[i].bytes;
    i = j;
  }
  RemoveSpikes(bytes_, &times_by_size);
  time_us_ = Isotonic(times_by_size);
  min_bytes_ = points.front().bytes;
}

double MeasuredCurve::TimeUs(double bytes) const {
  const int n = size();
  if (n == 1 || bytes <= min_bytes_) return time_us_.front();
  if (bytes >= max_bytes_) return time_us_.back();
  // Few points (a calibration has ~20 sizes): a linear scan beats a binary search.
  int hi = 1;
  while (hi < n - 1 && bytes_[hi] < bytes) ++hi;
  const int lo = hi - 1;
  const double f = (bytes - bytes_[lo]) / (bytes_[hi] - bytes_[lo]);
  return time_us_[lo] + f * (time_us_[hi] - time_us_[lo]);
}

std::vector<MeasuredCurve::Point> MeasuredCurve::Points() const {
  std::vector<Point> out;
  for (int i = 0; i < size(); ++i) out.push_back({bytes_[i], time_us_[i]});
  return out;
}

}  // namespace autotune::sim
