#!/usr/bin/env python3
"""bench/common/bench_stats.py's noise floor and confirm_settings.py's floor of equivalent
settings: the MAPE a perfect predictor would score against medians over a few noisy rounds,
checked against the order statistics' own densities and against a class worked out by hand.

For one run's median scattering as N(mu, (cv mu)^2), the median over n rounds of a standard
normal has density n! / (k! k!) phi(x) Phi(x)^k (1 - Phi(x))^k for odd n = 2k + 1; for n = 2
it is the mean of two, N(0, 1/2); for n = 1 phi itself. E|X| is integrated numerically here
(trapezoids over [-8, 8]), independently of the code's closed form and Monte Carlo.
The pooled CV by hand: groups (90, 110) and (200, 200, 200): stdev 14.142 / mean 100 = 0.14142
and 0; sqrt((0.02 + 0) / 2) = 0.1; a group of one counts for nothing.
Equivalent settings measured 100, 110 and 130 ms (one class) beside a fourth of its own: one
time for the class at 100 costs 0 + 10/110 + 30/130 = 0.3217, at 110 10/100 + 0 + 20/130 =
0.2538, at 130 0.3 + 20/110 = 0.4818, at 105 (between two) 0.05 + 5/110 + 25/130 = 0.2878;
the best, 0.2538, over 4 settings is 6.346% MAPE."""
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench", "common"))
import bench_stats  # noqa: E402
import confirm_settings  # noqa: E402

sys.path.insert(0, HERE)
from checks import Checks  # noqa: E402


def phi(x):
    return math.exp(-x * x / 2) / math.sqrt(2 * math.pi)


def cdf(x):
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))


def expected_abs(density, steps=16000, lo=-8.0, hi=8.0):
    h = (hi - lo) / steps
    xs = [lo + i * h for i in range(steps + 1)]
    ys = [abs(x) * density(x) for x in xs]
    return h * (sum(ys) - (ys[0] + ys[-1]) / 2)


def main():
    checks = Checks("noise_floor_test")
    cv = 0.08
    densities = {
        1: phi,
        2: lambda x: phi(x * math.sqrt(2)) * math.sqrt(2),
        3: lambda x: 6 * phi(x) * cdf(x) * (1 - cdf(x)),
        5: lambda x: 30 * phi(x) * (cdf(x) * (1 - cdf(x))) ** 2,
    }
    for n, density in densities.items():
        # Closed form for n <= 2 (tight); Monte Carlo of 20,000 draws beyond (about 0.5%).
        checks.near(f"median error over {n} rounds", bench_stats.median_error_of_rounds(cv, n),
                    cv * expected_abs(density), rel=1e-4 if n <= 2 else 0.02)
    checks.near("pooled cv", bench_stats.pooled_cv([[90, 110], [200, 200, 200], [50]]), 0.1,
                rel=1e-9)
    checks.true("pooled cv of groups of one is None",
                bench_stats.pooled_cv([[1.0], [2.0]]) is None)
    # Two settings of 2 rounds and one of 3: the mean of their expected errors, in %.
    want = 100 * cv * (2 * expected_abs(densities[2]) + expected_abs(densities[3])) / 3
    checks.near("noise floor", bench_stats.mape_noise_floor(cv, [2, 2, 3]), want, rel=0.01)
    checks.true("noise floor of no settings is None", bench_stats.mape_noise_floor(cv, []) is None)
    # More rounds, a lower floor: 1 > 2 > 3 > 5.
    errs = [bench_stats.median_error_of_rounds(cv, n) for n in (1, 2, 3, 5)]
    checks.true("the floor falls with more rounds", all(a > b for a, b in zip(errs, errs[1:])),
                str(errs))
    real = {"a": 100.0, "b": 110.0, "c": 130.0, "d": 90.0}
    classes = {"a": "x", "b": "x", "c": "x", "d": "y"}
    checks.near("equivalent floor", confirm_settings.equivalent_floor(real, classes),
                100 * (0.1 + 20 / 130) / 4, rel=1e-9)
    checks.true("equivalent floor of no class of two is None",
                confirm_settings.equivalent_floor(real, {"a": "x", "b": None, "c": "z"}) is None)
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
