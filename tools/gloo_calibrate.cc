#include "tools/gloo_calibrate.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <utility>
#include <vector>

#include "executor/calibrate.h"
#include "executor/layout.h"
#include "executor/mpi_backend.h"
#include "executor/mpi_runtime.h"
#include "formats/gloo_calibration.h"
#include "store/store.h"
#include "tools/torch_python.h"

namespace autotune::cli {
namespace {

const char* Env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : nullptr;
}

// A TCP port nobody listens on now (the kernel's pick for port 0); 0 when none can be had.
int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

// Rank 0's choice of gloo's rendezvous: "ADDR:PORT" (see the header).
Status ChooseRendezvous(const executor::NodeLayout& layout, std::string* addr, int* port) {
  if (const char* given = Env("MASTER_ADDR")) {
    *addr = given;
  } else if (layout.nodes == 1) {
    *addr = "127.0.0.1";
  } else {
    return Status::InvalidArgument(
        "calibrate --backend gloo on " + std::to_string(layout.nodes) +
        " nodes: MASTER_ADDR is not set (rank 0's address on the network gloo is to use, as "
        "for the DDP job)");
  }
  if (const char* given = Env("MASTER_PORT")) {
    char* end = nullptr;
    const long value = std::strtol(given, &end, 10);
    if (*end != '\0' || value < 1 || value > 65535) {
      return Status::InvalidArgument(std::string("MASTER_PORT ") + given +
                                     ": not a TCP port (1..65535)");
    }
    *port = static_cast<int>(value);
  } else {
    *port = FreePort();
    if (*port == 0) return Status::IoError("calibrate --backend gloo: no free TCP port");
  }
  return Status::Ok();
}

void BroadcastString(std::string* s, MPI_Comm comm) {
  int size = static_cast<int>(s->size());
  MPI_Bcast(&size, 1, MPI_INT, 0, comm);
  s->resize(size);
  MPI_Bcast(s->data(), size, MPI_CHAR, 0, comm);
}

// This rank's helper: what it printed (rank 0: the JSON line), or its one-line failure.
Status RunHelper(const GlooCalibrateOptions& options, const executor::NodeLayout& layout,
                 const std::string& addr, int port, const std::vector<int64_t>& sizes,
                 std::string* printed) {
  std::string size_list;
  for (int64_t bytes : sizes) size_list += (size_list.empty() ? "" : ",") + std::to_string(bytes);
  TorchHelperOutput helper;
  AUTOTUNE_RETURN_IF_ERROR(RunTorchHelper(
      "autotune_torch.gloo_calibrate",
      {"--sizes", size_list, "--repetitions", std::to_string(options.repetitions), "--timeout-s",
       std::to_string(options.timeout_s)},
      {"RANK=" + std::to_string(layout.rank), "WORLD_SIZE=" + std::to_string(layout.size),
       "LOCAL_RANK=" + std::to_string(layout.local_rank), "MASTER_ADDR=" + addr,
       "MASTER_PORT=" + std::to_string(port)},
      &helper).WithPrefix("calibrate --backend gloo"));
  if (helper.exit_status != 0) {
    if (TorchMissing(helper.last_err_line)) {
      return Status::NotSupported("calibrate --backend gloo needs PyTorch for " + TorchPython() +
                                  " (apt-get install python3-torch)");
    }
    return Status::Internal(helper.last_err_line.empty()
                                ? "calibrate --backend gloo: the helper failed"
                                : helper.last_err_line);
  }
  *printed = std::move(helper.out);
  return Status::Ok();
}

}  // namespace

Status RunGlooCalibrate(const GlooCalibrateOptions& options, Calibration* out) {
  AUTOTUNE_RETURN_IF_ERROR(executor::CheckMpiReady());
  MPI_Comm world = options.world;
  executor::NodeLayout layout;
  executor::LayoutComms comms;
  AUTOTUNE_RETURN_IF_ERROR(executor::DetectLayout(world, &layout, &comms));
  executor::FreeLayoutComms(&comms);

  std::unique_ptr<Store> store;
  std::string addr;
  int port = 0;
  Status st;
  if (layout.rank == 0) {
    st = Store::Open(options.db_path, Store::Mode::kReadWrite, &store);
    if (st.ok()) st = ChooseRendezvous(layout, &addr, &port);
  }
  AUTOTUNE_RETURN_IF_ERROR(executor::AgreeOnStatus(world, st));
  BroadcastString(&addr, world);
  MPI_Bcast(&port, 1, MPI_INT, 0, world);

  const std::vector<int64_t> sizes =
      executor::CalibrationSizes(options.min_bytes, options.max_bytes);
  std::string printed;
  AUTOTUNE_RETURN_IF_ERROR(executor::AgreeOnStatus(
      world, RunHelper(options, layout, addr, port, sizes, &printed)));

  Calibration c;
  c.topology = layout.ToTopology();
  c.backend = BackendKind::kGloo;
  st = Status::Ok();
  if (layout.rank == 0) {
    std::string torch_version;
    st = ParseGlooCalibration(printed, layout.size, sizes, &c.points, &torch_version);
    const std::string host = executor::HostHardwareDescription();  // "CPU; MPI library"
    c.hardware = "gloo (torch " + torch_version + ") on " + host.substr(0, host.find(';'));
    if (st.ok()) st = store->SaveCalibration(&c);
  }
  AUTOTUNE_RETURN_IF_ERROR(executor::AgreeOnStatus(world, st));
  MPI_Bcast(&c.id, 1, MPI_INT64_T, 0, world);
  *out = std::move(c);
  return Status::Ok();
}

}  // namespace autotune::cli
