#!/usr/bin/env python3
"""Scores one model's directory written by horovod_bench.sh: real vs predicted step time per
setting, MAPE, Spearman, the noise, diagnose's verdict and (with --search 1) the live
search's outcome, each figure printed as the benchmarks' result line by bench_figure."""
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


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", required=True)
    p.add_argument("--dir", required=True)
    p.add_argument("--db", required=True)
    p.add_argument("--run", type=int, required=True)
    p.add_argument("--autotune", required=True)
    p.add_argument("--bench-figure", required=True)
    p.add_argument("--search", type=int, default=0)
    p.add_argument("--print-contender", action="store_true",
                   help="print the config file to confirm against the default, and exit")
    a = p.parse_args()

    def figure(name, value, unit, anchor_value, target, anchor="target"):
        bench_stats.figure(a.bench_figure, f"horovod.{a.model}_{name}", value, unit,
                           anchor_value, target, anchor)

    predicted = {}
    order = []
    for line in open(os.path.join(a.dir, "predicted.tsv")):
        name, ms = line.split()
        predicted[name] = float(ms)
        order.append(name)
    steps = {}   # setting -> all timed steps of all its runs
    medians = {}  # setting -> per-run median step
    for name in order:
        for path in sorted(glob.glob(os.path.join(a.dir, f"{name}.r[0-9]*.json"))):
            if path.endswith(".tl.json"):
                continue
            with open(path) as f:
                step_ms = json.load(f)["step_ms"]
            steps.setdefault(name, []).extend(step_ms)
            medians.setdefault(name, []).append(statistics.median(step_ms))
    real = {n: statistics.median(medians[n]) for n in order}
    if a.print_contender:
        best_yaml = os.path.join(a.dir, "best.yaml")
        with open(os.path.join(a.dir, "search.log")) as f:
            kept = "keeping the defaults" in f.read().split("search --live: round")[-1]
        grid_best = min(order, key=lambda n: real[n])
        print(os.path.join(a.dir, f"{grid_best}.yaml") if kept else best_yaml)
        return
    print(f"# {a.model}: setting, real step ms (median of runs' medians), predicted ms, error")
    for n in order:
        err = 100 * (predicted[n] - real[n]) / real[n]
        print(f"# {n:10s} real {real[n]:9.1f}  predicted {predicted[n]:9.1f}  {err:+6.1f}%")
    ape = [abs(predicted[n] - real[n]) / real[n] for n in order]
    mape = 100 * statistics.mean(ape)
    rho = spearman([predicted[n] for n in order], [real[n] for n in order])
    figure("mape_vs_real_horovod", mape, "%", 10, "ratio<=1")
    figure("spearman_vs_real_horovod", rho, "1", 0.9, "ratio>=1")
    cvs = [statistics.stdev(s) / statistics.mean(s) for s in steps.values() if len(s) > 1]
    noise = 100 * statistics.median(cvs)
    figure("noise_step_cv", noise, "%", mape, "none", anchor="model_mape")

    default = order[0]
    best = min(order, key=lambda n: real[n])
    lo, hi = median_ratio_interval(steps[default], steps[best])
    gain_beyond_noise = lo > 1.0
    print(f"# grid best {best}: {real[best]:.1f} ms vs default {real[default]:.1f} ms; "
          f"speedup interval [{lo:.3f}, {hi:.3f}] -> "
          f"{'a gain' if gain_beyond_noise else 'no gain'} beyond step-to-step noise (one run "
          f"each: run-to-run noise is what --confirm measures)")
    figure("grid_best_speedup", real[default] / real[best], "x", 1.0, "none", anchor="default")

    with open(os.path.join(a.dir, "diagnose.json")) as f:
        diag = json.load(f)
    print(f"# diagnose run {a.run}: {diag.get('verdict', '?')}")
    figure("diagnose_max_gain", 100 * diag["max_gain_fraction"], "%",
           100 * (real[default] / real[best] - 1), "none", anchor="grid_best_gain")

    if not a.search:
        bench_stats.confirm(a.dir, figure)
        return
    db = sqlite3.connect(a.db)
    workload = db.execute("SELECT workload_name FROM runs WHERE id = ?", (a.run,)).fetchone()[0]
    search_runs = db.execute(
        "SELECT id, fusion_threshold_mb, cycle_time_ms, cache_capacity, step_ms_median FROM runs "
        "WHERE kind = 'imported' AND workload_name = ? AND id != ? ORDER BY id",
        (workload, a.run)).fetchall()
    with open(os.path.join(a.dir, "search.log")) as f:
        log = f.read()
    keeps_default = "keeping the defaults" in log.split("search --live: round")[-1]
    import yaml  # Debian's python3-yaml
    with open(os.path.join(a.dir, "best.yaml")) as f:
        params = (yaml.safe_load(f) or {}).get("params", {})
    best_knobs = (params.get("fusion_threshold_mb", 128.0), params.get("cycle_time_ms", 1.0),
                  params.get("cache_capacity", 1024))
    print(f"# search: {len(search_runs)} real runs of the job "
          f"({', '.join(f'{r[1]:.3g} MB/{r[2]:.3g} ms/cache {r[3]}: {r[4]:.0f} ms' for r in search_runs)})")
    print(f"# best.yaml: fusion {best_knobs[0]} MB, cycle {best_knobs[1]} ms, cache "
          f"{best_knobs[2]}{' (the defaults kept)' if keeps_default else ''}")
    figure("search_real_runs", len(search_runs), "runs", 3 if gain_beyond_noise else 1,
           "ratio<=1")
    best_run = next((r for r in search_runs
                     if abs(r[1] - best_knobs[0]) < 1e-4 * max(1.0, best_knobs[0])
                     and abs(r[2] - best_knobs[1]) < 1e-6 and r[3] == best_knobs[2]), None)
    if keeps_default or best_run is None:
        best_id, best_ms = a.run, real[default]
    else:
        best_id, best_ms = best_run[0], best_run[4]
    if gain_beyond_noise:
        figure("best_yaml_vs_grid_best", best_ms, "ms", real[best], "ratio<=1.03",
               anchor="grid_best_real_ms")
    else:
        figure("keeps_defaults", 1 if keeps_default else 0, "1", 1, "ratio>=1",
               anchor="no_gain_in_grid")
    if best_id != a.run:
        cmp = json.loads(subprocess.run([a.autotune, "compare", "--db", a.db, str(a.run),
                                         str(best_id), "--json"], check=True,
                                        capture_output=True, text=True).stdout)
        lo, hi = cmp["speedup_ci"]
        print(f"# best.yaml (run {best_id}) vs the default (run {a.run}) on the real job: "
              f"{cmp['step_ms_median'][1]:.0f} vs {cmp['step_ms_median'][0]:.0f} ms, speedup "
              f"{cmp['speedup']:.3f} [{lo:.3f}, {hi:.3f}] (95%): {cmp['verdict']}")
        figure("best_yaml_speedup_vs_default", cmp["speedup"], "x", lo, "none",
               anchor="ci_low")
    bench_stats.confirm(a.dir, figure)


if __name__ == "__main__":
    main()
