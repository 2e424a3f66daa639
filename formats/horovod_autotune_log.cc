// Horovod's autotune log (formats/horovod_autotune_log.h).
#include "formats/horovod_autotune_log.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <sstream>

#include "traces/files.h"
#include "traces/knob_table.h"

namespace autotune {
namespace {

constexpr int kColumns = 7;
constexpr int kTorusColumn = 2;  // no knob's: autotune has no torus allreduce
constexpr const char* kTorusName = "torus_allreduce";
constexpr const char* kScoreName = "score";
constexpr const char* kFidelityName = "fidelity";  // autotune's own log, after Horovod's
constexpr double kBytesPerSecondPerScore = 1e6;    // Horovod's score is bytes per microsecond
constexpr int64_t kMaxLogBytes = int64_t{64} << 20;

// The knob row of Horovod's column `column`; nullptr for torus_allreduce and the score.
const KnobSpec* RowOfColumn(int column) {
  for (const KnobSpec& spec : KnobTable()) {
    if (spec.horovod_log_column == column) return &spec;
  }
  return nullptr;
}

std::string ColumnName(int column) {
  if (column == kTorusColumn) return kTorusName;
  if (column == kColumns - 1) return kScoreName;
  return RowOfColumn(column)->horovod_log_name;
}

// The number in the knob's column, as Horovod holds it (a boolean or a capacity as 0/1).
double ColumnValue(const KnobSpec& spec, const Knobs& knobs) {
  const double value = KnobNumber(spec, knobs);
  return spec.horovod_log_as_enabled ? (value > 0 ? 1.0 : 0.0) : value;
}

std::string Trim(const std::string& text) {
  const size_t begin = text.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return "";
  return text.substr(begin, text.find_last_not_of(" \t\r") - begin + 1);
}

std::vector<std::string> Cells(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream in(line);
  std::string cell;
  while (std::getline(in, cell, ',')) out.push_back(Trim(cell));
  if (!line.empty() && line.back() == ',') out.push_back("");
  return out;
}

// The whole of `text` as a finite number.
bool ParseNumber(const std::string& text, double* value) {
  if (text.empty()) return false;
  char* end = nullptr;
  *value = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size() && std::isfinite(*value);
}

}  // namespace

std::string HorovodLogHeader() {
  std::string out;
  for (int column = 0; column < kColumns; ++column) out += (column ? "," : "") + ColumnName(column);
  return out;
}

std::string HorovodLogRow(const Knobs& knobs, double score_bytes_per_s) {
  std::ostringstream out;  // a stream's default double format, as Horovod writes its cells
  for (int column = 0; column + 1 < kColumns; ++column) {
    if (column == kTorusColumn) {
      out << 0 << ", ";  // Horovod writes a space after this cell
      continue;
    }
    out << ColumnValue(*RowOfColumn(column), knobs) << ',';
  }
  out << score_bytes_per_s / kBytesPerSecondPerScore;
  return out.str();
}

Status ReadHorovodAutotuneLog(const std::string& path, const Knobs& base, HorovodLog* out) {
  const std::string shown = EscapeForTerminal(path);
  std::string text;
  AUTOTUNE_RETURN_IF_ERROR(ReadInputFile(path, "Horovod autotune log", kMaxLogBytes, &text));
  std::istringstream in(text);
  std::string line;
  const std::string not_a_log = shown +
                                ": not a Horovod autotune log (its first line is the header \"" +
                                HorovodLogHeader() + "\")";
  if (!std::getline(in, line)) return Status::InvalidArgument(not_a_log + ": the file is empty");
  // Where each of Horovod's columns is in this file's header (-1: absent).
  const std::vector<std::string> header = Cells(line);
  std::map<std::string, int> position;
  for (size_t i = 0; i < header.size(); ++i) position.emplace(header[i], static_cast<int>(i));
  std::vector<int> at(kColumns, -1);
  for (int column = 0; column < kColumns; ++column) {
    const auto found = position.find(ColumnName(column));
    if (found != position.end()) {
      at[column] = found->second;
    } else if (column != kTorusColumn) {  // older Horovods have no torus_allreduce column
      return Status::InvalidArgument(not_a_log + ": line 1 has no column " + ColumnName(column));
    }
  }
  const auto fidelity = position.find(kFidelityName);

  std::vector<HorovodLogEntry> rows;
  std::vector<bool> torus_rows;  // per row: torus_allreduce 1
  bool saw_best_row = false;     // autotune's own best row, the last
  for (int number = 2; std::getline(in, line); ++number) {
    if (Trim(line).empty()) continue;
    const std::string where = shown + " line " + std::to_string(number) + ": ";
    const std::vector<std::string> cells = Cells(line);
    if (cells.size() != header.size()) {
      return Status::InvalidArgument(where + std::to_string(cells.size()) + " cells, but the " +
                                     "header has " + std::to_string(header.size()));
    }
    if (fidelity != position.end() && cells[fidelity->second] == "simulated") {
      return Status::InvalidArgument(where +
                                     "a simulated sample (its fidelity column): only measured "
                                     "samples are imported");
    }
    const bool best_row =
        fidelity != position.end() && cells[fidelity->second] == kHorovodLogBestFidelity;
    if (saw_best_row) {
      return Status::InvalidArgument(where + "a row after the best row (line " +
                                     std::to_string(rows.back().line) +
                                     ", fidelity \"best\"), which ends the log");
    }
    saw_best_row = best_row;
    HorovodLogEntry row;
    row.line = number;
    row.knobs = base;
    bool torus = false;
    for (int column = 0; column < kColumns; ++column) {
      if (at[column] < 0) continue;
      const std::string& cell = cells[at[column]];
      const std::string quoted = ColumnName(column) + " \"" + EscapeForTerminal(cell) + "\"";
      double value = 0.0;
      if (!ParseNumber(cell, &value))
        return Status::InvalidArgument(where + quoted + " is not a number");
      const KnobSpec* spec = RowOfColumn(column);
      const bool flag = column == kTorusColumn ||
                        (spec && (spec->type == KnobType::kBool || spec->horovod_log_as_enabled));
      if (flag && value != 0.0 && value != 1.0) {
        return Status::InvalidArgument(where + quoted + " is not 0 or 1");
      }
      if (column == kTorusColumn) {
        torus = value == 1.0;
      } else if (column == kColumns - 1) {
        if (!(value > 0.0)) return Status::InvalidArgument(where + quoted + " is not above 0");
        row.score_bytes_per_s = value * kBytesPerSecondPerScore;
      } else if (spec->horovod_log_as_enabled) {
        const double kept =
            KnobNumber(*spec, base) > 0 ? KnobNumber(*spec, base) : KnobNumber(*spec, Knobs{});
        SetKnobNumber(*spec, value == 1.0 ? kept : 0.0, &row.knobs);
      } else {
        SetKnobNumber(*spec, spec->type == KnobType::kReal ? RoundToKnobPrecision(value) : value,
                      &row.knobs);
        const Status valid = ValidateKnob(*spec, row.knobs);
        if (!valid.ok()) return Status::InvalidArgument(where + quoted + ": " + valid.message());
      }
    }
    rows.push_back(std::move(row));
    torus_rows.push_back(torus);
  }
  if (rows.empty()) {
    return Status::InvalidArgument(shown +
                                   ": a Horovod autotune log without rows (Horovod writes one "
                                   "per tuned sample, after its warm-up samples)");
  }
  HorovodLog log;
  if (saw_best_row) {
    if (!torus_rows.back()) log.best = rows.back();
    rows.pop_back();
    torus_rows.pop_back();
    if (rows.empty()) {
      return Status::InvalidArgument(shown + ": a best row (fidelity \"best\") without the samples "
                                     "it was decided from");
    }
  } else if (fidelity == position.end() && rows.size() >= 2) {
    // Horovod's last row, once its tuning ends, repeats the best score of the rows before it
    // (autotune's own log, with its fidelity column, marks its best row instead: there a last
    // sample that ties the best is a sample).
    double best_before = 0.0;
    for (size_t i = 0; i + 1 < rows.size(); ++i)
      best_before = std::max(best_before, rows[i].score_bytes_per_s);
    if (rows.back().score_bytes_per_s == best_before) {
      if (!torus_rows.back()) log.best = rows.back();
      rows.pop_back();
    }
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    if (torus_rows[i]) {
      log.torus_lines.push_back(rows[i].line);
    } else {
      log.samples.push_back(std::move(rows[i]));
    }
  }
  *out = std::move(log);
  return Status::Ok();
}

}  // namespace autotune
