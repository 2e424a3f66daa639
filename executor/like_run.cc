#include "executor/like_run.h"

#include <nlohmann/json.hpp>
#include <string>

#include "executor/mpi_runtime.h"
#include "traces/workload_from_trace.h"

namespace autotune::executor {

Status LoadLikeRun(Store* store, int64_t run_id, LikeRun* out) {
  const std::string flag = "--like-run " + std::to_string(run_id);
  if (run_id <= 0) return Status::InvalidArgument(flag + ": must be a run id >= 1");
  Trace trace;
  Status st = store->LoadTrace(run_id, &trace);
  TraceWorkload derived;
  if (st.ok()) st = WorkloadFromTrace(trace, &derived);
  if (!st.ok()) return st.WithPrefix(flag);
  out->workload = std::move(derived.workload);
  out->rank_lead_ms = std::move(derived.rank_lead_ms);
  out->scale = trace.run.scale;
  return Status::Ok();
}

Status ShareLikeRun(MPI_Comm comm, const Status& loaded, LikeRun* like) {
  AUTOTUNE_RETURN_IF_ERROR(AgreeOnStatus(comm, loaded));
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::string text;
  if (rank == 0) {
    text = nlohmann::json{{"workload", WorkloadToJson(like->workload)},
                          {"rank_lead_ms", like->rank_lead_ms},
                          {"scale", like->scale}}
               .dump();
  }
  int64_t length = static_cast<int64_t>(text.size());
  MPI_Bcast(&length, 1, MPI_INT64_T, 0, comm);
  text.resize(static_cast<size_t>(length));
  MPI_Bcast(text.data(), static_cast<int>(length), MPI_CHAR, 0, comm);
  // Rank 0 reads the text back too, so that every rank plays the very same workload.
  const nlohmann::json j = nlohmann::json::parse(text);
  const Status st = ParseWorkloadJson(j["workload"].dump(), "--like-run workload", &like->workload);
  like->rank_lead_ms = j["rank_lead_ms"].get<std::vector<double>>();
  like->scale = j["scale"].get<double>();
  return AgreeOnStatus(comm, st);
}

}  // namespace autotune::executor
