// `autotune calibrate --backend gloo`: torch.distributed's gloo allreduce timed against message
// size on the ranks of an MPI job, stored as a calibration of library gloo, which the
// simulation of a DDP job on CPUs fits its network model to beside the job's own collectives
// (simulator/stored_simulation.h). Open MPI's calibrate cannot stand in: another library,
// with its own protocol switches and a per-call cost gloo does not share.
//
// Every rank of the MPI job calls RunGlooCalibrate. It detects the layout (nodes, ranks per
// node, hosts) over MPI, agrees on gloo's rendezvous (MASTER_ADDR from the environment, or
// 127.0.0.1 on one node; MASTER_PORT from the environment, or a free port rank 0 picks), then
// runs python/autotune_torch/gloo_calibrate.py once per rank (TorchPython(), with RANK and
// WORLD_SIZE of the MPI world) and waits for it; rank 0 stores what its helper printed
// (formats/gloo_calibration.h): the world allreduce's median, min and max per size, hardware
// "gloo (torch V) on <host>".
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>

#include "traces/calibration.h"
#include "traces/status.h"

namespace autotune::cli {

struct GlooCalibrateOptions {
  int64_t min_bytes = 1024;
  int64_t max_bytes = 64LL * 1024 * 1024;
  int repetitions = 10;
  std::string db_path = "autotune.db";
  double timeout_s = 600.0;  // gloo's: a rank waiting longer on a peer fails the calibration
  MPI_Comm world = MPI_COMM_WORLD;
};

// Measures and stores (see above). The same status on every rank: the lowest failing rank's
// one line (its helper's last stderr line, or a rendezvous that cannot be agreed on), nothing
// stored. On every rank *out holds the points; its id is the stored one.
Status RunGlooCalibrate(const GlooCalibrateOptions& options, Calibration* out);

}  // namespace autotune::cli
