// Progress of long work (record, calibrate, search) on stderr, never on stdout: redrawn in
// place when stderr is a terminal (or, for rank 0 under `--np`, when the launcher's is:
// $AUTOTUNE_PROGRESS_TTY=1), otherwise one line every kLineEveryS seconds; nothing when quiet.
#pragma once

#include <chrono>
#include <string>

namespace autotune::cli {

// Set by the `--np` launcher for its ranks when its own stderr is a terminal.
inline constexpr const char* kProgressTtyEnv = "AUTOTUNE_PROGRESS_TTY";
inline constexpr double kLineEveryS = 5.0;

class ProgressLine {
 public:
  explicit ProgressLine(bool quiet);
  ~ProgressLine();  // Done()
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // Shows text (one line, no newline) when due: on a terminal at once and then at most every
  // 0.1 s; else once per kLineEveryS, the first after kLineEveryS. `last` (the final state)
  // shows regardless, except in a log that has shown nothing yet.
  void Update(const std::string& text, bool last = false);
  // Ends an in-place line so that what follows starts on a fresh line. Idempotent.
  void Done();

  // "1 h 02 min", "3 min 05 s", "42 s": a duration for "time left".
  static std::string Duration(double seconds);

 private:
  bool quiet_ = false;
  bool terminal_ = false;
  bool drawn_ = false;  // an in-place line is on the screen
  bool shown_ = false;  // something was shown at all
  std::chrono::steady_clock::time_point last_;
};

}  // namespace autotune::cli
