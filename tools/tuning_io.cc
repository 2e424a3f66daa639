#include "tools/tuning_io.h"

#include <algorithm>
#include <vector>

#include "traces/knob_table.h"

namespace autotune::cli {

Status KnobsToPoint(const tuner::Space& space, const Knobs& knobs, tuner::Point* point) {
  point->assign(space.num_dimensions(), 0.0);
  for (int i = 0; i < space.num_dimensions(); ++i) {
    StatusOr<double> value = space.ParseValue(i, KnobValue(knobs, space.dimension(i).name));
    if (!value.ok()) return value.status();
    (*point)[i] = *value;
  }
  return Status::Ok();
}

Status PointToKnobs(const tuner::Space& space, const tuner::Point& point, const Knobs& base,
                    Knobs* knobs) {
  *knobs = base;
  for (int i = 0; i < space.num_dimensions(); ++i) {
    AUTOTUNE_RETURN_IF_ERROR(SetKnob(knobs, space.dimension(i).name, space.ValueText(point, i)));
  }
  return knobs->Validate();
}

namespace {

// The knobs of Horovod's autotune log, in its column order (hierarchical allreduce, allgather,
// cycle time, fusion threshold in MB), then the other knobs in table order.
std::vector<const KnobSpec*> LogColumns(bool horovod) {
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

}  // namespace

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

Status ObserveSimulated(const sim::Simulation& simulation, const Knobs& base, SampleLog* log,
                        tuner::BayesSearch* search, const tuner::Point& point) {
  Knobs knobs;
  AUTOTUNE_RETURN_IF_ERROR(PointToKnobs(search->space(), point, base, &knobs));
  const double score = simulation.Evaluate(knobs).score_bytes_per_s;
  log->Write(knobs, "simulated", score);
  return search->Observe({point, tuner::Fidelity::kSimulated, score});
}

}  // namespace autotune::cli
