#!/usr/bin/env python3
"""bench/common/confirm_settings.py's scoring of a grid's differences (paired_differences) and
of its negative controls (equivalent_pairs), on run medians with a known answer.

A grid of the default d and settings X, Y, Z over three rounds (each round runs d, X, Y, Z);
the default drifts 500 -> 600 -> 700 ms. Paired for drift (each run against the default
interpolated to its place, a quarter of a round per place; the last round's alone):
X runs exactly 1.25x faster in every round (interval [1.25, 1.25]: beyond noise), predicted
1.2x; Y's ratios are e^0.1, 1, e^0.2 (95% t: 0.1 +- 4.303 x 0.1 / sqrt(3), 1 inside), predicted
1.0x; Z runs exactly 0.8x (beyond noise, slower), predicted 1.1x (the wrong side).
Worked out by hand: the mean absolute log error of the predicted speedups is
(|ln(1.2/1.25)| + 0.1 + |ln(1.1/0.8)|) / 3; the Spearman of predicted (1, 1.2, 1.0, 1.1) with
measured (1, 1.25, e^0.1, 0.8), the default's 1 first: ranks (1.5, 4, 1.5, 3) and (2, 4, 3, 1),
covariance 1.5 over sqrt(4.5 x 5) = 0.3162; of the two beyond noise, X is predicted on its
side, Z not. As negative controls: d and Y taken as equivalent are one pair, not flagged; d
and X taken as equivalent are one pair, flagged (1.25x [1.25, 1.25])."""
import io
import json
import math
import os
import sys
import tempfile
from contextlib import redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench", "common"))
import confirm_settings  # noqa: E402


def main():
    figures = {}

    def figure(name, value, unit, anchor_value, target, anchor="target"):
        figures[name] = (value, anchor_value)

    failures = []

    def expect(what, got, want, tol=5e-4):
        if got is None or abs(got - want) > tol:
            failures.append(f"{what}: {got}, expected {want}")

    with tempfile.TemporaryDirectory() as d:
        default = {1: 500.0, 2: 600.0, 3: 700.0}
        y_ratio = {1: math.exp(0.1), 2: 1.0, 3: math.exp(0.2)}
        for r, v in default.items():
            after = default.get(r + 1, v)
            at = {place: v + (after - v) * place / 4 for place in (1, 2, 3)}
            runs = {"d": v, "X": at[1] / 1.25, "Y": at[2] / y_ratio[r], "Z": at[3] / 0.8}
            for label, ms in runs.items():
                with open(os.path.join(d, f"{label}.r{r}.json"), "w") as f:
                    json.dump({"step_ms": [ms * 1.01, ms, ms * 0.99, ms, ms * 5]}, f)
        order = ["d", "X", "Y", "Z"]
        predicted = {"d": 100.0, "X": 100.0 / 1.2, "Y": 100.0, "Z": 100.0 / 1.1}
        out = io.StringIO()
        with redirect_stdout(out):
            scored = confirm_settings.paired_differences(d, order, predicted, figure, "t")
            one = confirm_settings.equivalent_pairs(
                d, order, {"d": "a", "X": "x", "Y": "a", "Z": "z"}, figure, "t", "test")
            flagged_figure = figures.get("equivalent_pairs_flagged_vs_t")
            two = confirm_settings.equivalent_pairs(
                d, order, {"d": "a", "X": "a", "Y": None, "Z": None}, figure, "t", "test")
        text = out.getvalue()
    if not scored:
        failures.append("paired_differences scored nothing")
    want_error = 100 * (abs(math.log(1.2 / 1.25)) + 0.1 + abs(math.log(1.1 / 0.8))) / 3
    expect("speedup error", figures.get("speedup_error_paired_vs_t", (None,))[0], want_error)
    expect("spearman", figures.get("spearman_paired_vs_t", (None,))[0], 1.5 / math.sqrt(22.5))
    agrees = figures.get("paired_beyond_noise_sign_agrees_vs_t", (None, None))
    expect("beyond noise on the predicted side", agrees[0], 1)
    expect("beyond noise", agrees[1], 2)
    half = 4.303 * 0.1 / math.sqrt(3)
    want_y = f"Y          measured {math.exp(0.1):.3f}x [{math.exp(0.1 - half):.3f}, " \
             f"{math.exp(0.1 + half):.3f}]   predicted 1.000x"
    if want_y not in text:
        failures.append(f"no line '{want_y}'")
    if one != (1, 0) or flagged_figure != (0, 1):
        failures.append(f"d ~ Y: {one} pairs/flagged, figure {flagged_figure}; expected (1, 0)")
    if two != (1, 1) or "d / X: 1.250x [1.250, 1.250] *" not in text:
        failures.append(f"d ~ X: {two} pairs/flagged; expected (1, 1) and its line")
    if failures:
        print("\n".join(failures) + "\n" + text)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
