#include "executor/mpi_control.h"

#include <string>

namespace autotune::executor {

namespace {

class MpiControlChannel : public ControlChannel {
 public:
  explicit MpiControlChannel(MPI_Comm world) {
    MPI_Comm_dup(world, &comm_);
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  ~MpiControlChannel() override { MPI_Comm_free(&comm_); }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  Status AndBits(std::vector<uint64_t>* bits) override {
    return Check(MPI_Allreduce(MPI_IN_PLACE, bits->data(), static_cast<int>(bits->size()),
                               MPI_UINT64_T, MPI_BAND, comm_),
                 "cache bit-vector allreduce");
  }

  Status GatherLists(std::span<const int> mine, std::vector<std::vector<int>>* all) override {
    all->clear();
    int n = static_cast<int>(mine.size());
    std::vector<int> counts(rank_ == 0 ? size_ : 0);
    AUTOTUNE_RETURN_IF_ERROR(Check(MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm_),
                                   "coordinator gather of request counts"));
    std::vector<int> displs, flat;
    if (rank_ == 0) {
      displs.resize(size_);
      int total = 0;
      for (int r = 0; r < size_; ++r) {
        displs[r] = total;
        total += counts[r];
      }
      flat.resize(total);
    }
    AUTOTUNE_RETURN_IF_ERROR(Check(MPI_Gatherv(mine.data(), n, MPI_INT, flat.data(), counts.data(),
                                               displs.data(), MPI_INT, 0, comm_),
                                   "coordinator gather of requests"));
    if (rank_ == 0) {
      all->resize(size_);
      for (int r = 0; r < size_; ++r) {
        (*all)[r].assign(flat.begin() + displs[r], flat.begin() + displs[r] + counts[r]);
      }
    }
    return Status::Ok();
  }

  Status BroadcastList(std::vector<int>* list) override {
    int n = static_cast<int>(list->size());
    AUTOTUNE_RETURN_IF_ERROR(
        Check(MPI_Bcast(&n, 1, MPI_INT, 0, comm_), "coordinator broadcast of response count"));
    list->resize(n);
    if (n == 0) return Status::Ok();
    return Check(MPI_Bcast(list->data(), n, MPI_INT, 0, comm_),
                 "coordinator broadcast of responses");
  }

 private:
  static Status Check(int rc, const char* what) {
    if (rc == MPI_SUCCESS) return Status::Ok();
    char text[MPI_MAX_ERROR_STRING] = {};
    int len = 0;
    MPI_Error_string(rc, text, &len);
    return Status::Internal(std::string("negotiation: ") + what +
                            " failed: " + std::string(text, len));
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
};

}  // namespace

std::unique_ptr<ControlChannel> CreateMpiControlChannel(MPI_Comm world) {
  return std::make_unique<MpiControlChannel>(world);
}

}  // namespace autotune::executor
