#include "tools/mpirun_output.h"

#include <regex>

namespace autotune::cli {

namespace {

// A notice's frame: mpirun draws a line of dashes above and below each of its messages.
bool IsFrame(const std::string& line) {
  return line.size() >= 20 && line.find_first_not_of('-') == std::string::npos;
}

// Open MPI's shared-memory transport complains when a peer vanished mid-copy
// ("[host:pid] Read -1, expected 1266612, errno = 3"): a symptom of the death reported next.
bool IsPeerGoneNoise(const std::string& line) {
  static const std::regex noise(R"(^\[[^\]]+:\d+\] Read -1, expected \d+, errno = \d+$)");
  return std::regex_match(line, noise);
}

// mpirun failing to show one more notice after a job was aborted
// ("[host:pid] [[job,0],0] ORTE_ERROR_LOG: Out of resource in file .../show_help.c ...").
bool IsShowHelpNoise(const std::string& line) {
  return line.find("ORTE_ERROR_LOG") != std::string::npos &&
         line.find("show_help.c") != std::string::npos;
}

}  // namespace

void MpirunOutputFilter::Feed(const std::string& bytes, std::string* out) {
  partial_ += bytes;
  size_t start = 0;
  for (size_t nl = partial_.find('\n'); nl != std::string::npos;
       nl = partial_.find('\n', start)) {
    Line(partial_.substr(start, nl - start), out);
    start = nl + 1;
  }
  partial_.erase(0, start);
  // A progress line redrawn in place ("\r...", no newline until it is done) passes at once.
  if (!in_notice_ && !partial_.empty() && partial_[0] == '\r') {
    *out += partial_;
    partial_.clear();
  }
}

void MpirunOutputFilter::Finish(std::string* out) {
  if (!partial_.empty()) Line(partial_, out);
  partial_.clear();
  if (in_notice_) *out += notice_;
  in_notice_ = false;
  notice_.clear();
}

void MpirunOutputFilter::Line(const std::string& line, std::string* out) {
  if (IsFrame(line)) {
    in_notice_ = !in_notice_;
    if (!in_notice_ && dropped_.size() < 16384) dropped_ += notice_ + line + "\n";
    notice_ = in_notice_ ? line + "\n" : std::string();
    return;
  }
  if (!in_notice_) {
    if (!IsPeerGoneNoise(line) && !IsShowHelpNoise(line)) {
      *out += line + "\n";
      ++passed_lines_;
    }
    return;
  }
  notice_ += line + "\n";
  static const std::regex died(R"(process rank (\d{1,9}) with PID \d+ on node (\S+) )"
                               R"(exited on signal (\d{1,3}) \(([^)]*)\))");
  std::smatch m;
  if (!dead_ && std::regex_search(line, m, died)) {
    dead_ = DeadRank{std::stoi(m[1]), m[2], std::stoi(m[3]), m[4]};
  }
}

}  // namespace autotune::cli
