#!/usr/bin/env python3
"""bench/simulator/diagnose_warmup.py against the fixtures' own per-step parts.

The bench's figures for one fixture (the bound's spread over --warmup-steps 1-5, and the
spread of the median over every step beside it) are worked out here independently: each
import's per-step shares 1 - ideal / step, the median of the later half of the steps recorded
(the warm-up ones counted in; every kept step's with fewer than 6 kept) and of all of them. A
missing timeline is one line and exit 1.

Usage: diagnose_warmup_test.py BENCH AUTOTUNE BENCH_FIGURE FIXTURES_DIR
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

bench, autotune, bench_figure, fixtures = sys.argv[1:5]
NAME = "resnet50_f4_c10"


def figures(out):
    lines = {}
    for line in out.splitlines():
        if line.startswith("bench="):
            fields = dict(f.split("=", 1) for f in line.split())
            lines[(fields["bench"], fields["anchor"])] = fields
    return lines


def expected():
    bounds, every = [], []
    with tempfile.TemporaryDirectory() as folder:
        for w in range(1, 6):
            db = os.path.join(folder, f"{w}.db")
            subprocess.run([autotune, "import", "--db", db, "--horovod-timeline",
                            os.path.join(fixtures, NAME + ".json"), "--nodes", "2",
                            "--ranks-per-node", "2", "--warmup-steps", str(w)],
                           check=True, capture_output=True)
            d = json.loads(subprocess.run([autotune, "diagnose", "--db", db, "--run", "1",
                                           "--json"], check=True, capture_output=True,
                                          text=True).stdout)
            shares = [1.0 - s["ideal_step_ms"] / s["step_ms"] for s in d["per_step"]]
            n = len(shares)
            # The later half of the steps recorded: the w warm-up steps counted in.
            later = shares[n - min(n, (n + w) // 2):] if n >= 6 else shares
            bounds.append(100.0 * statistics.median(later))
            every.append(100.0 * statistics.median(shares))
    return max(bounds) - min(bounds), max(every) - min(every)


failures = 0


def check(what, ok, detail=""):
    global failures
    if not ok:
        failures += 1
        print(f"FAIL {what} {detail}")


done = subprocess.run([sys.executable, bench, "--autotune", autotune, "--bench-figure",
                       bench_figure, "--fixtures", fixtures, NAME], capture_output=True,
                      text=True)
check("the bench runs", done.returncode == 0, done.stderr)
got = figures(done.stdout)
spread, old = expected()
name = f"simulator.diagnose_{NAME}_bound_spread_warmup_1_5"
target = got.get((name, "target"), {})
check("the spread against the target", abs(float(target.get("value", "nan")) - spread) < 1e-4,
      f"{target} vs {spread}")
check("the target is 3 points", float(target.get("anchor_value", "nan")) == 3.0, str(target))
check("met says whether it is within", target.get("met") == ("yes" if spread <= 3.0 else "no"),
      str(target))
before = got.get((name, "median_over_every_step_spread"), {})
check("the anchor: every step's median", abs(float(before.get("anchor_value", "nan")) - old) < 1e-4,
      f"{before} vs {old}")
verdicts = got.get((f"simulator.diagnose_{NAME}_verdicts_warmup_1_5", "target"), {})
check("one verdict", verdicts.get("value") == "1", str(verdicts))

# A fixture that is not there: one line naming it, exit 1.
with tempfile.TemporaryDirectory() as empty:
    bad = subprocess.run([sys.executable, bench, "--autotune", autotune, "--bench-figure",
                          bench_figure, "--fixtures", empty, NAME], capture_output=True,
                         text=True)
check("a missing timeline fails", bad.returncode == 1, str(bad.returncode))
check("in one line naming it", len(bad.stderr.strip().splitlines()) == 1 and
      NAME in bad.stderr, bad.stderr)
print("diagnose_warmup_test:", "ok" if failures == 0 else f"{failures} failed")
sys.exit(1 if failures else 0)
