#!/usr/bin/env python3
"""How far two grids of the same real job agree with each other on the differences between
settings: the ceiling over what a model's Spearman against one grid can show.

Each DIR is a grid folder as bench/horovod and bench/ddp write them (SETTING.rR.json
production runs, predicted.tsv in the order the settings ran, the default first). Per setting
both grids have, the measured speedup over the default paired for drift
(confirm_settings.paired_ratios, geometric_mean_interval) in each, and the model's predicted
speedup from each grid's own predicted.tsv; then as result lines: the Spearman of the two
grids' measured speedups (the default's 1 included; `grids_spearman_paired`), the model's
against each
(`spearman_paired_vs_grid_a`, `_b`), the model's from one grid's traced default against its
own from the other's (`model_grids_spearman`), and of the settings whose interval leaves out
1 in both grids, how many lie on the same side of the default in both
(`grids_beyond_noise_agree`).

Pooled over all the grids given (two or more), free of the winner's curse of one grid's best:
each shared setting's paired ratios of every grid together (geometric mean, 95% t) against
the geometric mean of the model's predicted speedups from each grid; as result lines the
Spearman of the two over all shared settings (`pooled_spearman_paired`) and over the default
and the settings whose pooled interval leaves out 1 (`pooled_spearman_beyond_noise`), the
pooled best setting's measured and predicted speedup (`pooled_best_measured_speedup`,
`pooled_best_predicted_speedup`) and how far its predicted gain lies from its measured gain,
relative (`pooled_best_gain_error`, issue 21's "within a third": at most 1/3).

Usage: grid_agreement.py --bench horovod.resnet50 --bench-figure BIN DIR_A DIR_B [DIR ...]
(the pair figures for the first two)"""
import argparse
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_stats  # noqa: E402
import confirm_settings  # noqa: E402


def load_grids(dirs):
    """[(settings in running order, {setting: predicted ms, refused ones left out},
    confirm_settings.paired_ratios)] of each grid folder; exits with one line where their
    defaults (the first setting) differ."""
    grids = []
    for d in dirs:
        predicted, _, order = bench_stats.load_predicted(os.path.join(d, "predicted.tsv"))
        predicted = {n: ms for n, ms in predicted.items() if ms is not None}
        grids.append((order, predicted, confirm_settings.paired_ratios(d, order)))
    defaults = {order[0] for order, _, _ in grids}
    if len(defaults) > 1:
        raise SystemExit(f"grid_agreement: the grids' defaults differ: "
                         f"{', '.join(sorted(defaults))}")
    return grids


def rank_agreement(x, y):
    """Spearman of speedups x and y with the default's 1 first in both."""
    return bench_stats.spearman([1.0] + x, [1.0] + y)


def beyond_noise(interval):
    """Whether a (mean, low, high) speedup interval leaves out 1."""
    return interval[1] > 1 or interval[2] < 1


def predicted_speedup(grid, name):
    """The model's predicted speedup of `name` over the grid's default, or None."""
    order, predicted, _ = grid
    default = order[0]
    if name not in predicted or default not in predicted:
        return None
    return predicted[default] / predicted[name]


def agreement(dir_a, dir_b):
    """{"rows": [(setting, (m, lo, hi) in A, (m, lo, hi) in B, predicted A, predicted B)],
    "grids": Spearman A vs B, "model_a", "model_b": the model's against each, "model": the
    model's predictions from A against those from B, "both_beyond":
    [settings beyond noise in both], "same_side": [those on the same side in both]}; None where
    the grids share fewer than 2 settings with 2 paired runs besides the default."""
    a, b = load_grids([dir_a, dir_b])
    rows = []
    for n in a[0][1:]:
        ra, rb = a[2].get(n, []), b[2].get(n, [])
        pa, pb = predicted_speedup(a, n), predicted_speedup(b, n)
        if len(ra) >= 2 and len(rb) >= 2 and pa is not None and pb is not None:
            rows.append((n, confirm_settings.geometric_mean_interval(ra),
                         confirm_settings.geometric_mean_interval(rb), pa, pb))
    if len(rows) < 2:
        return None
    both = [r for r in rows if beyond_noise(r[1]) and beyond_noise(r[2])]
    return {
        "rows": rows,
        "grids": rank_agreement([r[1][0] for r in rows], [r[2][0] for r in rows]),
        "model_a": rank_agreement([r[3] for r in rows], [r[1][0] for r in rows]),
        "model_b": rank_agreement([r[4] for r in rows], [r[2][0] for r in rows]),
        "model": rank_agreement([r[3] for r in rows], [r[4] for r in rows]),
        "both_beyond": [r[0] for r in both],
        "same_side": [r[0] for r in both if (r[1][0] > 1) == (r[2][0] > 1)],
    }


