#!/usr/bin/env python3
"""bench/common/confirm_settings.py's drift pairing, on run medians with a known answer.

The default's runs drift 500 -> 600 -> 700 ms over three rounds (round r runs the default, A, B).
A runs exactly as the default would at its place in the round (a quarter of the way to the next
round's default; the round runs d, A, B, C): its paired speedup is 1 wherever a next round
exists, where plain medians say A is 4% slower. B runs 1.2x faster than the default would half
way: paired 1.2. C's paired ratios are e^0.1, 1 and e^0.2: the 95% t interval of their
geometric mean, worked out by hand.
Then autotune's own rule on confirmation rounds without drift (--decision-tool): the default
runs 600 ms with a 2% jitter from round to round; "horovod" runs exactly as the default would
at its place (a third of the way to the next round's default; the round runs d, horovod,
autotune): within noise, 1.000; "autotune" 1.25x faster than the default would two thirds of
the way: faster, 1.250; and head to head, autotune against horovod: faster, about 1.25 (the
jitter is not linear between rounds, so not exactly).
Usage: confirm_settings_test.py BENCH_FIGURE_BINARY DECISION_TOOL_BINARY"""
import json
import math
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "bench", "common", "confirm_settings.py")


def main():
    with tempfile.TemporaryDirectory() as d:
        default = {1: 500.0, 2: 600.0, 3: 700.0}
        for r, v in default.items():
            after = default.get(r + 1, v)
            # C: paired ratios e^0.1, e^0, e^0.2 in rounds 1-3 (its place: three quarters).
            c_ratio = {1: math.exp(0.1), 2: 1.0, 3: math.exp(0.2)}[r]
            runs = {"d": v, "A": v + (after - v) / 4, "B": (v + 2 * (after - v) / 4) / 1.2,
                    "C": (v + 3 * (after - v) / 4) / c_ratio}
            for label, ms in runs.items():
                with open(os.path.join(d, f"{label}.r{r}.json"), "w") as f:
                    json.dump({"step_ms": [ms * 1.01, ms, ms * 0.99, ms, ms * 5]}, f)
        out = subprocess.run([sys.executable, SCRIPT, "--dir", d, "--default", "d",
                              "--settings", "A B C", "--prefix", "t", "--bench-figure",
                              sys.argv[1]], capture_output=True, text=True, check=True).stdout
    paired = dict(re.findall(r"# confirm: (\w+): .*?speedup paired for drift ([0-9.]+)", out))
    unpaired = dict(re.findall(r"# confirm: (\w+): .*?unpaired ([0-9.]+)", out))
    failures = []
    if paired.get("A") != "1.000":
        failures.append(f"A paired {paired.get('A')}, expected 1.000")
    if paired.get("B") != "1.200":
        failures.append(f"B paired {paired.get('B')}, expected 1.200")
    if unpaired.get("A") != "0.960":  # 600 / 625: what drift does to plain medians
        failures.append(f"A unpaired {unpaired.get('A')}, expected 0.960")
    # C: mean log ratio 0.1, s = 0.1 over 3 rounds: 95% t interval 0.1 +- 4.303 * 0.1 / sqrt(3).
    half = 4.303 * 0.1 / math.sqrt(3)
    want = f"{math.exp(0.1):.3f} [{math.exp(0.1 - half):.3f}, {math.exp(0.1 + half):.3f}]"
    got = re.search(r"# confirm: C: .*?speedup paired for drift ([0-9.]+ \[[0-9.]+, [0-9.]+\])",
                    out)
    if not got or got.group(1) != want:
        failures.append(f"C paired {got.group(1) if got else None}, expected {want}")
    failures += rule_verdicts()
    if failures:
        print("\n".join(failures) + "\n" + out)
        return 1
    return 0


def rule_verdicts():
    """The rule's line per setting (horovod within noise at 1.000, autotune faster at 1.250)
    and its head to head (autotune against horovod: faster, about 1.25); the failures."""
    with tempfile.TemporaryDirectory() as d:
        default = {1: 600.0, 2: 612.0, 3: 588.0, 4: 606.0}
        for r, v in default.items():
            after = default.get(r + 1, v)
            for label, ms in (("d", v), ("horovod", v + (after - v) / 3),
                              ("autotune", (v + 2 * (after - v) / 3) / 1.25)):
                with open(os.path.join(d, f"{label}.r{r}.json"), "w") as f:
                    json.dump({"step_ms": [ms * 1.01, ms, ms * 0.99, ms, ms * 5]}, f)
        out = subprocess.run([sys.executable, SCRIPT, "--dir", d, "--default", "d",
                              "--settings", "horovod autotune", "--prefix", "t", "--bench-figure",
                              sys.argv[1], "--decision-tool", sys.argv[2]],
                             capture_output=True, text=True, check=True).stdout
    got = dict(re.findall(r"# confirm by autotune's rule \(.*?: (\w+): ([a-z ]+, [0-9.]+)", out))
    want = {"horovod": "within noise, 1.000", "autotune": "faster, 1.250"}
    failures = [f"rule on {k}: {got.get(k)}, expected {v}\n{out}" for k, v in want.items()
                if got.get(k) != v]
    head = re.search(r"head to head: autotune against horovod: (\w+), ([0-9.]+)", out)
    if not head or head.group(1) != "faster" or abs(float(head.group(2)) - 1.25) > 0.02:
        failures.append(f"head to head: {head.group(0) if head else None}, expected faster, "
                        f"about 1.25\n{out}")
    return failures


if __name__ == "__main__":
    sys.exit(main())
