#!/usr/bin/env python3
"""What a DDP bucket costs the backward pass, read off real traced runs (bench/ddp/README.md,
"What a bucket costs the backward pass").

Runs the real job (bench/ddp/train.py under `autotune apply`, AUTOTUNE_DDP_TRACE set) on the
emulated cluster for each model, the default (bucket_cap_mb 25) and each --settings cap in
turn, --rounds rounds (round r runs the default, then every setting: drift hits all alike),
then reads every trace: per rank and step (after --warmup), the backward's length (forward end
to the last gradient), and within it the buckets launched, the bytes they move (each bucket's
bytes times the share of its allreduce inside the backward) and the time some allreduce is in
flight (their union). Prints, per model and setting, the medians over ranks, steps and rounds
of its buckets launched inside the backward, the backward and the step, and the differences
from the default of the same round (the mean over rounds; "measured against": real DDP):
  model setting buckets_beside backward_ms d_backward_ms d_buckets d_mib_moved d_inflight_ms
  step_ms
A --dir of earlier runs is read again without running anything (--analyze).

Usage: bucket_cost.py --out DIR --models "m1 m2" [--settings "0.5 2.5"] [--rounds 2]
                      [--steps 10] [--warmup 3] [--autotune BIN] [--python PY]
       bucket_cost.py --analyze DIR [--warmup 3]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_CAP = "25"


def run_one(args, model, cap, folder):
    """One traced run of model at bucket cap `cap` into folder (trace/, config, stdout)."""
    os.makedirs(folder, exist_ok=True)
    config = os.path.join(folder, "config.yaml")
    with open(config, "w") as f:
        f.write(f"ddp:\n  bucket_cap_mb: {cap}\n")
    env = dict(os.environ, AUTOTUNE_DDP_TRACE=os.path.join(folder, "trace"),
               MASTER_ADDR="10.77.0.1", MASTER_PORT="29531", GLOO_SOCKET_IFNAME="eth0",
               OMP_NUM_THREADS="1")
    command = [args.autotune, "apply", "--config-file", config, "--",
               os.path.join(ROOT, "tools", "cluster.sh"), "--nodes", "2", "--ranks-per-node",
               "2", "--rate", "1gbit", "--", args.python, os.path.join(HERE, "train.py"),
               "--model", model, "--steps", str(args.steps), "--warmup", str(args.warmup)]
    with open(os.path.join(folder, "stdout"), "w") as out, \
            open(os.path.join(folder, "stderr"), "w") as err:
        rc = subprocess.run(command, env=env, stdout=out, stderr=err, timeout=900).returncode
    if rc != 0:
        sys.exit(f"bucket_cost.py: {model} at {cap} MB failed (exit {rc}); see {folder}/stderr")


def elements(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def union_within(intervals, lo, hi):
    """Length of the union of intervals clipped to [lo, hi]."""
    clipped = sorted((max(a, lo), min(b, hi)) for a, b in intervals if min(b, hi) > max(a, lo))
    total, end = 0.0, lo
    for a, b in clipped:
        a = max(a, end)
        if b > a:
            total += b - a
            end = b
    return total


def figures(trace_dir, warmup):
    """Median over ranks and steps of (backward ms, buckets launched before its end, MiB moved
    within it, in-flight ms within it, step ms)."""
    rows = []
    for name in sorted(os.listdir(trace_dir)):
        if not (name.startswith("rank") and name.endswith(".json")):
            continue
        with open(os.path.join(trace_dir, name)) as f:
            trace = json.load(f)
        nbytes = [elements(p["shape"]) * 4 for p in trace["parameters"]]
        for step in trace["steps"][warmup:]:
            ready = [t for t in step["ready_us"] if t is not None]
            lo, hi = step["forward_end_us"], max(ready)
            launched, moved, spans = 0, 0.0, []
            for b in step["buckets"]:
                start, end = b["start_us"], b["end_us"]
                if end is None:
                    continue
                size = sum(nbytes[i] for i in b["parameters"] if i >= 0)
                if start < hi:
                    launched += 1
                inside = max(0.0, min(end, hi) - max(start, lo))
                moved += size * inside / max(end - start, 1e-9)
                spans.append((start, end))
            rows.append(((hi - lo) / 1e3, launched, moved / 2**20,
                         union_within(spans, lo, hi) / 1e3, step["end_us"] / 1e3))
    return [statistics.median(r[k] for r in rows) for k in range(5)]


def analyze(directory, warmup):
    print("model setting buckets_beside backward_ms d_backward_ms d_buckets d_mib_moved "
          "d_inflight_ms step_ms")
    for model in sorted(os.listdir(directory)):
        mdir = os.path.join(directory, model)
        if not os.path.isdir(mdir):
            continue
        runs = {}  # (cap, round) -> figures
        for name in os.listdir(mdir):
            cap, _, rnd = name.rpartition(".r")
            trace = os.path.join(mdir, name, "trace")
            if cap and rnd.isdigit() and os.path.isdir(trace):
                runs[(cap, int(rnd))] = figures(trace, warmup)
        caps = sorted({c for c, _ in runs}, key=float)
        for cap in caps:
            deltas = []
            for (c, r), fig in sorted(runs.items()):
                if c == cap and (DEFAULT_CAP, r) in runs:
                    base = runs[(DEFAULT_CAP, r)]
                    deltas.append([fig[0] - base[0], fig[1] - base[1], fig[2] - base[2],
                                   fig[3] - base[3]])
            own = [runs[(c, r)] for c, r in runs if c == cap]
            mean = [statistics.mean(d[k] for d in deltas) for k in range(4)] if deltas else [0] * 4
            print(f"{model} c{cap} {statistics.median(f[1] for f in own):.0f} "
                  f"{statistics.median(f[0] for f in own):.1f} {mean[0]:.1f} {mean[1]:.1f} "
                  f"{mean[2]:.2f} {mean[3]:.1f} {statistics.median(f[4] for f in own):.1f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out")
    parser.add_argument("--analyze")
    parser.add_argument("--models", default="mobilenet_v2")
    parser.add_argument("--settings", default="0.5 2.5")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--autotune", default=os.path.join(ROOT, "build", "autotune"))
    parser.add_argument("--python", default="/usr/bin/python3")
    args = parser.parse_args()
    if args.analyze:
        analyze(args.analyze, args.warmup)
        return
    if not args.out:
        sys.exit("bucket_cost.py: give --out DIR (or --analyze DIR)")
    for model in args.models.split():
        for rnd in range(1, args.rounds + 1):
            for cap in [DEFAULT_CAP] + args.settings.split():
                print(f"# {model} {cap} MB round {rnd}", file=sys.stderr, flush=True)
                run_one(args, model, cap, os.path.join(args.out, model, f"{cap}.r{rnd}"))
    analyze(args.out, args.warmup)


if __name__ == "__main__":
    main()
