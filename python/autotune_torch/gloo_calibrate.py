"""torch.distributed's gloo allreduce timed against message size: the measurements behind
`autotune calibrate --backend gloo` (tools/gloo_calibrate.cc), which starts one of these per
rank with RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT set and stores what rank 0 prints.

Per size (bytes per rank, float32 data as DDP's buckets of float32 gradients): one untimed
warm-up call, then --repetitions timed calls of dist.all_reduce (sum), each preceded by a
barrier; a call's time is the slowest rank's. The values are checked: every call sums a tensor
of ones, which must then hold world_size everywhere, else the helper exits 1 naming the size.

Rank 0 prints one JSON line:
  {"torch": VERSION, "world_size": N,
   "points": [[bytes, median_us, min_us, max_us, repetitions], ...]}
Errors: one line on stderr naming what is wrong, exit 1 (2 for bad arguments).
"""
import argparse
import datetime
import json
import statistics
import sys
import time


def _parse_sizes(text):
    try:
        sizes = [int(x) for x in text.split(",")]
    except ValueError:
        return []
    return sizes if sizes and all(s >= 4 and s % 4 == 0 for s in sizes) else []


def main(argv=None):
    parser = argparse.ArgumentParser(prog="autotune_torch.gloo_calibrate",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", required=True,
                        help="comma-separated message sizes in bytes per rank, multiples of 4")
    parser.add_argument("--repetitions", type=int, default=10, help="timed calls per size")
    parser.add_argument("--timeout-s", type=float, default=300.0,
                        help="gloo's timeout: a rank that waits longer on a peer fails")
    args = parser.parse_args(argv)
    sizes = _parse_sizes(args.sizes)
    if not sizes or args.repetitions < 1 or not args.timeout_s > 0:
        print(f"autotune_torch.gloo_calibrate: --sizes takes multiples of 4 bytes and "
              f"--repetitions a count >= 1 (got {args.sizes!r}, {args.repetitions}; "
              f"--timeout-s {args.timeout_s})",
              file=sys.stderr)
        return 2
    try:
        import torch
        import torch.distributed as dist
    except ImportError as e:
        print(f"autotune_torch.gloo_calibrate: PyTorch is not importable ({e})", file=sys.stderr)
        return 1
    try:
        torch.set_num_threads(1)
        dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=args.timeout_s))
        world = dist.get_world_size()
        points = []
        for size in sizes:
            t = torch.empty(size // 4, dtype=torch.float32)
            want = torch.full_like(t, float(world))
            times = []
            for i in range(1 + args.repetitions):
                t.fill_(1.0)
                dist.barrier()
                start = time.perf_counter()
                dist.all_reduce(t)
                elapsed = torch.tensor([time.perf_counter() - start], dtype=torch.float64)
                dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)
                if not torch.equal(t, want):
                    print(f"autotune_torch.gloo_calibrate: {size} bytes: the allreduced values are "
                          f"not {world} (the sum of a one from each rank)", file=sys.stderr)
                    return 1
                if i > 0:
                    times.append(elapsed.item() * 1e6)
            points.append([size, statistics.median(times), min(times), max(times), args.repetitions])
        if dist.get_rank() == 0:
            print(json.dumps({"torch": torch.__version__, "world_size": world, "points": points}),
                  flush=True)
        dist.destroy_process_group()
    except RuntimeError as e:  # gloo: a peer that is gone, a connection refused, a timeout
        lines = str(e).strip().splitlines() or ["(no message)"]
        print(f"autotune_torch.gloo_calibrate: gloo: {lines[0]}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
