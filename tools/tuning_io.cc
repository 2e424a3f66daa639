#include "tools/tuning_io.h"

namespace autotune::cli {

Status SampleLog::Open(const std::string& path) {
  if (path.empty()) return Status::Ok();
  file_.open(path, std::ios::trunc);
  if (!file_) return Status::IoError(path + ": cannot write the autotune log");
  file_ << "hierarchical_allreduce,hierarchical_allgather,cycle_time_ms,tensor_"
           "fusion_threshold,"
           "score,cache_capacity,num_groups,nccl_algo,nccl_proto,nccl_max_"
           "nchannels,nccl_cross,"
           "mpi_allreduce_algorithm,fidelity,score_bytes_per_s\n";
  return Status::Ok();
}

void SampleLog::Write(const Knobs& k, const std::string& fidelity, double score_bytes_per_s) {
  if (!file_.is_open()) return;
  file_ << (k.hierarchical_allreduce ? 1 : 0) << ',' << (k.hierarchical_allgather ? 1 : 0) << ','
        << KnobValue(k, "cycle_time_ms") << ',' << KnobValue(k, "fusion_threshold_mb") << ','
        << score_bytes_per_s * 1e-6 << ',' << k.cache_capacity << ',' << k.num_groups << ','
        << k.nccl_algo << ',' << k.nccl_proto << ',' << k.nccl_max_nchannels << ',' << k.nccl_cross
        << ',' << k.mpi_allreduce_algorithm << ',' << fidelity << ',' << score_bytes_per_s << '\n';
  file_.flush();
}

tuner::SampleListener LogTo(SampleLog* log) {
  return [log](const Knobs& knobs, Fidelity fidelity, double score_bytes_per_s) {
    log->Write(knobs, FidelityName(fidelity), score_bytes_per_s);
  };
}

}  // namespace autotune::cli
