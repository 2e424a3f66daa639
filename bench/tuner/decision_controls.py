#!/usr/bin/env python3
"""The decision rule's false "faster" verdicts on real runs whose answer is known.

Real runs of bench/horovod and bench/ddp (a grid's MODEL folder, or its confirm_settings/
folder) hold pairs of settings that run the job the same way: in Horovod, the same cycle time
and Open MPI eager limit with fusion thresholds both at or above the bytes one step reduces
(only the fusion buffer's size differs), or a config copied under another name; in DDP, the same buckets as DDP itself
reported them and the same gradient_as_bucket_view. For each such pair, each side taken as the
default and the other as the candidate, bench_decision_controls applies the rule that search,
search --live and record --autotune decide with (tuner/run_comparison.h CompareRuns), twice:
with the run-to-run noise pooled over every setting of the folder (a search that had measured
them all) and with the pair's own repeats alone. A "faster" verdict there is false; at the
rule's 95% two-sided interval about 2.5% of directed comparisons would be, were the runs'
noise what the rule assumes.

Runs are put in the order they ran (the modification time of each LABEL.rR.json: give the
folders the bench wrote, not copies). Usage:
  decision_controls.py --tool BIN --bench-figure BIN [--horovod DIR MIB]... [--ddp DIR]...
(MIB: the MiB one step of the job reduces, as bench/horovod's score.py prints it)."""
import argparse
import glob
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import bench_stats  # noqa: E402
import confirm_settings  # noqa: E402


def load_runs(directory):
    """{label: {round: (mtime, run's JSON)}} of directory's LABEL.rR.json."""
    runs = {}
    for path in glob.glob(os.path.join(directory, "*.r[0-9]*.json")):
        m = re.match(r"(.+)\.r(\d+)\.json$", os.path.basename(path))
        if not m or path.endswith(".tl.json"):
            continue
        with open(path) as f:
            job = json.load(f)
        if job.get("step_ms"):
            runs.setdefault(m.group(1), {})[int(m.group(2))] = (os.path.getmtime(path), job)
    return runs


def ddp_class(directory, label, runs):
    buckets = {tuple(job.get("buckets", [])) for _, job in runs[label].values()}
    if len(buckets) != 1 or not next(iter(buckets)):
        return None  # DDP reported none, or different buckets in different runs
    return (next(iter(buckets)),
            confirm_settings.config_params(directory, label).get("gradient_as_bucket_view"))


def comparisons(name, runs, classes):
    """The directed comparisons of every equivalent pair of the folder, in both noise modes."""
    order = sorted((mtime, label, r) for label, by_round in runs.items()
                   for r, (mtime, _) in by_round.items())
    sequence = {(label, r): i for i, (_, label, r) in enumerate(order)}

    def side(label):
        return [{"steps": job["step_ms"], "sequence": sequence[(label, r)]}
                for r, (_, job) in sorted(runs[label].items())]

    every = [side(label) for label in sorted(runs)]
    labels = sorted(label for label in runs if classes.get(label) is not None)
    out = []
    for i, a in enumerate(labels):
        for b in labels[i + 1:]:
            if classes[a] != classes[b] or len(runs[a]) < 2 or len(runs[b]) < 2:
                continue
            for d, c in ((a, b), (b, a)):
                for mode, pooled in (("pooled", every), ("own", [])):
                    out.append({"name": f"{name} {c} over {d} ({mode})", "mode": mode,
                                "default": side(d), "candidate": side(c),
                                "every_setting": pooled})
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tool", required=True, help="bench_decision_controls")
    p.add_argument("--bench-figure", required=True)
    p.add_argument("--horovod", nargs=2, action="append", default=[], metavar=("DIR", "MIB"))
    p.add_argument("--ddp", action="append", default=[], metavar="DIR")
    a = p.parse_args()
    todo = []
    for directory, mib in a.horovod:
        runs = load_runs(directory)
        classes = {label: confirm_settings.horovod_class(directory, label, float(mib) * 2**20)
                   for label in runs}
        todo += comparisons(directory, runs, classes)
    for directory in a.ddp:
        runs = load_runs(directory)
        todo += comparisons(directory, runs, {label: ddp_class(directory, label, runs)
                                              for label in runs})
    if not todo:
        print("decision_controls: no pair of equivalent settings with 2 runs each", file=sys.stderr)
        return 2
    verdicts = confirm_settings.run_rule(a.tool, todo)
    for mode in ("pooled", "own"):
        mine = [v for v, t in zip(verdicts, todo) if t["mode"] == mode]
        false = [v for v in mine if v["faster"]]
        print(f"# noise {mode}: {len(mine)} directed comparisons of equivalent settings, "
              f"{len(false)} called faster")
        for v in mine:
            print(f"#   {v['name']}: {v['speedup']:.3f} [{v['low']:.3f}, {v['high']:.3f}]"
                  f"{' FASTER' if v['faster'] else ''}"
                  f"{'' if v['remeasure'] == 'none' else ' (re-measure ' + v['remeasure'] + ')'}")
        bench_stats.figure(a.bench_figure, f"tuner.decision_rule_false_faster_{mode}_noise",
                           100.0 * len(false) / len(mine), "%", 2.5, "ratio<=1",
                           anchor="nominal_one_sided_95")
    return 0


if __name__ == "__main__":
    sys.exit(main())
