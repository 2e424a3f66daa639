#include "tools/search/sample_log.h"

#include <sstream>
#include <vector>

#include "formats/horovod_autotune_log.h"
#include "traces/knob_table.h"

namespace autotune::cli {

namespace {

// The knobs after Horovod's columns: those whose value Horovod's columns do not hold (every knob
// without a column, and the cache capacity, of which Horovod's holds only "enabled").
const std::vector<const KnobSpec*>& OtherColumns() {
  static const std::vector<const KnobSpec*> kOthers = [] {
    std::vector<const KnobSpec*> out;
    for (const KnobSpec& spec : KnobTable()) {
      if (spec.horovod_log_column < 0 || spec.horovod_log_as_enabled) out.push_back(&spec);
    }
    return out;
  }();
  return kOthers;
}

Status OpenOne(const std::string& path, std::ofstream* file) {
  file->open(path, std::ios::trunc);
  if (!*file) return Status::IoError(path + ": cannot write the autotune log");
  *file << HorovodLogHeader();
  for (const KnobSpec* spec : OtherColumns()) *file << ',' << spec->name;
  *file << ",fidelity,score_bytes_per_s\n";
  file->flush();
  return Status::Ok();
}

}  // namespace

std::string SimulatedLogPath(const std::string& path) { return path + ".simulated.csv"; }

std::string HorovodLogColumnsText() {
  std::string out;
  std::stringstream header(HorovodLogHeader());
  for (std::string name; std::getline(header, name, ',');) {
    if (!out.empty()) out += ", ";
    out += name;
    for (const KnobSpec& spec : KnobTable()) {
      // A column whose name does not say its unit ("tensor_fusion_threshold") gets it.
      const std::string unit = spec.summary_unit;
      if (spec.horovod_log_column >= 0 && name == spec.horovod_log_name && !unit.empty() &&
          !name.ends_with("_" + std::string(spec.unit))) {
        out += " in " + unit;
      }
    }
  }
  return out;
}

Status SampleLog::Open(const std::string& path) {
  if (path.empty()) return Status::Ok();
  AUTOTUNE_RETURN_IF_ERROR(OpenOne(path, &measured_));
  return OpenOne(SimulatedLogPath(path), &simulated_);
}

namespace {

void WriteRow(const Knobs& k, const char* fidelity, double score_bytes_per_s, std::ofstream* file) {
  if (!file->is_open()) return;
  *file << HorovodLogRow(k, score_bytes_per_s);
  for (const KnobSpec* spec : OtherColumns()) *file << ',' << KnobText(*spec, k);
  *file << ',' << fidelity << ',' << score_bytes_per_s << '\n';
  file->flush();
}

}  // namespace

void SampleLog::Write(const Knobs& k, Fidelity fidelity, double score_bytes_per_s) {
  WriteRow(k, FidelityName(fidelity), score_bytes_per_s,
           fidelity == Fidelity::kMeasured ? &measured_ : &simulated_);
}

void SampleLog::WriteBest(const Knobs& k, double measured_score_bytes_per_s) {
  WriteRow(k, kHorovodLogBestFidelity, measured_score_bytes_per_s, &measured_);
}

tuner::SampleListener LogTo(SampleLog* log) {
  return [log](const Knobs& knobs, Fidelity fidelity, double score_bytes_per_s) {
    log->Write(knobs, fidelity, score_bytes_per_s);
  };
}

}  // namespace autotune::cli
