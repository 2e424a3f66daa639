#!/usr/bin/env python3
"""Scores alternating production runs of the default and other settings (--confirm-settings
of bench/horovod/horovod_bench.sh): DIR/LABEL.rR.json, each train.py's JSON line with
"step_ms".

Per setting: the median over its runs of each run's median step time, the speedup over the
default's (default / setting), and a 95% bootstrap interval of that ratio over the run
medians (runs resampled, 2000 times), with the min-max ratio over runs beside it (min of
the default's run medians / max of the setting's .. max / min). Printed as result lines
(bench/common/result.h): PREFIX_confirm_LABEL_step (ms, anchor the default's) and
PREFIX_confirm_LABEL_speedup (x, anchor the interval's low end)."""
import argparse
import glob
import json
import os
import random
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_stats  # noqa: E402


def run_medians(directory, label):
    """The median step time of each run of label, in round order."""
    paths = glob.glob(os.path.join(directory, f"{label}.r[0-9]*.json"))
    paths.sort(key=lambda p: int(re.search(r"\.r(\d+)\.json$", p).group(1)))
    out = []
    for path in paths:
        with open(path) as f:
            out.append(statistics.median(json.load(f)["step_ms"]))
    return out


def median_ratio_interval(a, b, resamples=2000, seed=7):
    """95% bootstrap interval of median(a) / median(b), a and b resampled."""
    rng = random.Random(seed)
    ratios = sorted(statistics.median(rng.choices(a, k=len(a))) /
                    statistics.median(rng.choices(b, k=len(b))) for _ in range(resamples))
    return ratios[int(0.025 * resamples)], ratios[int(0.975 * resamples) - 1]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dir", required=True)
    p.add_argument("--default", required=True, help="the default's label")
    p.add_argument("--settings", required=True, help="the other labels, space separated")
    p.add_argument("--prefix", required=True, help="figure name prefix: horovod.mlp")
    p.add_argument("--bench-figure", required=True)
    a = p.parse_args()
    default = run_medians(a.dir, a.default)
    if not default:
        print(f"# confirm: no runs of the default {a.default} in {a.dir}")
        bench_stats.figure(a.bench_figure, f"{a.prefix}_confirm_default_step", 0, "ms", 0,
                           "none", invalid=True)
        return 1
    d = statistics.median(default)
    print(f"# confirm: default {a.default}: {len(default)} runs, run medians "
          f"{', '.join(f'{x:.1f}' for x in default)} ms, median {d:.1f} ms")
    for label in a.settings.split():
        runs = run_medians(a.dir, label)
        if not runs:
            print(f"# confirm: no runs of {label} in {a.dir}")
            bench_stats.figure(a.bench_figure, f"{a.prefix}_confirm_{label}_speedup", 0, "x", 0,
                               "none", anchor="ci_low", invalid=True)
            continue
        s = statistics.median(runs)
        lo, hi = median_ratio_interval(default, runs)
        print(f"# confirm: {label}: {len(runs)} runs, run medians "
              f"{', '.join(f'{x:.1f}' for x in runs)} ms, median {s:.1f} ms; speedup "
              f"{d / s:.3f}, 95% bootstrap interval over run medians [{lo:.3f}, {hi:.3f}], "
              f"min-max over runs {min(default) / max(runs):.3f} .. "
              f"{max(default) / min(runs):.3f}")
        bench_stats.figure(a.bench_figure, f"{a.prefix}_confirm_{label}_step", s, "ms", d,
                           "none", anchor=f"{a.default}_step")
        bench_stats.figure(a.bench_figure, f"{a.prefix}_confirm_{label}_speedup", d / s, "x",
                           lo, "none", anchor="ci_low")
    return 0


if __name__ == "__main__":
    sys.exit(main())
