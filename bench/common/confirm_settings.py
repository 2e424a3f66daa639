#!/usr/bin/env python3
"""Scores alternating production runs of the default and other settings (--confirm-settings
of bench/horovod/horovod_bench.sh): DIR/LABEL.rR.json, each train.py's JSON line with
"step_ms".

Per setting: the median over its runs of each run's median step time; the speedup over the
default, paired for drift as autotune's own rule pairs it (tuner/run_comparison.h): round r
runs the default first, then the settings in --settings order, so each run of a setting is
compared with the default interpolated between round r's default run and round r+1's, at the
setting's place in the round (round r's alone in the last round); the speedup is the median of
those ratios (default / setting), with a 95% Student-t interval of their geometric mean
(mean log ratio +- t(n-1) * s / sqrt(n)): with 3 rounds a bootstrap over 3 ratios is bounded by
their min and max and covers about 75%, not 95% (the default against itself measured 1.117x
[1.078, 1.214] that way on the held-out transformer).
Beside it: the unpaired ratio of medians with its bootstrap interval over the run medians, and
the min-max ratio over runs (min of the default's run medians / max of the setting's .. max /
min). With --decision-tool, also autotune's own decision rule on the same runs (rule_verdicts:
tuner/run_comparison.h, the one rule behind search, search --live and record --autotune, which
judges each run by its steps' median, pairs runs for drift by their order and pools the
run-to-run noise over every setting confirmed): faster, slower, within noise, or the run it
would re-measure first. Printed as result lines (bench/common/result.h):
PREFIX_confirm_LABEL_step (ms, anchor the default's), PREFIX_confirm_LABEL_speedup (x, paired,
anchor the interval's low end) and PREFIX_confirm_LABEL_rule_speedup (x, the rule's, anchor its
interval's low end)."""
import argparse
import glob
import json
import math
import os
import random
import re
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_stats  # noqa: E402


def run_medians_by_round(directory, label):
    """{round: the median step time of label's run in that round}."""
    out = {}
    for path in glob.glob(os.path.join(directory, f"{label}.r[0-9]*.json")):
        with open(path) as f:
            out[int(re.search(r"\.r(\d+)\.json$", path).group(1))] = statistics.median(
                json.load(f)["step_ms"])
    return out


def run_medians(directory, label):
    """The median step time of each run of label, in round order."""
    by_round = run_medians_by_round(directory, label)
    return [by_round[r] for r in sorted(by_round)]


def drift_paired_ratios(default_by_round, runs_by_round, place, slots):
    """default / setting for each run of a setting, the default interpolated between its own
    round's run and the next round's at place / slots of the way (the default runs at 0)."""
    ratios = []
    for r, s in sorted(runs_by_round.items()):
        if r not in default_by_round:
            continue
        d = default_by_round[r]
        if r + 1 in default_by_round:
            d += (default_by_round[r + 1] - d) * place / slots
        ratios.append(d / s)
    return ratios


# Student's t, two-sided 95% (0.975 quantile), by degrees of freedom; beyond 30 the normal's.
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
        9: 2.262, 10: 2.228, 12: 2.179, 15: 2.131, 20: 2.086, 25: 2.060, 30: 2.042}


def t975(dof):
    """The 0.975 quantile of Student's t with dof degrees of freedom (the table's next lower
    entry between its rows: wider, never narrower)."""
    if dof > 30:
        return 1.960
    return T975[max(d for d in T975 if d <= dof)]


