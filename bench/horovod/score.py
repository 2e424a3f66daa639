#!/usr/bin/env python3
"""Scores one model's directory written by horovod_bench.sh against real Horovod's PRODUCTION
runs (no timeline): per setting the production step time (median over rounds, min-max), the
traced step time where traced and the prediction; MAPE, Spearman over all settings and over
those that differ from the default beyond twice the run-to-run noise, the differences paired
for drift (each setting's speedup over the default against the predicted speedup:
bench/common/confirm_settings.py paired_differences), the measured best
setting's speedup against its predicted speedup, whether the settings measured slower than the
default are predicted slower, diagnose's verdict and (with --search 1) the live search's
outcome, each figure printed as the benchmarks' result line by bench_figure. With --extrap,
scores the extrapolation folder instead (the 2x1 default predicting 2x1, 4x1 and 2x2).

Files read in --dir: SETTING.rR.json (production runs), fit/SETTING.rR.json (traced runs, the
model's fit inputs), predicted.tsv ("SETTING STEP_MS" or "SETTING refused: REASON"),
diagnose.json; with --search, search.log and best.yaml."""
import argparse
import glob
import json
import os
import sqlite3
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from bench_stats import median_ratio_interval, spearman  # noqa: E402
import bench_stats  # noqa: E402
import confirm_settings  # noqa: E402

VS = "real_horovod_production"  # what every figure is measured against


def load_runs(pattern):
    """{setting: [[step_ms of one run], ...]} of the run files matching pattern (a glob with
    {name} for the setting), rounds in order."""
    runs = {}
    for path in sorted(glob.glob(pattern.format(name="*"))):
        if path.endswith(".tl.json"):
            continue
        name = os.path.basename(path).split(".r")[0]
        with open(path) as f:
            runs.setdefault(name, []).append(json.load(f)["step_ms"])
    return runs


def spread(runs):
    """Median over runs of each run's median step, and the min and max of those."""
    medians = [statistics.median(r) for r in runs]
    return statistics.median(medians), min(medians), max(medians)


def run_to_run_noise(production):
    """Pooled coefficient of variation of one run's median step between the rounds of a
    setting (None when no setting has two rounds)."""
    return bench_stats.pooled_cv([[statistics.median(r) for r in runs]
                                  for runs in production.values()])


def label(topo):
    """A result name's part for a predicted shape: "4x1", or "4x1_calibrated" for "4x1+cal"."""
    return topo.replace("+cal", "_calibrated")


def extrap(a, figure):
    predicted, refused, order = bench_stats.load_predicted(os.path.join(a.dir, "predicted.tsv"))
    print(f"# {a.model} default, extrapolated from the 2x1 traced run (run {a.run}); production "
          f"median ms [min-max over rounds], traced median, predicted")
    real = {}
    for topo in order:
        # "4x1+cal": 4x1 predicted with a calibrate of 4x1 in the database; the same real runs.
        base = topo.split("+")[0]
        prod = load_runs(os.path.join(a.dir, base, "{name}.r[0-9]*.json")).get("f128_c1", [])
        traced = load_runs(os.path.join(a.dir, base, "fit", "{name}.r[0-9]*.json")).get(
            "f128_c1", [])
        if not prod:
            print(f"# {topo}: no production runs")
            continue
        real[topo], lo, hi = spread(prod)
        tr = f"{spread(traced)[0]:9.1f}" if traced else "        -"
        p = predicted[topo]
        pred = f"{p:9.1f}  {100 * (p - real[topo]) / real[topo]:+6.1f}%" if p else refused[topo]
        print(f"# {topo:7s} production {real[topo]:9.1f} [{lo:.1f}-{hi:.1f}]  traced {tr}  "
              f"predicted {pred}")
    # The communication part: "TOPO PRED_EXPOSED PRED_TOTAL REAL_EXPOSED REAL_TOTAL" (ms per
    # step, diagnose's median step of the predicted run and of the real traced run).
    comm_path = os.path.join(a.dir, "comm.tsv")
    for line in open(comm_path) if os.path.exists(comm_path) else []:
        topo, pe, pt, re_, rt = line.split()
        pe, pt, re_, rt = float(pe), float(pt), float(re_), float(rt)
        print(f"# {topo:7s} communication per step: exposed real {re_:.1f} ms (traced run), "
              f"predicted {pe:.1f} ms ({100 * (pe - re_) / re_:+.1f}%); in all real {rt:.1f}, "
              f"predicted {pt:.1f} ms ({100 * (pt - rt) / rt:+.1f}%)")
        if topo != "2x1":
            figure(f"extrap_{label(topo)}_exposed_comm", pe, "ms", re_, "none",
                   anchor=f"real_horovod_traced_{topo.split('+')[0]}_exposed_comm_ms")
    for topo in order:
        if topo == "2x1" or topo not in real:
            continue
        if predicted[topo] is None:
            print(f"# extrapolation to {topo}: {refused[topo]}")
            continue
        base = topo.split("+")[0]
        figure(f"extrap_{label(topo)}_step", predicted[topo], "ms", real[topo], "none",
               anchor=f"{VS}_{base}_ms")
        if predicted.get("2x1") and "2x1" in real:
            figure(f"extrap_{label(topo)}_over_2x1", predicted[topo] / predicted["2x1"], "x",
                   real[topo] / real["2x1"], "none", anchor=f"{VS}_{base}_over_2x1")


