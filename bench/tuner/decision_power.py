#!/usr/bin/env python3
"""The decision rule's false "faster" rate and its power, on synthetic runs with a known answer.

Each trial is one comparison of a candidate with the default in the run order PATTERN (D C D C:
the four real runs of a search whose budget is four): every run's level is 100 ms times a
log-normal run-to-run factor of coefficient of variation CV (a whole run off, as the real jobs'
launches are: bench/horovod's MLP 7-13%) and times (1 + DRIFT) per run before it (the machine's
drift, under both settings alike), the candidate's divided by GAIN; each run has 30 steps
with 3% normal step-to-step noise around its level. bench_decision_controls applies the rule
that search, search --live and record --autotune decide with (tuner/run_comparison.h
CompareRuns), the noise the comparison's own. At GAIN 1 every "faster" is false (the anchor:
the rule's nominal one-sided 2.5%); at GAIN > 1 the share called faster is the rule's power.
The trials are drawn from one seed, so two builds of the tool see the same runs.

Usage: decision_power.py --tool BIN --bench-figure BIN [--trials N] [--seed S]
"""
import argparse
import json
import math
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import bench_stats  # noqa: E402

# (pattern, run-to-run CV, gain, drift): the false-faster cases, then the power cases. Drift:
# every run slower (or, below 0, faster) than the one before by this fraction, under both
# settings alike (a machine warming up or a neighbour's load leaving: the real MLP's search on
# /tmp/hvdS sped up about 5% a run, bench/horovod/README.md).
CASES = [("DCDC", 0.05, 1.0, 0.0), ("DCDC", 0.08, 1.0, 0.0), ("DCDC", 0.12, 1.0, 0.0),
         ("DCDCD", 0.08, 1.0, 0.0), ("DCDC", 0.08, 1.2, 0.0), ("DCDC", 0.08, 1.3, 0.0),
         ("DCDC", 0.05, 1.0, -0.05), ("DCDC", 0.08, 1.0, -0.05), ("DCDC", 0.05, 1.2, -0.05),
         ("DCDC", 0.08, 1.2, -0.05)]


def trials(rng, pattern, cv, gain, drift, n):
    out = []
    for k in range(n):
        default, candidate = [], []
        for i, role in enumerate(pattern):
            level = (100.0 * math.exp(rng.gauss(0.0, cv)) * (1.0 + drift) ** i /
                     (gain if role == "C" else 1.0))
            run = {"steps": [level * (1.0 + rng.gauss(0.0, 0.03)) for _ in range(30)],
                   "sequence": i}
            (default if role == "D" else candidate).append(run)
        out.append({"name": f"{pattern}_{k}", "default": default, "candidate": candidate,
                    "every_setting": []})
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tool", required=True, help="bench_decision_controls")
    p.add_argument("--bench-figure", required=True)
    p.add_argument("--trials", type=int, default=4000)
    p.add_argument("--seed", type=int, default=7)
    a = p.parse_args()
    if a.trials < 1:
        print("decision_power: --trials must be at least 1", file=sys.stderr)
        return 2
    rng = random.Random(a.seed)
    for pattern, cv, gain, drift in CASES:
        todo = trials(rng, pattern, cv, gain, drift, a.trials)
        try:
            done = subprocess.run([a.tool], input=json.dumps({"comparisons": todo}), text=True,
                                  capture_output=True, check=True).stdout.splitlines()
        except (OSError, subprocess.CalledProcessError) as e:
            detail = getattr(e, "stderr", "") or str(e)
            last = detail.strip().splitlines()
            print(f"decision_power: {a.tool} failed: {last[-1] if last else e}",
                  file=sys.stderr)
            return 1
        faster = sum(1 for line in done if json.loads(line)["faster"])
        share = 100.0 * faster / a.trials
        name = f"tuner.decision_rule_{pattern}_cv{round(cv * 100)}"
        if drift:
            name += f"_drift{round(drift * 100)}"
        print(f"# {pattern}, run-to-run CV {cv:.0%}, drift {drift:+.0%} a run, candidate "
              f"{gain:.2f}x: {faster} of {a.trials} called faster")
        if gain == 1.0:
            bench_stats.figure(a.bench_figure, f"{name}_false_faster", share, "%", 2.5,
                               "ratio<=1", anchor="nominal_one_sided_95")
        else:
            bench_stats.figure(a.bench_figure, f"{name}_power_at_{gain:.2f}x", share, "%", 0,
                               "none", anchor="none")
    return 0


if __name__ == "__main__":
    sys.exit(main())
