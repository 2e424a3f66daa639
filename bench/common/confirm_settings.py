#!/usr/bin/env python3
"""Scores alternating production runs of the default and other settings (--confirm-settings
of bench/horovod/horovod_bench.sh): DIR/LABEL.rR.json, each train.py's JSON line with
"step_ms".

Per setting: the median over its runs of each run's median step time; the speedup over the
default, paired for drift as autotune's own rule pairs it (tuner/run_comparison.h): round r
runs the default first, then the settings in --settings order, so each run of a setting is
compared with the default interpolated between round r's default run and round r+1's, at the
setting's place in the round (round r's alone in the last round); the speedup is the median of
those ratios (default / setting), with a 95% Student-t interval of their geometric mean
(mean log ratio +- t(n-1) * s / sqrt(n)): with 3 rounds a bootstrap over 3 ratios is bounded by
their min and max and covers about 75%, not 95% (the default against itself measured 1.117x
[1.078, 1.214] that way on the held-out transformer).
Beside it: the unpaired ratio of medians with its bootstrap interval over the run medians, and
the min-max ratio over runs (min of the default's run medians / max of the setting's .. max /
min). Printed as result lines (bench/common/result.h): PREFIX_confirm_LABEL_step (ms, anchor
the default's) and PREFIX_confirm_LABEL_speedup (x, paired, anchor the interval's low end)."""
import argparse
import glob
import json
import math
import os
import random
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_stats  # noqa: E402


def run_medians_by_round(directory, label):
    """{round: the median step time of label's run in that round}."""
    out = {}
    for path in glob.glob(os.path.join(directory, f"{label}.r[0-9]*.json")):
        with open(path) as f:
            out[int(re.search(r"\.r(\d+)\.json$", path).group(1))] = statistics.median(
                json.load(f)["step_ms"])
    return out


def run_medians(directory, label):
    """The median step time of each run of label, in round order."""
    by_round = run_medians_by_round(directory, label)
    return [by_round[r] for r in sorted(by_round)]


def drift_paired_ratios(default_by_round, runs_by_round, place, slots):
    """default / setting for each run of a setting, the default interpolated between its own
    round's run and the next round's at place / slots of the way (the default runs at 0)."""
    ratios = []
    for r, s in sorted(runs_by_round.items()):
        if r not in default_by_round:
            continue
        d = default_by_round[r]
        if r + 1 in default_by_round:
            d += (default_by_round[r + 1] - d) * place / slots
        ratios.append(d / s)
    return ratios


# Student's t, two-sided 95% (0.975 quantile), by degrees of freedom; beyond 30 the normal's.
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
        9: 2.262, 10: 2.228, 12: 2.179, 15: 2.131, 20: 2.086, 25: 2.060, 30: 2.042}


def t975(dof):
    """The 0.975 quantile of Student's t with dof degrees of freedom (the table's next lower
    entry between its rows: wider, never narrower)."""
    if dof > 30:
        return 1.960
    return T975[max(d for d in T975 if d <= dof)]


def geometric_mean_interval(ratios):
    """(geometric mean, low, high): the 95% t interval of the mean log ratio; (x, x, x) for one
    ratio (no spread known)."""
    logs = [math.log(r) for r in ratios]
    m = statistics.mean(logs)
    if len(logs) < 2:
        return math.exp(m), math.exp(m), math.exp(m)
    half = t975(len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
    return math.exp(m), math.exp(m - half), math.exp(m + half)


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
    default_by_round = run_medians_by_round(a.dir, a.default)
    default = run_medians(a.dir, a.default)
    labels = a.settings.split()
    if not default:
        print(f"# confirm: no runs of the default {a.default} in {a.dir}")
        bench_stats.figure(a.bench_figure, f"{a.prefix}_confirm_default_step", 0, "ms", 0,
                           "none", invalid=True)
        return 1
    d = statistics.median(default)
    print(f"# confirm: default {a.default}: {len(default)} runs, run medians "
          f"{', '.join(f'{x:.1f}' for x in default)} ms, median {d:.1f} ms")
    for place, label in enumerate(labels, start=1):
        runs = run_medians(a.dir, label)
        if not runs:
            print(f"# confirm: no runs of {label} in {a.dir}")
            bench_stats.figure(a.bench_figure, f"{a.prefix}_confirm_{label}_speedup", 0, "x", 0,
                               "none", anchor="ci_low", invalid=True)
            continue
        s = statistics.median(runs)
        lo, hi = median_ratio_interval(default, runs)
        paired = drift_paired_ratios(default_by_round, run_medians_by_round(a.dir, label),
                                     place, len(labels) + 1)
        speedup, plo, phi = geometric_mean_interval(paired) if paired else (d / s, lo, hi)
        print(f"# confirm: {label}: {len(runs)} runs, run medians "
              f"{', '.join(f'{x:.1f}' for x in runs)} ms, median {s:.1f} ms; speedup paired "
              f"for drift {speedup:.3f} [{plo:.3f}, {phi:.3f}] (geometric mean, 95% t interval, "
              f"of {len(paired)} paired ratios {', '.join(f'{x:.3f}' for x in paired)}); "
              f"unpaired {d / s:.3f} [{lo:.3f}, {hi:.3f}] over run medians; min-max over runs "
              f"{min(default) / max(runs):.3f} .. {max(default) / min(runs):.3f}")
        bench_stats.figure(a.bench_figure, f"{a.prefix}_confirm_{label}_step", s, "ms", d,
                           "none", anchor=f"{a.default}_step")
        bench_stats.figure(a.bench_figure, f"{a.prefix}_confirm_{label}_speedup", speedup, "x",
                           plo, "none", anchor="ci_low")
    return 0


if __name__ == "__main__":
    sys.exit(main())
