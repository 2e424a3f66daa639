#!/usr/bin/env python3
"""A real PyTorch DDP training job for bench/ddp: synthetic data, SGD with momentum, a
torchvision model wrapped in DistributedDataParallel WITHOUT bucket arguments (the bucket
sizes come from `autotune apply`, as a user's unchanged script gets them), gloo backend,
--warmup untimed and --steps timed steps.

Launched under mpirun (Debian 12's torchrun fails under Python 3.11): RANK, WORLD_SIZE and
LOCAL_RANK come from Open MPI's OMPI_COMM_WORLD_* when unset (autotune's sitecustomize sets
them too); MASTER_ADDR and MASTER_PORT from the environment.

Each rank times every step (wall clock, from before zero_grad to after optimizer.step());
rank 0 gathers all ranks' times and prints one JSON line:
  {"model": ..., "ranks": N, "step_ms": [max over ranks, per timed step],
   "bucket_cap_bytes": ..., "buckets": [bytes per bucket after the rebuild]}
the last two from DDP itself (model._get_ddp_logging_data()).
"""
import argparse
import atexit
import json
import os
import sys
import time

import torch
import torch.distributed as dist
import torchvision


def leave():
    """Exits now, after the exit handlers (autotune's step log and trace writers), without
    tearing down gloo: torch 1.13's gloo teardown (destroy_process_group or interpreter exit)
    was seen to leave one rank spinning forever after the others had exited."""
    sys.stdout.flush()
    sys.stderr.flush()
    atexit._run_exitfuncs()
    os._exit(0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="resnet18",
                        help="a torchvision model; heldout_NAME runs NAME, held out of every fit")
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--size", type=int, default=32, help="input height and width")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--steps", type=int, default=8)
    args = parser.parse_args()

    for ours, ompi in (("RANK", "OMPI_COMM_WORLD_RANK"), ("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE"),
                       ("LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK")):
        if ours not in os.environ and ompi in os.environ:
            os.environ[ours] = os.environ[ompi]
    # "heldout_" marks a model whose runs only score (nothing is fitted or tuned on it, as in
    # bench/horovod); the rest is torchvision's name.
    kind = args.model.removeprefix("heldout_")
    build = getattr(torchvision.models, kind, None)
    if not callable(build) or kind.startswith("_"):
        print(f"train.py: --model {args.model}: torchvision {torchvision.__version__} has no "
              f"model {kind!r}", file=sys.stderr, flush=True)
        sys.exit(2)
    torch.set_num_threads(1)
    torch.manual_seed(0)
    dist.init_process_group("gloo")
    model = torch.nn.parallel.DistributedDataParallel(build())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    data = torch.randn(args.batch, 3, args.size, args.size)
    target = torch.randint(0, 1000, (args.batch,))
    loss_fn = torch.nn.CrossEntropyLoss()

    times = []
    for step in range(args.warmup + args.steps):
        start = time.perf_counter()
        optimizer.zero_grad()
        loss = loss_fn(model(data), target)
        loss.backward()
        optimizer.step()
        if step >= args.warmup:
            times.append((time.perf_counter() - start) * 1000.0)
    per_rank = [None] * dist.get_world_size()
    dist.all_gather_object(per_rank, times)
    if dist.get_rank() == 0:
        info = model._get_ddp_logging_data()
        sizes = str(info.get("rebuilt_bucket_sizes", info.get("bucket_sizes", "")))
        print(json.dumps({
            "model": args.model, "ranks": dist.get_world_size(),
            "step_ms": [max(r[i] for r in per_rank) for i in range(len(times))],
            "bucket_cap_bytes": info.get("bucket_cap_bytes"),
            "buckets": [int(s) for s in sizes.replace(",", " ").split()],
        }), flush=True)
    dist.barrier()
    leave()


if __name__ == "__main__":
    sys.exit(main())
