#!/usr/bin/env python3
"""diagnose's verdict and bound against the warm-up count, on real Horovod timelines.

Each timeline (default: the repository's copies of the shared fixtures, real Horovod 0.28.1 on
2x2, as the build unpacks them into build/tests/fixtures/horovod) is imported with
--warmup-steps 1 to 5, and `autotune diagnose --json` of each import gives the verdict and
the bound (max_gain_fraction: the median gain over the later half of the steps recorded, the
warm-up ones counted in; before 2026-12-07 the later half of the kept steps). Beside
it, from the same diagnoses' per-step parts, the median over every kept step (the bound
before 2026-12-06): the anchor, measured side by side on the same steps. Issue 21's target:
the same verdict at every warm-up count, the bound within 3 points.

Usage: diagnose_warmup.py --autotune BIN --bench-figure BIN [--fixtures DIR] [NAME ...]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import bench_stats  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.normpath(os.path.join(HERE, "..", "..", "build", "tests", "fixtures", "horovod"))
NAMES = ["mlp_default", "resnet50_default", "resnet50_f4_c10"]
WARMUPS = range(1, 6)
TARGET_POINTS = 3.0


def run(cmd):
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        last = done.stderr.strip().splitlines()
        raise RuntimeError(f"{' '.join(cmd[:2])} failed: {last[-1] if last else done.returncode}")
    return done.stdout


def diagnose(autotune, timeline, warmup, folder):
    db = os.path.join(folder, f"w{warmup}.db")
    run([autotune, "import", "--db", db, "--horovod-timeline", timeline, "--nodes", "2",
         "--ranks-per-node", "2", "--warmup-steps", str(warmup)])
    return json.loads(run([autotune, "diagnose", "--db", db, "--run", "1", "--json"]))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--autotune", required=True)
    p.add_argument("--bench-figure", required=True)
    p.add_argument("--fixtures", default=FIXTURES, help="folder of NAME.json timelines")
    p.add_argument("names", nargs="*", default=NAMES)
    a = p.parse_args()
    failed = False
    for name in a.names:
        timeline = os.path.join(a.fixtures, name + ".json")
        bounds, every, verdicts = [], [], set()
        try:
            if not os.path.isfile(timeline):
                raise OSError(f"no timeline {timeline} (--fixtures DIR)")
            with tempfile.TemporaryDirectory() as folder:
                for w in WARMUPS:
                    d = diagnose(a.autotune, timeline, w, folder)
                    shares = [1.0 - s["ideal_step_ms"] / s["step_ms"] for s in d["per_step"]]
                    bounds.append(100.0 * d["max_gain_fraction"])
                    every.append(100.0 * statistics.median(shares))
                    verdicts.add(d["verdict_kind"])
                    print(f"# {name} --warmup-steps {w}: {len(shares)} steps, "
                          f"{d['verdict_kind']}, bound {bounds[-1]:.1f}% (every step's "
                          f"median {every[-1]:.1f}%), drifting {d['drifting']}")
        except (OSError, RuntimeError, ValueError, KeyError) as e:
            print(f"diagnose_warmup: {name}: {e}", file=sys.stderr)
            failed = True
            continue
        spread = max(bounds) - min(bounds)
        old = max(every) - min(every)
        bench_stats.figure(a.bench_figure, f"simulator.diagnose_{name}_bound_spread_warmup_1_5",
                           spread, "points", TARGET_POINTS, "ratio<=1")
        bench_stats.figure(a.bench_figure, f"simulator.diagnose_{name}_bound_spread_warmup_1_5",
                           spread, "points", old, "none",
                           anchor="median_over_every_step_spread")
        bench_stats.figure(a.bench_figure, f"simulator.diagnose_{name}_verdicts_warmup_1_5",
                           len(verdicts), "verdicts", 1, "ratio<=1")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
