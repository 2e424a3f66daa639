#!/usr/bin/env python3
"""How far two grids of the same real job agree with each other on the differences between
settings: the ceiling over what a model's Spearman against one grid can show.

Each DIR is a grid folder as bench/horovod and bench/ddp write them (SETTING.rR.json
production runs, predicted.tsv in the order the settings ran, the default first). Per setting
both grids have, the measured speedup over the default paired for drift
(confirm_settings.measured_paired_speedups) in each, and the model's predicted speedup from
each grid's own predicted.tsv; then as result lines: the Spearman of the two grids' measured
speedups (the default's 1 included; `grids_spearman_paired`), the model's against each
(`spearman_paired_vs_grid_a`, `_b`), the model's from one grid's traced default against its
own from the other's (`model_grids_spearman`), and of the settings whose interval leaves out 1 in both
grids, how many lie on the same side of the default in both (`grids_beyond_noise_agree`).

Usage: grid_agreement.py --bench horovod.resnet50 --bench-figure BIN DIR_A DIR_B"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_stats  # noqa: E402
import confirm_settings  # noqa: E402


def load_predicted(directory):
    """(settings in running order, {setting: predicted ms}); refused settings are in the order
    but not in the map."""
    order, predicted = [], {}
    for line in open(os.path.join(directory, "predicted.tsv")):
        name, rest = line.rstrip("\n").split(" ", 1)
        order.append(name)
        try:
            predicted[name] = float(rest)
        except ValueError:
            pass
    return order, predicted


def agreement(dir_a, dir_b):
    """{"rows": [(setting, (m, lo, hi) in A, (m, lo, hi) in B, predicted A, predicted B)],
    "grids": Spearman A vs B, "model_a", "model_b": the model's against each, "model": the
    model's predictions from A against those from B, "both_beyond":
    [settings beyond noise in both], "same_side": [those on the same side in both]}; None where
    the grids share fewer than 2 settings besides the default."""
    (order_a, pred_a), (order_b, pred_b) = load_predicted(dir_a), load_predicted(dir_b)
    if order_a[0] != order_b[0]:
        raise SystemExit(f"grid_agreement: the grids' defaults differ: {order_a[0]} in {dir_a}, "
                         f"{order_b[0]} in {dir_b}")
    default = order_a[0]
    meas_a = {n: (m, lo, hi) for n, m, lo, hi in
              confirm_settings.measured_paired_speedups(dir_a, order_a)}
    meas_b = {n: (m, lo, hi) for n, m, lo, hi in
              confirm_settings.measured_paired_speedups(dir_b, order_b)}
    rows = []
    for n in order_a:
        if n in meas_a and n in meas_b and n in pred_a and n in pred_b:
            rows.append((n, meas_a[n], meas_b[n], pred_a[default] / pred_a[n],
                         pred_b[default] / pred_b[n]))
    if len(rows) < 2:
        return None

    def rho(x, y):
        return bench_stats.spearman([1.0] + x, [1.0] + y)

    def beyond(iv):
        return iv[1] > 1 or iv[2] < 1

    both = [r for r in rows if beyond(r[1]) and beyond(r[2])]
    return {
        "rows": rows,
        "grids": rho([r[1][0] for r in rows], [r[2][0] for r in rows]),
        "model_a": rho([r[3] for r in rows], [r[1][0] for r in rows]),
        "model_b": rho([r[4] for r in rows], [r[2][0] for r in rows]),
        "model": rho([r[3] for r in rows], [r[4] for r in rows]),
        "both_beyond": [r[0] for r in both],
        "same_side": [r[0] for r in both if (r[1][0] > 1) == (r[2][0] > 1)],
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bench", required=True, help="the result lines' prefix, e.g. horovod.mlp")
    p.add_argument("--bench-figure", required=True, help="the bench_figure binary")
    p.add_argument("dir_a")
    p.add_argument("dir_b")
    a = p.parse_args()
    for d in (a.dir_a, a.dir_b):
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


if __name__ == "__main__":
    main()