def pooled(dirs):
    """{"rows": [(setting, (m, lo, hi) pooled, predicted speedup)], "spearman",
    "spearman_beyond": (value or None, the settings beyond noise), "best": the row of the
    measured best, "gain_error": |its predicted gain - its measured gain| / its measured gain
    (None without a gain)}; None where the grids share fewer than 2 settings besides the
    default."""
    grids = load_grids(dirs)
    rows = []
    for n in grids[0][0][1:]:
        speedups = [predicted_speedup(g, n) for g in grids]
        ratios = [r for _, _, by in grids for r in by.get(n, [])]
        if None in speedups or not all(by.get(n) for _, _, by in grids) or len(ratios) < 2:
            continue
        rows.append((n, confirm_settings.geometric_mean_interval(ratios),
                     math.exp(statistics.mean(math.log(x) for x in speedups))))
    if len(rows) < 2:
        return None
    beyond = [r for r in rows if beyond_noise(r[1])]
    best = max(rows, key=lambda r: r[1][0])
    gain = best[1][0] - 1
    return {
        "rows": rows,
        "spearman": rank_agreement([r[2] for r in rows], [r[1][0] for r in rows]),
        "spearman_beyond": (rank_agreement([r[2] for r in beyond], [r[1][0] for r in beyond])
                            if len(beyond) >= 2 else None, [r[0] for r in beyond]),
        "best": best,
        "gain_error": abs(best[2] - 1 - gain) / gain if gain > 0 else None,
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bench", required=True, help="the result lines' prefix, e.g. horovod.mlp")
    p.add_argument("--bench-figure", required=True, help="the bench_figure binary")
    p.add_argument("dirs", nargs="+", metavar="DIR")
    a = p.parse_args()
    if len(a.dirs) < 2:
        raise SystemExit("grid_agreement: two or more grid folders are needed")
    a.dir_a, a.dir_b = a.dirs[:2]
    for d in a.dirs:
        if not os.path.exists(os.path.join(d, "predicted.tsv")):
            raise SystemExit(f"grid_agreement: no predicted.tsv in {d} (not a scored grid)")

    def figure(name, value, unit, anchor_value, target, anchor="target"):
        bench_stats.figure(a.bench_figure, f"{a.bench}_{name}", value, unit, anchor_value,
                           target, anchor)

    got = agreement(a.dir_a, a.dir_b)
    if got is None:
        raise SystemExit("grid_agreement: the grids share fewer than 2 settings with 2 rounds "
                         "besides the default")
    print(f"# A {a.dir_a}, B {a.dir_b}: setting, measured speedup over the default paired for "
          f"drift [95% t] in A and in B, predicted from each")
    for n, ma, mb, pa, pb in got["rows"]:
        print(f"# {n:14s} A {ma[0]:.3f}x [{ma[1]:.3f}, {ma[2]:.3f}]  B {mb[0]:.3f}x "
              f"[{mb[1]:.3f}, {mb[2]:.3f}]  predicted {pa:.3f}x / {pb:.3f}x")
    figure("grids_spearman_paired", got["grids"], "1", 0.8, "none", anchor="issue_21_spearman")
    figure("spearman_paired_vs_grid_a", got["model_a"], "1", got["grids"], "none",
           anchor="grids_spearman_paired")
    figure("spearman_paired_vs_grid_b", got["model_b"], "1", got["grids"], "none",
           anchor="grids_spearman_paired")
    figure("model_grids_spearman", got["model"], "1", got["grids"], "none",
           anchor="grids_spearman_paired")
    print(f"# beyond noise in both grids: {', '.join(got['both_beyond']) or 'none'}; on the "
          f"same side of the default in both: {', '.join(got['same_side']) or 'none'}")
    if got["both_beyond"]:
        figure("grids_beyond_noise_agree", len(got["same_side"]), "settings",
               len(got["both_beyond"]), "none", anchor="beyond_noise_in_both")

    pool = pooled(a.dirs)
    if pool is None:
        return
    print(f"# pooled over {len(a.dirs)} grids: setting, measured speedup over the default "
          f"(every grid's paired ratios, geometric mean [95% t]), the model's (geometric mean "
          f"of its predictions from each grid)")
    for n, (m, lo, hi), pred in pool["rows"]:
        out = beyond_noise((m, lo, hi))
        print(f"# {n:14s} {m:.3f}x [{lo:.3f}, {hi:.3f}]{' *' if out else '  '} predicted "
              f"{pred:.3f}x")
    figure("pooled_spearman_paired", pool["spearman"], "1", 0.8, "ratio>=1")
    rho, beyond = pool["spearman_beyond"]
    print(f"# pooled, beyond noise: {', '.join(beyond) or 'none'}")
    if rho is not None:
        figure("pooled_spearman_beyond_noise", rho, "1", 0.8, "ratio>=1")
    name, (m, lo, hi), pred = pool["best"]
    error = pool["gain_error"]
    print(f"# pooled best {name}: measured {m:.3f}x [{lo:.3f}, {hi:.3f}], predicted {pred:.3f}x"
          + (f"; its predicted gain is {100 * error:.0f}% off its measured gain" if error
             is not None else "; no gain over the default"))
    figure("pooled_best_measured_speedup", m, "x", 1, "none", anchor="default")
    figure("pooled_best_predicted_speedup", pred, "x", m, "none",
           anchor="pooled_best_measured_speedup")
    if error is not None:
        figure("pooled_best_gain_error", error, "1", 1 / 3, "ratio<=1")


if __name__ == "__main__":
    main()
