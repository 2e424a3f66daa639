// The score: bytes reduced + gathered per second of wall time (Horovod's definition; its
// autotuner divides the bytes of a sample's steps by the sample's total time).
//
// Every score autotune stores or compares is this one statistic over a series of steps:
// total bytes / total time. A measured run, an online-tuning sample and a simulated replay
// all call these functions, so measured and simulated scores can be blended.
#pragma once

#include <cstdint>
#include <span>

namespace autotune {

// total_bytes / total_seconds; 0 when total_seconds <= 0.
double ScoreBytesPerSecond(double total_bytes, double total_seconds);

// The score of a series of steps: sum of step_bytes / sum of step_ms (in seconds), in step
// order; 0 for an empty series or a zero total time.
// REQUIRES: step_bytes.size() == step_ms.size().
double ScoreBytesPerSecond(std::span<const int64_t> step_bytes, std::span<const double> step_ms);

}  // namespace autotune
