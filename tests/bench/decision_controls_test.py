#!/usr/bin/env python3
"""bench/tuner/decision_controls.py on hand-made Horovod folders with a known answer.

Settings of a job reducing 10 MiB a step: f128_c1 and f32_c1 (both thresholds above 10 MiB,
the same cycle: equivalent), f4_c1 (4 MiB: not), run in alternating rounds of 20 steps. In the
folder "same" the two equivalent settings run alike (every run's steps within 1%): no faster
verdict in either direction or noise mode. In the folder "faster" f32_c1 runs 1.3x faster in
each of its 3 runs: the rule calls it faster in both noise modes (4 comparisons with the
other direction, 2 of them faster); f4_c1, not equivalent to either, is never compared.
On that folder as a grid (confirm_settings.rule_beyond_noise, each setting against the
default f128_c1): f32_c1 faster, f4_c1 (0.8x) slower; predicted 90 and 95 ms against the
default's 100, f32_c1 is predicted on its side (1 of 1 faster) and f4_c1 is not (0 of 1
slower); the Spearman over the three, predicted ranks (3, 1, 2) against measured (2, 1, 3),
is 1 - 6 x 2 / (3 x 8) = 0.5.
Usage: decision_controls_test.py BENCH_DECISION_CONTROLS BENCH_FIGURE"""
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench", "common"))
import confirm_settings  # noqa: E402
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
        figures = {}

        def figure(name, value, unit, anchor_value, target, anchor="target"):
            figures[name] = (value, anchor_value)

        verdicts = confirm_settings.rule_beyond_noise(
            faster, ["f128_c1", "f32_c1", "f4_c1"], {"f128_c1": 100, "f32_c1": 90, "f4_c1": 95},
            sys.argv[1], figure, "t")
    if not (verdicts["f32_c1"]["faster"] and verdicts["f4_c1"]["slower"]
            and not verdicts["f32_c1"]["slower"] and not verdicts["f4_c1"]["faster"]):
        failures.append(f"grid verdicts {verdicts}: expected f32_c1 faster, f4_c1 slower")
    if figures.get("rule_faster_predicted_faster_vs_t") != (1, 1) or \
            figures.get("rule_slower_predicted_slower_vs_t") != (0, 1):
        failures.append(f"grid figures {figures}")
    spearman = figures.get("spearman_rule_beyond_noise_vs_t", (None,))[0]
    if spearman is None or abs(spearman - 0.5) > 1e-9:
        failures.append(f"grid Spearman {spearman}, expected 0.5")
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
