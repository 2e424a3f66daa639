#!/usr/bin/env python3
"""bench/common/confirm_settings.py's drift pairing, on run medians with a known answer.

The default's runs drift 500 -> 600 -> 700 ms over three rounds (round r runs the default, A, B).
A runs exactly as the default would at its place in the round (a third of the way to the next
round's default): its paired speedup is 1 wherever a next round exists, where plain medians say
A is 5% slower. B runs 1.2x faster than the default would two thirds of the way: paired 1.2.
Usage: confirm_settings_test.py BENCH_FIGURE_BINARY"""
import json
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
            runs = {"d": v, "A": v + (after - v) / 3, "B": (v + 2 * (after - v) / 3) / 1.2}
            for label, ms in runs.items():
                with open(os.path.join(d, f"{label}.r{r}.json"), "w") as f:
                    json.dump({"step_ms": [ms * 1.01, ms, ms * 0.99, ms, ms * 5]}, f)
        out = subprocess.run([sys.executable, SCRIPT, "--dir", d, "--default", "d",
                              "--settings", "A B", "--prefix", "t", "--bench-figure",
                              sys.argv[1]], capture_output=True, text=True, check=True).stdout
    paired = dict(re.findall(r"# confirm: (\w+): .*?speedup paired for drift ([0-9.]+)", out))
    unpaired = dict(re.findall(r"# confirm: (\w+): .*?unpaired ([0-9.]+)", out))
    failures = []
    if paired.get("A") != "1.000":
        failures.append(f"A paired {paired.get('A')}, expected 1.000")
    if paired.get("B") != "1.200":
        failures.append(f"B paired {paired.get('B')}, expected 1.200")
    if unpaired.get("A") != "0.947":  # 600 / 633.3: what drift does to plain medians
        failures.append(f"A unpaired {unpaired.get('A')}, expected 0.947")
    if failures:
        print("\n".join(failures) + "\n" + out)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
