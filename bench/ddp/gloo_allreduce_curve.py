#!/usr/bin/env python3
"""Times torch.distributed's gloo allreduce at several sizes on the ranks it is launched on.

Launched under mpirun (RANK and WORLD_SIZE from Open MPI's OMPI_COMM_WORLD_* when unset;
MASTER_ADDR and MASTER_PORT from the environment), e.g. on the emulated cluster as bench/ddp
runs its jobs:
  MASTER_ADDR=10.77.0.1 MASTER_PORT=29531 GLOO_SOCKET_IFNAME=eth0 OMP_NUM_THREADS=1 \\
    tools/cluster.sh --nodes 2 --ranks-per-node 2 --rate 1gbit -- \\
    python3 bench/ddp/gloo_allreduce_curve.py
Each size: float32 ones, `--calls` timed allreduces (sum) after 2 untimed, each call's time the
slowest rank's; rank 0 prints one JSON line [[MB, median ms], ...]. The values are checked
(world_size ** calls after that many sums): a wrong sum exits 1.
"""
import argparse
import json
import os
import statistics
import sys
import time


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes-mb", default="0.0625,0.25,0.5,1,2,4,8,16",
                        help="comma-separated allreduce sizes, MB (2^20 bytes)")
    parser.add_argument("--calls", type=int, default=10, help="timed calls per size")
    args = parser.parse_args()
    try:
        sizes = [float(x) for x in args.sizes_mb.split(",")]
    except ValueError:
        sizes = []
    if not sizes or any(not (s > 0) for s in sizes) or args.calls < 1:
        print(f"gloo_allreduce_curve.py: --sizes-mb takes positive numbers and --calls a count "
              f"(got {args.sizes_mb!r}, {args.calls})", file=sys.stderr)
        return 2
    for ours, ompi in (("RANK", "OMPI_COMM_WORLD_RANK"), ("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE")):
        if ours not in os.environ and ompi in os.environ:
            os.environ[ours] = os.environ[ompi]
    import torch
    import torch.distributed as dist
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    world = dist.get_world_size()
    warm = 2
    out = []
    for mb in sizes:
        t = torch.ones(max(1, int(mb * 2**20) // 4))
        times = []
        for i in range(warm + args.calls):
            dist.barrier()
            start = time.perf_counter()
            dist.all_reduce(t)
            elapsed = torch.tensor([time.perf_counter() - start])
            dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)
            if i >= warm:
                times.append(elapsed.item() * 1e3)
        want = float(world) ** (warm + args.calls)
        if not torch.allclose(t, torch.full_like(t, want), rtol=1e-5):
            print(f"gloo_allreduce_curve.py: {mb} MB: sums are not {want}", file=sys.stderr)
            return 1
        out.append([mb, statistics.median(times)])
    if dist.get_rank() == 0:
        print(json.dumps(out))
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
