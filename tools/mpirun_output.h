// Reading Open MPI's mpirun on the way to the user: its own notices (the blocks between
// lines of dashes) are taken out, and from them the rank that died, its host and the
// signal; everything else (the ranks' own lines) passes through unchanged.
#pragma once

#include <optional>
#include <string>

namespace autotune::cli {

struct DeadRank {
  int rank = -1;
  std::string host;
  int signal = 0;
  std::string signal_name;  // mpirun's, e.g. "Killed"
};

class MpirunOutputFilter {
 public:
  // Feeds bytes of mpirun's stderr; complete lines that pass are appended to *out, and so is
  // at once an unfinished line that starts with '\r' (a progress line redrawn in place).
  void Feed(const std::string& bytes, std::string* out);
  // End of output: a partial last line, or a notice block never closed, is passed on.
  void Finish(std::string* out);
  // The first rank mpirun says exited on a signal, if any.
  const std::optional<DeadRank>& dead() const { return dead_; }
  // Lines passed on so far, and the notices taken out (their first 16 KiB), for a job that
  // failed without a word of its own: then mpirun's text is better than silence.
  int passed_lines() const { return passed_lines_; }
  const std::string& dropped() const { return dropped_; }

 private:
  void Line(const std::string& line, std::string* out);
  std::string partial_;
  bool in_notice_ = false;
  std::string notice_;  // the open block's lines, passed on if it is never closed
  std::optional<DeadRank> dead_;
  int passed_lines_ = 0;
  std::string dropped_;
};

}  // namespace autotune::cli