def step_bytes_of(a):
    """The bytes one step of run a.run reduces (its tensors in the score database)."""
    with sqlite3.connect(a.db) as db:
        return db.execute("SELECT coalesce(sum(bytes), 0) FROM tensors WHERE run_id = ?",
                          (a.run,)).fetchone()[0]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", required=True)
    p.add_argument("--dir", required=True)
    p.add_argument("--db", required=True)
    p.add_argument("--run", type=int, required=True)
    p.add_argument("--autotune", required=True)
    p.add_argument("--bench-figure", required=True)
    p.add_argument("--decision-tool", default="",
                   help="bench_decision_controls: score the settings autotune's own decision "
                        "rule separates from the default")
    p.add_argument("--search", type=int, default=0)
    p.add_argument("--search-db", help="the database of the live search (default --db)")
    p.add_argument("--search-run", type=int, help="the run the search started from (--run)")
    p.add_argument("--extrap", action="store_true", help="score an --extrap folder")
    p.add_argument("--production-fit", default="",
                   help="the settings whose production rounds the fit took (space separated)")
    p.add_argument("--fit-rounds", type=int, default=1,
                   help="how many of their production rounds (the first ones) it took")
    p.add_argument("--grid", default="",
                   help="the bench's grid, space separated (its 12 settings): where other "
                        "settings were measured too, the MAPE is also given over the grid's")
    p.add_argument("--print-contender", action="store_true",
                   help="print the config file to confirm against the default, and exit")
    a = p.parse_args()

    def figure(name, value, unit, anchor_value, target, anchor="target", invalid=False):
        bench_stats.figure(a.bench_figure, f"horovod.{a.model}_{name}", value, unit,
                           anchor_value, target, anchor, invalid)

    if a.extrap:
        extrap(a, figure)
        return
    predicted, refused, order = bench_stats.load_predicted(os.path.join(a.dir, "predicted.tsv"))
    production = load_runs(os.path.join(a.dir, "{name}.r[0-9]*.json"))
    traced = load_runs(os.path.join(a.dir, "fit", "{name}.r[0-9]*.json"))
    order = [n for n in order if n in production]
    real, lo, hi = {}, {}, {}
    for n in order:
        real[n], lo[n], hi[n] = spread(production[n])
    default = order[0]
    if a.print_contender:
        best_yaml = os.path.join(a.dir, "best.yaml")
        with open(os.path.join(a.dir, "search.log")) as f:
            kept = "keeping the defaults" in f.read().split("search --live: round")[-1]
        grid_best = min(order, key=lambda n: real[n])
        print(os.path.join(a.dir, f"{grid_best}.yaml") if kept else best_yaml)
        return

    noise = run_to_run_noise({n: production[n] for n in order})
    rounds = max(len(production[n]) for n in order)
    print(f"# {a.model}: setting, production step ms (median over {rounds} rounds of each run's "
          f"median) [min-max], traced ms (fit input), predicted ms from the traced default "
          f"(run {a.run}), error against production")
    for n in order:
        tr = f"{spread(traced[n])[0]:9.1f}" if n in traced else "        -"
        if predicted[n] is None:
            pred = refused[n]
        else:
            pred = f"{predicted[n]:9.1f}  {100 * (predicted[n] - real[n]) / real[n]:+6.1f}%"
        print(f"# {n:10s} production {real[n]:9.1f} [{lo[n]:9.1f} -{hi[n]:9.1f}]  traced {tr}  "
              f"predicted {pred}")
    overheads = [spread(traced[n])[0] / real[n] - 1 for n in order if n in traced]
    if overheads:
        figure("timeline_overhead", 100 * statistics.median(overheads), "%", 0, "none",
               anchor=f"{VS}_step")
    if noise is None:
        print("# run-to-run noise unmeasured (one round): the beyond-noise figures are left out")
    else:
        figure("run_to_run_noise_cv", 100 * noise, "%", 0, "none", anchor=f"{VS}_rounds")
        bench_stats.report_noise_floor(
            figure, noise, [len(production[n]) for n in order if predicted.get(n)])

    scored = [n for n in order if predicted[n] is not None]
    if len(order) < 2:
        print("# one setting measured: no MAPE, Spearman or grid best (they take two or more)")
        if a.search:
            search(a, figure, real, default, None, None)
        bench_stats.confirm(a.dir, figure)
        return
    if predicted[default] is None or len(scored) < 2:
        print(f"# predictions refused for the default or all but one setting: "
              f"{refused.get(default, '')}")
        figure(f"mape_vs_{VS}", 0, "%", 5, "ratio<=1", invalid=True)
        return
    def mape_of(names):
        return 100 * statistics.mean(abs(predicted[n] - real[n]) / real[n] for n in names)

    mape = mape_of(scored)
    figure(f"mape_vs_{VS}", mape, "%", 5, "ratio<=1")
    rho = spearman([predicted[n] for n in scored], [real[n] for n in scored])
    figure(f"spearman_vs_{VS}", rho, "1", 0.8, "ratio>=1")
    # The same over the settings none of whose production runs the fit took.
    fitted = a.production_fit.split()
    held = [n for n in scored if n not in fitted]
    if fitted and len(held) >= 2:
        rounds_fitted = "round 1" if a.fit_rounds == 1 else f"rounds 1-{a.fit_rounds}"
        print(f"# held out of the fit (no production run of theirs fitted): {len(held)} settings; "
              f"fitted on production {rounds_fitted} of {', '.join(fitted)}")
        figure(f"mape_held_out_vs_{VS}", mape_of(held), "%", 5, "ratio<=1")
        figure(f"spearman_held_out_vs_{VS}",
               spearman([predicted[n] for n in held], [real[n] for n in held]), "1", 0.8,
               "ratio>=1")

    # The same over the bench's grid alone, where settings beyond it (sub-MB buffers, eager
    # limits: --settings) were measured too: the grid is what issue 21's MAPE names.
    grid = [n for n in scored if n in a.grid.split()]
    if 2 <= len(grid) < len(scored):
        grid_held = [n for n in grid if n not in fitted]
        print(f"# the grid's {len(grid)} settings alone (the rest: "
              f"{', '.join(n for n in scored if n not in grid)})")
        figure(f"mape_grid_vs_{VS}", mape_of(grid), "%", 5, "ratio<=1")
        if fitted and len(grid_held) >= 2:
            figure(f"mape_grid_held_out_vs_{VS}", mape_of(grid_held), "%", 5, "ratio<=1")

    confirm_settings.paired_differences(a.dir, order, predicted, figure, VS)
    if a.decision_tool:
        confirm_settings.rule_beyond_noise(a.dir, order, predicted, a.decision_tool, figure, VS)
    step_bytes = step_bytes_of(a)
    classes = {n: confirm_settings.horovod_class(a.dir, n, step_bytes) for n in order}
    confirm_settings.report_equivalent_floor(figure, {n: real[n] for n in scored}, classes)
    confirm_settings.equivalent_pairs(
        a.dir, order, classes, figure, VS,
        f"the same cycle time, cache and hierarchical flags, fusion thresholds at or above the "
        f"{step_bytes / 2**20:.2f} MiB one step reduces (or the same threshold), the same eager "
        f"limit")

    def beyond_noise(n):
        return noise is not None and abs(real[n] - real[default]) > 2 * noise * real[default]

    distinct = [default] + [n for n in scored if n != default and beyond_noise(n)]
    if noise is None:
        pass
    elif len(distinct) >= 3:
        rho_d = spearman([predicted[n] for n in distinct], [real[n] for n in distinct])
        print(f"# beyond 2 x noise ({200 * noise:.1f}%) from the default: "
              f"{', '.join(distinct[1:])} (with the default: {len(distinct)} settings)")
        figure(f"spearman_beyond_noise_vs_{VS}", rho_d, "1", 0.8, "ratio>=1")
    else:
        print(f"# only {len(distinct) - 1} setting(s) differ from the default beyond 2 x noise "
              f"({200 * noise:.1f}%): no Spearman over them")

    best = min(scored, key=lambda n: real[n])
    speedup = real[default] / real[best]
    pred_speedup = predicted[default] / predicted[best]
    print(f"# measured best {best}: {real[best]:.1f} ms vs default {real[default]:.1f} ms "
          f"({speedup:.3f}x, {'beyond' if beyond_noise(best) else 'within'} 2 x noise); "
          f"predicted speedup of {best}: {pred_speedup:.3f}x")
    figure("best_measured_speedup", speedup, "x", 1.0, "none", anchor=f"{VS}_default")
    figure("best_predicted_speedup", pred_speedup, "x", speedup, "none",
           anchor=f"{VS}_best_speedup")
    chosen = min(scored, key=lambda n: predicted[n])
    print(f"# predicted best {chosen}: predicted {predicted[default] / predicted[chosen]:.3f}x, "
          f"measured {real[default] / real[chosen]:.3f}x")
    figure("predicted_best_measured_speedup", real[default] / real[chosen], "x", speedup,
           "none", anchor=f"{VS}_best_speedup")

    # Medians more than twice the noise apart: information beside autotune's own rule, which
    # pairs the runs for drift and decides "slower" (rule_slower_predicted_slower above; on
    # /tmp/hvdG2 the medians flagged f32_c1, which builds the default's very buffers).
    slower = [n for n in scored if n != default and beyond_noise(n) and real[n] > real[default]]
    if noise is not None:
        caught = [n for n in slower if predicted[n] > predicted[default]]
        for n in slower:
            print(f"# slower than the default by medians 2 x noise apart: {n} "
                  f"({real[n] / real[default]:.3f}x the default's time), predicted "
                  f"{predicted[n] / predicted[default]:.3f}x: "
                  f"{'predicted slower' if n in caught else 'NOT predicted slower'}")
        if slower:
            figure("slower_by_medians_predicted_slower", len(caught), "settings", len(slower),
                   "none", anchor=f"{VS}_slower_by_medians")
        else:
            print("# no setting's median is slower than the default's by 2 x noise")

    with open(os.path.join(a.dir, "diagnose.json")) as f:
        diag = json.load(f)
    print(f"# diagnose run {a.run}: {diag.get('verdict', '?')}")
    figure("diagnose_max_gain", 100 * diag["max_gain_fraction"], "%", 100 * (speedup - 1),
           "none", anchor=f"{VS}_best_gain")

    if not a.search:
        bench_stats.confirm(a.dir, figure)
        return
    # Noise unmeasured (one round): the grid cannot say whether the job offers a gain.
    search(a, figure, real, default, speedup, beyond_noise(best) if noise is not None else None)
    bench_stats.confirm(a.dir, figure)


