#include "tools/search/sample_log.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include "traces/knob_table.h"

namespace autotune::cli {

namespace {

// The knobs of Horovod's autotune log, in its column order (hierarchical allreduce, allgather,
// cycle time, fusion threshold in MB), then the other knobs in table order.
std::vector<const KnobSpec*> MakeLogColumns(bool horovod) {
  std::vector<const KnobSpec*> out;
  for (const KnobSpec& spec : KnobTable()) {
    if ((spec.horovod_log_column >= 0) == horovod) out.push_back(&spec);
  }
  if (horovod) {
    std::sort(out.begin(), out.end(), [](const KnobSpec* a, const KnobSpec* b) {
      return a->horovod_log_column < b->horovod_log_column;
    });
  }
  return out;
}

const std::vector<const KnobSpec*>& LogColumns(bool horovod) {
  static const std::vector<const KnobSpec*> kHorovod = MakeLogColumns(true);
  static const std::vector<const KnobSpec*> kOthers = MakeLogColumns(false);
  return horovod ? kHorovod : kOthers;
}

}  // namespace

std::string HorovodLogColumnsText() {
  std::string out;
  for (const KnobSpec* spec : LogColumns(true)) {
    if (!out.empty()) out += ", ";
    const std::string name = spec->horovod_log_name;
    std::string unit = spec->summary_unit;
    for (char& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const std::string suffix = "_" + unit;
    const bool named_in_unit =
        name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
    out += name;
    // A column whose name does not say its unit ("tensor_fusion_threshold") gets it.
    if (!unit.empty() && !named_in_unit) out += std::string(" in ") + spec->summary_unit;
  }
  return out;
}

Status SampleLog::Open(const std::string& path) {
  if (path.empty()) return Status::Ok();
  file_.open(path, std::ios::trunc);
  if (!file_) return Status::IoError(path + ": cannot write the autotune log");
  for (const KnobSpec* spec : LogColumns(true)) file_ << spec->horovod_log_name << ',';
  file_ << "score";
  for (const KnobSpec* spec : LogColumns(false)) file_ << ',' << spec->name;
  file_ << ",fidelity,score_bytes_per_s\n";
  return Status::Ok();
}

void SampleLog::Write(const Knobs& k, const std::string& fidelity, double score_bytes_per_s) {
  if (!file_.is_open()) return;
  for (const KnobSpec* spec : LogColumns(true)) file_ << KnobNumber(*spec, k) << ',';
  file_ << score_bytes_per_s * 1e-6;  // Horovod's unit: bytes per microsecond
  for (const KnobSpec* spec : LogColumns(false)) file_ << ',' << KnobText(*spec, k);
  file_ << ',' << fidelity << ',' << score_bytes_per_s << '\n';
  file_.flush();
}

tuner::SampleListener LogTo(SampleLog* log) {
  return [log](const Knobs& knobs, Fidelity fidelity, double score_bytes_per_s) {
    log->Write(knobs, FidelityName(fidelity), score_bytes_per_s);
  };
}

}  // namespace autotune::cli
