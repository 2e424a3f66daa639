#include "tools/progress.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace autotune::cli {

ProgressLine::ProgressLine(bool quiet) : quiet_(quiet), last_(std::chrono::steady_clock::now()) {
  const char* forced = std::getenv(kProgressTtyEnv);
  terminal_ = isatty(STDERR_FILENO) || (forced != nullptr && std::strcmp(forced, "1") == 0);
}

ProgressLine::~ProgressLine() { Done(); }

void ProgressLine::Update(const std::string& text, bool last) {
  if (quiet_) return;
  const auto now = std::chrono::steady_clock::now();
  const double since = std::chrono::duration<double>(now - last_).count();
  // A terminal shows the first state at once; a log's first line comes after kLineEveryS
  // (work shorter than that logs nothing but its result).
  const bool due = terminal_ ? (!shown_ || since >= 0.1) : since >= kLineEveryS;
  if (!last && !due) return;
  if (last && !terminal_ && !shown_) return;
  last_ = now;
  shown_ = true;
  if (terminal_) {
    std::fprintf(stderr, "\r%s\x1b[K", text.c_str());  // rewrite the line, clear what is left
    drawn_ = true;
  } else {
    std::fprintf(stderr, "%s\n", text.c_str());
  }
  std::fflush(stderr);
}

void ProgressLine::Done() {
  if (!drawn_) return;
  std::fputc('\n', stderr);
  std::fflush(stderr);
  drawn_ = false;
}

std::string ProgressLine::Duration(double seconds) {
  const long s = seconds > 0 ? static_cast<long>(seconds + 0.5) : 0;
  char text[48];
  if (s >= 3600) {
    std::snprintf(text, sizeof text, "%ld h %02ld min", s / 3600, (s % 3600) / 60);
  } else if (s >= 60) {
    std::snprintf(text, sizeof text, "%ld min %02ld s", s / 60, s % 60);
  } else {
    std::snprintf(text, sizeof text, "%ld s", s);
  }
  return text;
}

}  // namespace autotune::cli
