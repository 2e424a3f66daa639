#include "executor/mpi_runtime.h"

#include <string>
#include <vector>

namespace autotune::executor {

MpiSession::MpiSession(int* argc, char*** argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    MPI_Init_thread(argc, argv, kRequestedThreadLevel, &provided);
    owns_ = true;
  }
  status_ = CheckMpiReady();
}

MpiSession::~MpiSession() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (owns_ && !finalized) MPI_Finalize();
}

Status CheckMpiReady() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) return Status::Internal("MPI is not initialized");
  int provided = 0;
  MPI_Query_thread(&provided);
  if (provided < kRequiredThreadLevel) {
    return Status::NotSupported("the MPI library gives thread level " + std::to_string(provided) +
                                "; the executor needs MPI_THREAD_SERIALIZED");
  }
  return Status::Ok();
}

Status AgreeOnStatus(MPI_Comm comm, const Status& local) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int mine = local.ok() ? size : rank, first = size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == size) return Status::Ok();
  int code = static_cast<int>(local.code());
  int len = static_cast<int>(local.message().size());
  MPI_Bcast(&code, 1, MPI_INT, first, comm);
  MPI_Bcast(&len, 1, MPI_INT, first, comm);
  std::vector<char> text(local.message().begin(), local.message().end());
  text.resize(len);
  if (len > 0) MPI_Bcast(text.data(), len, MPI_CHAR, first, comm);
  std::string message(text.begin(), text.end());
  if (first != 0) message = "rank " + std::to_string(first) + ": " + message;
  switch (static_cast<Status::Code>(code)) {
    case Status::Code::kInvalidArgument:
      return Status::InvalidArgument(message);
    case Status::Code::kNotFound:
      return Status::NotFound(message);
    case Status::Code::kIoError:
      return Status::IoError(message);
    case Status::Code::kCorruption:
      return Status::Corruption(message);
    case Status::Code::kNotSupported:
      return Status::NotSupported(message);
    case Status::Code::kAborted:
      return Status::Aborted(message);
    default:
      return Status::Internal(message);
  }
}

}  // namespace autotune::executor
