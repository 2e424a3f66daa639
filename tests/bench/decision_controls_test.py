#!/usr/bin/env python3
"""bench/tuner/decision_controls.py on hand-made Horovod folders with a known answer.

Settings of a job reducing 10 MiB a step: f128_c1 and f32_c1 (both thresholds above 10 MiB,
the same cycle: equivalent), f4_c1 (4 MiB: not), run in alternating rounds of 20 steps. In the
folder "same" the two equivalent settings run alike (every run's steps within 1%): no faster
verdict in either direction or noise mode. In the folder "faster" f32_c1 runs 1.3x faster in
each of its 3 runs: the rule calls it faster in both noise modes (4 comparisons with the
other direction, 2 of them faster); f4_c1, not equivalent to either, is never compared.
Usage: decision_controls_test.py BENCH_DECISION_CONTROLS BENCH_FIGURE"""
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "bench", "tuner", "decision_controls.py")


def write_folder(d, f32_speedup):
    settings = {"f128_c1": (128, 1.0), "f32_c1": (32, f32_speedup), "f4_c1": (4, 0.8)}
    tick = 1_700_000_000
    for r in (1, 2, 3):
        for label, (mb, speedup) in settings.items():
            with open(os.path.join(d, f"{label}.yaml"), "w") as f:
                f.write(f"params:\n  fusion_threshold_mb: {mb}\n  cycle_time_ms: 1\n")
            base = 500.0 * (1 + 0.004 * r) / speedup
            path = os.path.join(d, f"{label}.r{r}.json")
            with open(path, "w") as f:
                json.dump({"step_ms": [base * (1 + 0.01 * ((i * 7) % 3 - 1)) for i in range(20)]},
                          f)
            tick += 60
            os.utime(path, (tick, tick))


def run(tool, figure, d):
    return subprocess.run([sys.executable, SCRIPT, "--tool", tool, "--bench-figure", figure,
                           "--horovod", d, "10"], capture_output=True, text=True,
                          check=True).stdout


def main():
    failures = []
    with tempfile.TemporaryDirectory() as top:
        same, faster = os.path.join(top, "same"), os.path.join(top, "faster")
        os.mkdir(same)
        os.mkdir(faster)
        write_folder(same, 1.0)
        write_folder(faster, 1.3)
        out_same = run(sys.argv[1], sys.argv[2], same)
        out_faster = run(sys.argv[1], sys.argv[2], faster)
    for mode in ("pooled", "own"):
        if f"noise {mode}: 2 directed comparisons of equivalent settings, 0 called faster" \
                not in out_same:
            failures.append(f"same, {mode}: expected 2 comparisons, none faster")
        if f"noise {mode}: 2 directed comparisons of equivalent settings, 1 called faster" \
                not in out_faster:
            failures.append(f"faster, {mode}: expected 2 comparisons, 1 faster")
    if not re.search(r"f32_c1 over f128_c1 \(own\): 1\.30[0-9] \[[0-9.]+, [0-9.]+\] FASTER",
                     out_faster):
        failures.append("faster: f32_c1 over f128_c1 not called faster at about 1.30")
    if "f4_c1" in out_same + out_faster:
        failures.append("f4_c1 (4 MiB, below the step's 10) compared as equivalent")
    if failures:
        print("\n".join(failures) + "\n" + out_same + out_faster)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