def search(a, figure, real, default, grid_speedup, gain_beyond_noise):
    """The live search's outcome: its runs' production step times (which decided) beside the
    traced ones (which fed the model); the traced comparison at the end is traced only."""
    db = sqlite3.connect(a.search_db or a.db)
    start_run = a.search_run or a.run
    workload = db.execute("SELECT workload_name FROM runs WHERE id = ?",
                          (start_run,)).fetchone()[0]
    search_runs = db.execute(
        "SELECT id, fusion_threshold_mb, cycle_time_ms, cache_capacity, step_ms_median, "
        "untraced_step_ms FROM runs "
        "WHERE kind = 'imported' AND workload_name = ? AND id != ? ORDER BY id",
        (workload, start_run)).fetchall()
    with open(os.path.join(a.dir, "search.log")) as f:
        log = f.read()
    keeps_default = "keeping the defaults" in log.split("search --live: round")[-1]
    import yaml  # Debian's python3-yaml
    with open(os.path.join(a.dir, "best.yaml")) as f:
        params = (yaml.safe_load(f) or {}).get("params", {})
    best_knobs = (params.get("fusion_threshold_mb", 128.0), params.get("cycle_time_ms", 1.0),
                  params.get("cache_capacity", 1024))
    def step_times(r):  # production (the run that decided) where the import has it
        return (f"production {r[5]:.0f} ms, traced {r[4]:.0f} ms" if r[5] > 0
                else f"traced {r[4]:.0f} ms")
    runs = ", ".join(f"{r[1]:.3g} MB/{r[2]:.3g} ms/cache {r[3]}: {step_times(r)}"
                     for r in search_runs)
    print(f"# search: {len(search_runs)} real runs of the job ({runs})")
    print(f"# best.yaml: fusion {best_knobs[0]} MB, cycle {best_knobs[1]} ms, cache "
          f"{best_knobs[2]}{' (the defaults kept)' if keeps_default else ''}")
    # gain_beyond_noise None: no grid to say whether the job offers a gain.
    figure("search_real_runs", len(search_runs), "runs",
           1 if gain_beyond_noise is False else 3, "ratio<=1")
    match = [n for n in real
             if n == f"f{best_knobs[0]:g}_c{best_knobs[1]:g}" and best_knobs[2] == 1024]
    if gain_beyond_noise:
        chosen = real[default] if keeps_default or not match else real[match[0]]
        # Issue 22: within 5% of the grid's best (its step time at most 1.05x the best's).
        figure("best_yaml_production_speedup", real[default] / chosen, "x", grid_speedup,
               "ratio>=0.952", anchor=f"{VS}_best_speedup")
    elif gain_beyond_noise is not None:
        figure("keeps_defaults", 1 if keeps_default else 0, "1", 1, "ratio>=1",
               anchor="no_gain_in_grid")
    best_run = next((r for r in search_runs
                     if abs(r[1] - best_knobs[0]) < 1e-4 * max(1.0, best_knobs[0])
                     and abs(r[2] - best_knobs[1]) < 1e-6 and r[3] == best_knobs[2]), None)
    if not keeps_default and best_run is not None:
        cmp = json.loads(subprocess.run([a.autotune, "compare", "--db", a.search_db or a.db,
                                         str(start_run), str(best_run[0]), "--json"],
                                        check=True, capture_output=True, text=True).stdout)
        lo, hi = cmp["speedup_ci"]
        print(f"# best.yaml (run {best_run[0]}) vs the default (run {start_run}), both traced: "
              f"{cmp['step_ms_median'][1]:.0f} vs {cmp['step_ms_median'][0]:.0f} ms, speedup "
              f"{cmp['speedup']:.3f} [{lo:.3f}, {hi:.3f}] (95%): {cmp['verdict']}")
        figure("best_yaml_traced_speedup_vs_default", cmp["speedup"], "x", lo, "none",
               anchor="ci_low")


if __name__ == "__main__":
    main()
