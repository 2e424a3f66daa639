"""What the shell benchmarks' Python parts share: rank correlation and the one result line.

Import it with the folder on sys.path (bench/common)."""
import glob
import json
import math
import os
import random
import statistics
import subprocess


def ranks(values):
    """1-based ranks of values, ties given their mean rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    r = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2.0 + 1.0
        i = j + 1
    return r


def spearman(a, b):
    """Spearman's rank correlation of a and b (0 when either is constant)."""
    ra, rb = ranks(a), ranks(b)
    ma, mb = statistics.mean(ra), statistics.mean(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    den = (sum((x - ma) ** 2 for x in ra) * sum((y - mb) ** 2 for y in rb)) ** 0.5
    return cov / den if den > 0 else 0.0


def load_predicted(path):
    """A grid's predicted.tsv ("SETTING STEP_MS" or "SETTING refused: REASON" a line, in the
    order the settings ran, the default first): {setting: step_ms or None}, {setting:
    refusal} and the settings in file order."""
    predicted, refused, order = {}, {}, []
    for line in open(path):
        name, rest = line.rstrip("\n").split(" ", 1)
        order.append(name)
        if rest.startswith("refused"):
            predicted[name] = None
            refused[name] = rest
        else:
            predicted[name] = float(rest)
    return predicted, refused, order


def pooled_cv(groups):
    """Pooled coefficient of variation of the values within each group of two or more (a
    setting's run medians over its rounds); None when no group has two."""
    cvs = [statistics.stdev(g) / statistics.mean(g) for g in groups if len(g) > 1]
    return math.sqrt(statistics.mean(c * c for c in cvs)) if cvs else None


def median_error_of_rounds(cv, rounds, draws=20000, seed=11):
    """Expected |median of `rounds` runs - the true step time| / the true step time, where one
    run's median scatters normally with coefficient of variation cv around the true time: what
    a perfect predictor's absolute error against a setting's median over its rounds would be
    on average (normal theory; Monte Carlo with a fixed seed beyond two rounds)."""
    if rounds <= 2:  # the mean of at most two: sd cv / sqrt(rounds), E|X| = sd sqrt(2 / pi)
        return cv / math.sqrt(rounds) * math.sqrt(2 / math.pi)
    rng = random.Random(seed)
    return statistics.mean(abs(statistics.median(rng.gauss(0.0, cv) for _ in range(rounds)))
                           for _ in range(draws))


def mape_noise_floor(cv, rounds_per_setting):
    """The MAPE (%) a perfect predictor would score against the settings' medians over their
    rounds (rounds_per_setting: each scored setting's round count), at run-to-run noise cv:
    the floor under which a grid cannot tell a model's error from the medians' own."""
    if not rounds_per_setting:
        return None
    return 100 * statistics.mean(median_error_of_rounds(cv, n) for n in rounds_per_setting)


def report_noise_floor(figure, noise, rounds):
    """Prints mape_noise_floor for a grid at run-to-run noise `noise` (a CV) whose scored
    settings ran `rounds` rounds each, as figure mape_noise_floor beside issue 21's 5%: where it
    comes near, the grid cannot judge that target; more rounds lower it."""
    floor = mape_noise_floor(noise, rounds)
    if floor is None:
        return
    print(f"# a perfect predictor would score about {floor:.2f}% MAPE against these medians "
          f"({100 * noise:.1f}% run-to-run noise, {min(rounds)}-{max(rounds)} rounds, normal "
          f"scatter)")
    figure("mape_noise_floor", floor, "%", 5, "none", anchor="issue_21_mape_target")


def figure(bench_figure, bench, value, unit, anchor_value, target, anchor="target",
           invalid=False):
    """Prints one result line (bench/common/result.h) through the bench_figure binary."""
    cmd = [bench_figure, "--bench", bench, "--value", repr(float(value)), "--unit", unit,
           "--anchor", anchor, "--anchor-value", repr(float(anchor_value)), "--target", target]
    if invalid:
        cmd.append("--invalid")
    print(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout, end="")


def median_ratio_interval(a, b, resamples=2000, seed=7):
    """95% bootstrap interval of median(a) / median(b) (steps resampled)."""
    rng = random.Random(seed)
    ratios = sorted(
        statistics.median(rng.choices(a, k=len(a))) / statistics.median(rng.choices(b, k=len(b)))
        for _ in range(resamples))
    return ratios[int(0.025 * resamples)], ratios[int(0.975 * resamples) - 1]


def confirm(directory, figure):
    """Scores the alternating default/contender runs of --confirm in directory/confirm (each
    a JSON file with "step_ms"), if any: prints the per-run medians and the contender's
    speedup with a bootstrap interval over the pooled steps, as figure "confirm_speedup"."""
    runs = {}
    for which in ("default", "contender"):
        for path in sorted(glob.glob(os.path.join(directory, "confirm", f"{which}.r[0-9]*.json"))):
            if not path.endswith(".tl.json"):
                with open(path) as f:
                    runs.setdefault(which, []).append(json.load(f)["step_ms"])
    if len(runs) < 2:
        return
    d = [statistics.median(r) for r in runs["default"]]
    c = [statistics.median(r) for r in runs["contender"]]
    pooled_d = [x for r in runs["default"] for x in r]
    pooled_c = [x for r in runs["contender"] for x in r]
    lo, hi = median_ratio_interval(pooled_d, pooled_c)
    speedup = statistics.median(pooled_d) / statistics.median(pooled_c)
    print(f"# confirm, {len(d)} alternating runs each: default run medians "
          f"{', '.join(f'{x:.0f}' for x in d)} ms; contender {', '.join(f'{x:.0f}' for x in c)} ms")
    print(f"# confirm: speedup of the contender {speedup:.3f}, 95% interval over pooled steps "
          f"[{lo:.3f}, {hi:.3f}]; per-run medians: min contender/max default "
          f"{min(d) / max(c):.3f} .. {max(d) / min(c):.3f}")
    figure("confirm_speedup", speedup, "x", lo, "none", anchor="ci_low")