def geometric_mean_interval(ratios):
    """(geometric mean, low, high): the 95% t interval of the mean log ratio; (x, x, x) for one
    ratio (no spread known)."""
    logs = [math.log(r) for r in ratios]
    m = statistics.mean(logs)
    if len(logs) < 2:
        return math.exp(m), math.exp(m), math.exp(m)
    half = t975(len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
    return math.exp(m), math.exp(m - half), math.exp(m + half)


def paired_ratios(directory, order):
    """{setting: [default / setting for each of its runs]}, paired for drift
    (drift_paired_ratios, the setting's place in `order` the grid's running order, the default
    order[0]); empty where the default has fewer than 2 rounds."""
    default_by_round = run_medians_by_round(directory, order[0])
    if len(default_by_round) < 2:
        return {}
    return {name: drift_paired_ratios(default_by_round, run_medians_by_round(directory, name),
                                      place, len(order))
            for place, name in enumerate(order) if place > 0}


def measured_paired_speedups(directory, order):
    """[(setting, geometric mean, low, high)]: each setting's measured speedup over the default
    (order[0]) with its 95% t interval, from paired_ratios; settings with fewer than 2 paired
    runs left out, and all of them where the default has fewer than 2 rounds."""
    return [(name, *geometric_mean_interval(ratios))
            for name, ratios in paired_ratios(directory, order).items() if len(ratios) >= 2]


def paired_differences(directory, order, predicted, figure, vs):
    """Scores a model on differences between settings, paired for drift: directory holds a
    grid's production runs (SETTING.rR.json; round r ran the settings in `order`, the default
    first); predicted maps a setting to its predicted step time (None: refused). Per setting
    the measured speedup over the default (drift_paired_ratios, geometric_mean_interval)
    beside the predicted one (default / setting); then, as result lines through figure(name,
    value, unit, anchor_value, target, anchor=...): the mean absolute log error of the
    predicted speedups in percent (speedup_error_paired_vs_VS), their Spearman with the
    measured ones, the default's 1 included (spearman_paired_vs_VS), and, of the settings
    whose interval leaves out 1, how many are predicted on the same side of the default
    (paired_beyond_noise_sign_agrees_vs_VS). Nothing with fewer than 2 rounds (one ratio a
    setting leaves no interval): returns False then."""
    default = order[0]
    default_by_round = run_medians_by_round(directory, default)
    if len(default_by_round) < 2 or predicted.get(default) is None:
        print("# paired differences: fewer than 2 rounds of the default, none scored")
        return False
    rows = [(name, m, lo, hi, predicted[default] / predicted[name])
            for name, m, lo, hi in measured_paired_speedups(directory, order)
            if predicted.get(name) is not None]
    if len(rows) < 2:
        print("# paired differences: fewer than 2 settings with 2 rounds, none scored")
        return False
    print(f"# paired differences (each run against the default of its round, interpolated to "
          f"its place; geometric mean, 95% t over {len(default_by_round)} rounds): setting, "
          f"measured speedup [interval], predicted speedup")
    beyond = []
    for name, m, lo, hi, pred in rows:
        out = lo > 1 or hi < 1
        if out:
            beyond.append((name, m, pred))
        print(f"# {name:10s} measured {m:.3f}x [{lo:.3f}, {hi:.3f}]{' *' if out else '  '} "
              f"predicted {pred:.3f}x")
    error = 100 * statistics.mean(abs(math.log(pred / m)) for _, m, _, _, pred in rows)
    figure(f"speedup_error_paired_vs_{vs}", error, "%", 0, "none", anchor=f"{vs}_paired")
    rho = bench_stats.spearman([1.0] + [r[4] for r in rows], [1.0] + [r[1] for r in rows])
    figure(f"spearman_paired_vs_{vs}", rho, "1", 0.8, "ratio>=1")
    if beyond:
        agree = [n for n, m, pred in beyond if (m > 1) == (pred > 1)]
        print(f"# beyond noise, paired: {', '.join(n for n, _, _ in beyond)}; predicted on the "
              f"same side of the default: {', '.join(agree) if agree else 'none'}")
        figure(f"paired_beyond_noise_sign_agrees_vs_{vs}", len(agree), "settings", len(beyond),
               "ratio>=1", anchor=f"{vs}_paired_beyond_noise")
    else:
        print("# beyond noise, paired: no setting's interval leaves out 1")
    return True


def config_params(directory, label):
    """The key: value lines of directory/LABEL.yaml, flattened (the knob names the bench's
    config files hold are unique across their sections)."""
    with open(os.path.join(directory, f"{label}.yaml")) as f:
        return dict(line.strip().split(": ", 1) for line in f if ": " in line.strip())


def horovod_class(directory, label, step_bytes):
    """The key of LABEL.yaml's Horovod setting for equivalent_pairs: settings with one key run
    a job reducing step_bytes a step the same way (the same cycle time, cache and hierarchical
    flags, and fusion thresholds that both take every tensor ready in a cycle, at or above
    step_bytes, or the same threshold) under the same Open MPI TCP eager limit
    (autotune_extra.mpi.tcp_eager_limit: the MLP's 0.3 MB buffers ran 1.15-1.48x faster at
    524288 than at Open MPI's own, so the two are no control of each other). A knob the file
    leaves out is Horovod's default (the cache on at 1024, hierarchical off; Open MPI's own
    limit, 0)."""
    p = config_params(directory, label)
    threshold = float(p["fusion_threshold_mb"]) * 2**20
    return ("all" if step_bytes > 0 and threshold >= step_bytes else threshold,
            float(p["cycle_time_ms"]), int(p.get("cache_capacity", 1024)),
            p.get("hierarchical_allreduce", "false"), p.get("hierarchical_allgather", "false"),
            int(p.get("tcp_eager_limit", 0)))


def equivalent_pairs(directory, order, classes, figure, vs, why):
    """Negative controls: settings of one class (classes maps a setting to a key; settings
    with equal keys run the job the same way, e.g. two fusion thresholds both above the bytes
    one step reduces) should measure alike. For each such pair A, B (A earlier in the round)
    B's runs against A's, paired for drift (drift_paired_ratios with A as the anchor at B's
    distance from it), with their 95% t interval; a pair whose interval leaves out 1 is a false
    "beyond noise" of the measurement itself. Prints them (why says what makes the settings
    alike) and the result line equivalent_pairs_flagged_vs_VS (pairs flagged, anchored on the
    pairs scored). Returns (pairs scored, pairs flagged)."""
    rows = []
    for i, a in enumerate(order):
        for j in range(i + 1, len(order)):
            b = order[j]
            if classes.get(a) is None or classes.get(a) != classes.get(b):
                continue
            ratios = drift_paired_ratios(run_medians_by_round(directory, a),
                                         run_medians_by_round(directory, b), j - i, len(order))
            if len(ratios) >= 2:
                rows.append((a, b, *geometric_mean_interval(ratios)))
    if not rows:
        print(f"# equivalent settings: none with 2 rounds ({why})")
        return 0, 0
    flagged = [r for r in rows if r[3] > 1 or r[4] < 1]
    print(f"# equivalent settings ({why}), which should measure alike: {len(rows)} pairs, "
          f"{len(flagged)} beyond noise by the paired rule")
    for a, b, m, lo, hi in rows:
        print(f"#   {a} / {b}: {m:.3f}x [{lo:.3f}, {hi:.3f}]{' *' if lo > 1 or hi < 1 else ''}")
    figure(f"equivalent_pairs_flagged_vs_{vs}", len(flagged), "pairs", len(rows), "none",
           anchor=f"{vs}_equivalent_pairs")
    return len(rows), len(flagged)


def equivalent_floor(real, classes):
    """The MAPE (%) over real's settings ({setting: measured step time}) of the best predictor
    that gives each class of equivalent settings (classes as equivalent_pairs takes them) one
    time: a model right about Horovod must predict them alike, so what their medians differ by
    is measurement, a floor under any such model's MAPE that assumes no distribution. Each
    class's time is the one of its members' medians that minimizes the class's summed relative
    error (the sum is piecewise linear in the time, so a member's value is optimal). None where
    no class has two members."""
    members = {}
    for n in real:
        if classes.get(n) is not None:
            members.setdefault(classes[n], []).append(real[n])
    groups = [g for g in members.values() if len(g) > 1]
    if not groups:
        return None
    error = sum(min(sum(abs(c - r) / r for r in g) for c in g) for g in groups)
    return 100 * error / len(real)


def report_equivalent_floor(figure, real, classes):
    """Prints equivalent_floor for the scored settings' medians real, as figure
    mape_equivalent_floor beside issue 21's 5%."""
    floor = equivalent_floor(real, classes)
    if floor is not None:
        print(f"# the best predictor giving each class of equivalent settings (below) one time "
              f"would score {floor:.2f}% MAPE against these medians")
        figure("mape_equivalent_floor", floor, "%", 5, "none", anchor="issue_21_mape_target")


def run_rule(tool, comparisons):
    """The decision rule's verdicts (bench/tuner/bench_decision_controls, which applies
    tuner/run_comparison.h CompareRuns) on comparisons, each {"name", "default": [{"steps",
    "sequence"}, ...], "candidate": [...], "every_setting": [[...], ...]}: one dict each, in
    order, with "faster" and "slower" (the interval wholly below 1, nothing to re-measure)."""
    done = subprocess.run([tool], input=json.dumps({"comparisons": comparisons}), text=True,
                          capture_output=True, check=True).stdout.splitlines()
    verdicts = [json.loads(line) for line in done]
    for v in verdicts:
        v["slower"] = (v["valid"] and v["run_to_run_known"] and v["remeasure"] == "none" and
                       v["high"] < 1)
    return verdicts


def rule_verdicts(directory, order, tool, baseline=None, only=None):
    """{setting: verdict} of autotune's own decision rule (run_rule) on a grid's production
    runs (SETTING.rR.json; round r ran `order`, the default first): each setting against the
    default (or against `baseline`, another of them; only the settings in `only` where given),
    the runs in the order they ran, the run-to-run noise pooled over every setting of the grid
    (as a search that had measured them all would pool it)."""
    runs = {}
    for n in order:
        for path in glob.glob(os.path.join(directory, f"{n}.r[0-9]*.json")):
            r = int(re.search(r"\.r(\d+)\.json$", path).group(1))
            with open(path) as f:
                steps = json.load(f)["step_ms"]
            if steps:
                runs.setdefault(n, []).append(
                    {"steps": steps, "sequence": (r - 1) * len(order) + order.index(n)})
    for n in runs:
        runs[n].sort(key=lambda run: run["sequence"])
    default = baseline or order[0]
    names = [n for n in order if n != default and n in runs and (only is None or n in only)]
    if default not in runs or not names:
        return {}
    every = [runs[n] for n in order if n in runs]
    verdicts = run_rule(tool, [{"name": n, "default": runs[default], "candidate": runs[n],
                                "every_setting": every} for n in names])
    return dict(zip(names, verdicts))


def rule_beyond_noise(directory, order, predicted, tool, figure, vs):
    """Scores a model on the settings autotune's own rule separates from the default
    (rule_verdicts): prints each, and as result lines the Spearman of predicted with measured
    step times over the default and those settings (spearman_rule_beyond_noise_vs_VS; 3 or
    more), and of those the rule calls slower (faster), how many are predicted slower
    (faster) than the default (rule_slower_predicted_slower_vs_VS, ..._faster_...)."""
    if not os.access(tool, os.X_OK):
        print(f"# no decision tool at {tool} (build bench_decision_controls): the rule's "
              f"figures are left out")
        return {}
    verdicts = rule_verdicts(directory, order, tool)
    default = order[0]
    split = {n: v for n, v in verdicts.items()
             if predicted.get(n) is not None and (v["faster"] or v["slower"])}
    print(f"# autotune's decision rule (tuner/run_comparison.h), each setting against the "
          f"default, noise pooled over the grid: {len(split)} of {len(verdicts)} settings "
          f"separated from it")
    for n, v in split.items():
        print(f"#   {n}: {'faster' if v['faster'] else 'slower'}, {v['speedup']:.3f}x "
              f"[{v['low']:.3f}, {v['high']:.3f}]; predicted "
              f"{predicted[default] / predicted[n]:.3f}x")
    measured = {n: median_of_medians(directory, n) for n in [default] + list(split)}
    if len(split) >= 2:
        names = [default] + list(split)
        figure(f"spearman_rule_beyond_noise_vs_{vs}",
               bench_stats.spearman([predicted[n] for n in names], [measured[n] for n in names]),
               "1", 0.8, "ratio>=1")
    for side in ("slower", "faster"):
        mine = [n for n, v in split.items() if v[side]]
        if not mine:
            print(f"# no setting {side} than the default by the rule")
            continue
        right = [n for n in mine if (predicted[n] > predicted[default] if side == "slower"
                                     else predicted[n] < predicted[default])]
        figure(f"rule_{side}_predicted_{side}_vs_{vs}", len(right), "settings", len(mine),
               "ratio>=1", anchor=f"{vs}_rule_{side}")
    return verdicts


def median_of_medians(directory, label):
    """The median over label's runs of each run's median step time."""
    return statistics.median(run_medians(directory, label))


def median_ratio_interval(a, b, resamples=2000, seed=7):
    """95% bootstrap interval of median(a) / median(b), a and b resampled."""
    rng = random.Random(seed)
    ratios = sorted(statistics.median(rng.choices(a, k=len(a))) /
                    statistics.median(rng.choices(b, k=len(b))) for _ in range(resamples))
    return ratios[int(0.025 * resamples)], ratios[int(0.975 * resamples) - 1]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dir", required=True)
    p.add_argument("--default", required=True, help="the default's label")
    p.add_argument("--settings", required=True, help="the other labels, space separated")
    p.add_argument("--prefix", required=True, help="figure name prefix: horovod.mlp")
    p.add_argument("--bench-figure", required=True)
    p.add_argument("--decision-tool", default="",
                   help="bench_decision_controls: add autotune's own rule's verdict")
    a = p.parse_args()
    default_by_round = run_medians_by_round(a.dir, a.default)
    default = run_medians(a.dir, a.default)
    labels = a.settings.split()
    if not default:
        print(f"# confirm: no runs of the default {a.default} in {a.dir}")
        bench_stats.figure(a.bench_figure, f"{a.prefix}_confirm_default_step", 0, "ms", 0,
                           "none", invalid=True)
        return 1
    d = statistics.median(default)
    print(f"# confirm: default {a.default}: {len(default)} runs, run medians "
          f"{', '.join(f'{x:.1f}' for x in default)} ms, median {d:.1f} ms")
    for place, label in enumerate(labels, start=1):
        runs = run_medians(a.dir, label)
        if not runs:
            print(f"# confirm: no runs of {label} in {a.dir}")
            bench_stats.figure(a.bench_figure, f"{a.prefix}_confirm_{label}_speedup", 0, "x", 0,
                               "none", anchor="ci_low", invalid=True)
            continue
        s = statistics.median(runs)
        lo, hi = median_ratio_interval(default, runs)
        paired = drift_paired_ratios(default_by_round, run_medians_by_round(a.dir, label),
                                     place, len(labels) + 1)
        speedup, plo, phi = geometric_mean_interval(paired) if paired else (d / s, lo, hi)
        print(f"# confirm: {label}: {len(runs)} runs, run medians "
              f"{', '.join(f'{x:.1f}' for x in runs)} ms, median {s:.1f} ms; speedup paired "
              f"for drift {speedup:.3f} [{plo:.3f}, {phi:.3f}] (geometric mean, 95% t interval, "
              f"of {len(paired)} paired ratios {', '.join(f'{x:.3f}' for x in paired)}); "
              f"unpaired {d / s:.3f} [{lo:.3f}, {hi:.3f}] over run medians; min-max over runs "
              f"{min(default) / max(runs):.3f} .. {max(default) / min(runs):.3f}")
        bench_stats.figure(a.bench_figure, f"{a.prefix}_confirm_{label}_step", s, "ms", d,
                           "none", anchor=f"{a.default}_step")
        bench_stats.figure(a.bench_figure, f"{a.prefix}_confirm_{label}_speedup", speedup, "x",
                           plo, "none", anchor="ci_low")
    if a.decision_tool:
        print_rule_verdicts(
            a.dir, a.default, labels, a.decision_tool,
            lambda name, *rest, **kw: bench_stats.figure(a.bench_figure, f"{a.prefix}_{name}",
                                                         *rest, **kw))
    return 0


def verdict_words(v):
    """One verdict of run_rule in words: "faster, 1.188 [1.020, 1.382]", "slower, ...",
    "within noise, ..." or "undecided until the candidate's outlying run is re-measured, ..."."""
    if v["remeasure"] != "none":
        word = f"undecided until the {v['remeasure']}'s outlying run is re-measured"
    else:
        word = "faster" if v["faster"] else "slower" if v["slower"] else "within noise"
    return f"{word}, {v['speedup']:.3f} [{v['low']:.3f}, {v['high']:.3f}]"


def print_rule_verdicts(directory, default, labels, tool, figure):
    """Each confirmed setting against the default by autotune's own rule (rule_verdicts) on
    directory's rounds (LABEL.rR.json, each round the default first, then labels): prints the
    verdict and, through figure(name, value, unit, anchor_value, target, anchor=...), the
    figure confirm_LABEL_rule_speedup (anchor: its interval's low end)."""
    if not os.access(tool, os.X_OK):
        print(f"# confirm: no decision tool at {tool} (build bench_decision_controls): the "
              f"rule's verdicts are left out")
        return
    verdicts = rule_verdicts(directory, [default] + labels, tool)
    for label in labels:
        v = verdicts.get(label)
        if v is None or not v["valid"]:
            print(f"# confirm by autotune's rule: {label}: no verdict (too few runs)")
            continue
        print(f"# confirm by autotune's rule (tuner/run_comparison.h; run-to-run noise "
              f"{100 * v['across_cv']:.1f}%, pooled over the confirmed settings): {label}: "
              f"{verdict_words(v)}")
        figure(f"confirm_{label}_rule_speedup", v["speedup"], "x", v["low"], "none",
               anchor="ci_low")
    # Head to head: autotune's choice against Horovod's autotune's, where both were confirmed.
    if "autotune" in labels and "horovod" in labels:
        v = rule_verdicts(directory, [default] + labels, tool, baseline="horovod",
                          only=["autotune"]).get("autotune")
        if v and v["valid"]:
            print(f"# confirm by autotune's rule, head to head: autotune against horovod: "
                  f"{verdict_words(v)}")
            figure("confirm_autotune_vs_horovod_rule_speedup", v["speedup"], "x", v["low"],
                   "none", anchor="ci_low")


if __name__ == "__main__":
    sys.exit(main())
