#!/usr/bin/env python3
"""bench/common/grid_agreement.py on two grids with a known answer.

Two grids of the default d and settings X, Y, Z, two rounds each, the default at 100 ms in
every run (no drift: each ratio is 100 / the run's median). Grid A: X 80, 80 (1.25x, interval
[1.25, 1.25]: beyond noise); Y 95, 105 (ratios 1.0526 and 0.9524, geometric mean 1.00125,
the interval takes in 1); Z 125, 125 (0.8x, beyond). Grid B: X 90, 90 (1.111x); Y 80, 80
(1.25x); Z 125, 125 (0.8x). Predicted A: d 100, X 85, Y 100, Z 110 ms (speedups 1.176, 1,
0.909); B: d 100, X 80, Y 95, Z 120 (1.25, 1.0526, 0.833).
By hand, the default's 1 first: measured ranks A (2, 4, 3, 1), B (2, 3, 4, 1): Spearman
1 - 6 x 2 / (4 x 15) = 0.8. Predicted ranks A (2.5, 4, 2.5, 1) against A's measured:
covariance 4.5 over sqrt(4.5 x 5) = 0.9487; B's predicted (2, 4, 3, 1) against B's measured
0.8; A's predicted against B's predicted 0.9487. Beyond noise in both: X and Z, both on the
same side in both grids.
Pooled: X's four ratios 1.25, 1.25, 1.111, 1.111 (geometric mean sqrt(1.25 x 1.1111) =
1.17851; log sd 0.0680, half-width 3.182 x 0.0680 / 2: [1.058, 1.313], beyond noise); Y's
1.0526, 0.9524, 1.25, 1.25 (1.11874, the interval takes in 1); Z's 0.8 x4 (beyond). The
model's, geometric means of its two: X sqrt(1.17647 x 1.25) = 1.21268, Y sqrt(1.05263) =
1.02598, Z sqrt(0.90909 x 0.83333) = 0.87039. Ranks alike: Spearman 1 over all and over the
default, X and Z. The pooled best is X: its predicted gain 0.21268 is |0.21268 - 0.17851| /
0.17851 = 0.1914 off its measured 0.17851."""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "bench", "common", "grid_agreement.py")
sys.path.insert(0, os.path.dirname(SCRIPT))
import grid_agreement  # noqa: E402

sys.path.insert(0, HERE)
from checks import Checks  # noqa: E402


def write_grid(directory, runs, predicted):
    os.makedirs(directory)
    with open(os.path.join(directory, "predicted.tsv"), "w") as f:
        for name, ms in predicted:
            f.write(f"{name} {ms}\n")
    for name, medians in runs.items():
        for r, ms in enumerate(medians, 1):
            with open(os.path.join(directory, f"{name}.r{r}.json"), "w") as f:
                json.dump({"step_ms": [ms]}, f)


def main():
    checks = Checks("grid_agreement_test")
    with tempfile.TemporaryDirectory() as tmp:
        a, b = os.path.join(tmp, "a"), os.path.join(tmp, "b")
        write_grid(a, {"d": [100, 100], "X": [80, 80], "Y": [95, 105], "Z": [125, 125]},
                   [("d", 100), ("X", 85), ("Y", 100), ("Z", 110)])
        write_grid(b, {"d": [100, 100], "X": [90, 90], "Y": [80, 80], "Z": [125, 125]},
                   [("d", 100), ("X", 80), ("Y", 95), ("Z", 120)])
        got = grid_agreement.agreement(a, b)
        checks.near("grids' Spearman", got["grids"], 0.8, tol=5e-4)
        checks.near("model against A", got["model_a"], 4.5 / (4.5 * 5) ** 0.5, tol=5e-4)
        checks.near("model against B", got["model_b"], 0.8, tol=5e-4)
        checks.near("model A against model B", got["model"], 4.5 / (4.5 * 5) ** 0.5, tol=5e-4)
        checks.near("Y's speedup in A", got["rows"][1][1][0], (100 / 95 * 100 / 105) ** 0.5,
                    tol=1e-6)
        checks.true("beyond noise in both: X, Z, on the same side",
                    got["both_beyond"] == ["X", "Z"] and got["same_side"] == ["X", "Z"],
                    f"{got['both_beyond']}, same side {got['same_side']}")
        pool = grid_agreement.pooled([a, b])
        best, (m, lo, hi), pred = pool["best"]
        checks.true("pooled best X beyond noise", best == "X" and lo > 1, f"{best} [{lo}, {hi}]")
        checks.near("pooled best measured", m, (1.25 * 100 / 90) ** 0.5, tol=1e-6)
        checks.near("pooled best predicted", pred, (100 / 85 * 1.25) ** 0.5, tol=1e-6)
        checks.near("pooled Y", pool["rows"][1][1][0],
                    (100 / 95 * 100 / 105 * 1.25 * 1.25) ** 0.25, tol=1e-6)
        checks.near("pooled Spearman", pool["spearman"], 1.0, tol=1e-9)
        checks.near("pooled best's gain error", pool["gain_error"], 0.1914, tol=5e-4)
        rho, beyond = pool["spearman_beyond"]
        checks.true("pooled beyond noise: X, Z, Spearman 1",
                    beyond == ["X", "Z"] and rho is not None and abs(rho - 1.0) < 1e-9,
                    f"{beyond}, {rho}")
        # A folder that is not a scored grid: one line naming it, a non-zero exit.
        done = subprocess.run([sys.executable, SCRIPT, "--bench", "t", "--bench-figure", "x",
                               a, tmp], capture_output=True, text=True)
        checks.true("a folder without predicted.tsv is refused by name",
                    done.returncode != 0 and "no predicted.tsv in " + tmp in done.stderr,
                    f"rc {done.returncode}, {done.stderr.strip()!r}")
        # Grids of different defaults: one line, a non-zero exit.
        c = os.path.join(tmp, "c")
        write_grid(c, {"X": [80, 80], "d": [100, 100]}, [("X", 85), ("d", 100)])
        done = subprocess.run([sys.executable, SCRIPT, "--bench", "t", "--bench-figure", "x",
                               a, c], capture_output=True, text=True)
        checks.true("grids of different defaults are refused",
                    done.returncode != 0 and "defaults differ" in done.stderr,
                    f"rc {done.returncode}, {done.stderr.strip()!r}")
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
