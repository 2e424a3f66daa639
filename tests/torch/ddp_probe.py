#!/usr/bin/env python3
"""A real PyTorch DDP job for autotune's tests: gloo, a four-layer MLP (Linear 256->512,
512->512, 512->1024, 1024->10), 3 steps so that DDP rebuilds its buckets after the first.
Launched under mpirun; RANK/WORLD_SIZE come from autotune's sitecustomize (Open MPI's
OMPI_COMM_WORLD_*), MASTER_ADDR/MASTER_PORT from the environment. Rank 0 prints one JSON
line with what DDP itself reports: {"bucket_cap_bytes": ..., "bucket_sizes": [bytes per
rebuilt bucket], "gradient_as_bucket_view": ...}.
  --explicit-cap MB   pass bucket_cap_mb=MB to DDP in the script (it must win over autotune)
"""
import argparse
import atexit
import datetime
import json
import os
import sys

import torch
import torch.distributed as dist


def leave():
    """Exits now, after the exit handlers (autotune's step log and trace writers), without
    tearing down gloo: torch 1.13's gloo teardown (destroy_process_group or interpreter exit)
    was seen to leave one rank spinning forever after the others had exited."""
    sys.stdout.flush()
    sys.stderr.flush()
    atexit._run_exitfuncs()
    os._exit(0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--explicit-cap", type=float, default=None)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    # A bounded wait: a rank that never arrives fails the job instead of hanging the test.
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=120))
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 1024), torch.nn.ReLU(),
                                torch.nn.Linear(1024, 10))
    kwargs = {} if args.explicit_cap is None else {"bucket_cap_mb": args.explicit_cap}
    ddp = torch.nn.parallel.DistributedDataParallel(model, **kwargs)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.01)
    data, target = torch.randn(8, 256), torch.randint(0, 10, (8,))
    for _ in range(3):
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(ddp(data), target).backward()
        optimizer.step()
    info = ddp._get_ddp_logging_data()
    if dist.get_rank() == 0:
        sizes = str(info.get("rebuilt_bucket_sizes", ""))
        print(json.dumps({"bucket_cap_bytes": info.get("bucket_cap_bytes"),
                          "bucket_sizes": [int(x) for x in sizes.replace(",", " ").split()],
                          "gradient_as_bucket_view": info.get("gradient_as_bucket_view")}),
              flush=True)
    dist.barrier()
    leave()


if __name__ == "__main__":
    sys.exit(main())
