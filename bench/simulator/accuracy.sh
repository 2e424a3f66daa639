#!/usr/bin/env bash
# Simulator accuracy against the live executor on the emulated cluster (DESIGN.md, "The
# emulated cluster").
#
# On 2 nodes x 2 ranks at 1 Gbit/s: records a calibration, and per workload (resnet50: many
# small tensors; vgg16: few large ones, each at a --scale that keeps a run well under a
# minute) the baseline (default knobs) and 13 other knob settings spanning threshold, cycle
# time, cache and hierarchical allreduce, in --repeats interleaved rounds. In each round
# every setting is simulated from that round's baseline trace alone (`autotune simulate
# --run BASELINE`); a setting's measured and predicted step times are the medians over the
# rounds. The script prints, per workload and overall:
#   MAPE of the step time, Spearman rank correlation of predicted vs measured, whether the
#   measured best setting is in the predicted top 3, and the measurement noise (spread of a
#   setting's rounds: (max - min) / median, and coefficient of variation; medians over the
#   settings; and the Spearman rho of one round's measured times against another's, the
#   ranking a perfect model could show against single measurements).
# Targets: MAPE <= 10% (goal 5%, and no worse than the noise), rho >= 0.9, best in top 3,
# and the baseline's self-replay (predicted from its own trace) within 10%.
# Each figure is the benchmarks' result line (bench/common/result.h, printed by BIN_FIGURE):
#   bench=simulator_accuracy.<workload>_<figure> value=V unit=U anchor=NAME anchor_value=A
#   ratio=R target=T met=yes|no|n/a
#
# Usage: accuracy.sh [--autotune BIN] [--bench-figure BIN_FIGURE] [--out DIR] [--steps N]
#                    [--repeats R] [--resnet-scale X] [--vgg-scale Y] [--rate RATE]
#                    [--workloads "a b"]
#        accuracy.sh --rescore DIR [--autotune BIN] [--bench-figure BIN_FIGURE]
#   --rescore re-predicts the runs measured into DIR by an earlier invocation (its
#   accuracy.db and results.tsv) with BIN, without the cluster: a model change is scored
#   on the same measurements.
# Needs root (network namespaces), python3; exits 77 when the cluster cannot be hosted.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
autotune="$root/build/autotune"
bench_figure="$root/build/bench/common/bench_figure"
out=""
steps=8
repeats=3
# resnet50 at scale 0.3 rather than 0.1: at 0.1 the same setting's median step time varied by
# a CV of 8-13% between runs on 2 cores, at 0.3 by 2.4-6% (longer steps, the same hiccups).
resnet_scale=0.3
vgg_scale=0.02
rate=1gbit
workloads="resnet50 vgg16"
rescore=""

while [[ $# -gt 0 ]]; do
  case $1 in
    --autotune) autotune=$2; shift 2 ;;
    --bench-figure) bench_figure=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --resnet-scale) resnet_scale=$2; shift 2 ;;
    --vgg-scale) vgg_scale=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --workloads) workloads=$2; shift 2 ;;
    --rescore) rescore=$2; shift 2 ;;
    -h|--help) sed -n '2,29p' "$0"; exit 0 ;;
    *) echo "accuracy.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ -x $autotune ]] || { echo "accuracy.sh: no autotune binary at $autotune (--autotune BIN)" >&2; exit 2; }
[[ -x $bench_figure ]] ||
  { echo "accuracy.sh: no bench_figure binary at $bench_figure (--bench-figure BIN)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "accuracy.sh: needs python3" >&2; exit 77; }
if [[ -n $rescore ]]; then
  [[ -f $rescore/results.tsv && -f $rescore/accuracy.db ]] ||
    { echo "accuracy.sh: $rescore has no results.tsv and accuracy.db" >&2; exit 2; }
  out=$rescore
fi
[[ -n $out ]] || out=$(mktemp -d /tmp/autotune-accuracy.XXXXXX)
mkdir -p "$out"
db="$out/accuracy.db"
results="$out/results.tsv"
if [[ -z $rescore ]]; then
  rm -f "$db" "$db-wal" "$db-shm"
  : > "$results"
fi

cluster=("$root/tools/cluster.sh" --nodes 2 --ranks-per-node 2 --rate "$rate")
log() { echo "# $*" >&2; }

# Runs autotune on the cluster; prints its --json object (the last line starting with '{').
on_cluster() {
  local rc=0 text
  text=$("${cluster[@]}" -- "$autotune" "$@" --db "$db" --json 2>"$out/last.err") || rc=$?
  if [[ $rc -eq 77 ]]; then cat "$out/last.err" >&2; exit 77; fi
  if [[ $rc -ne 0 ]]; then
    echo "accuracy.sh: autotune $* failed (exit $rc):" >&2
    tail -5 "$out/last.err" >&2
    exit 1
  fi
  grep '^{' <<<"$text" | tail -1
}
json_field() { python3 -c "import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])" "$1" "$2"; }

# The 13 settings besides the baseline (default knobs: 128 MB, 1 ms, cache 1024, flat).
settings=(
  "--fusion-threshold-mb 0"
  "--fusion-threshold-mb 1"
  "--fusion-threshold-mb 4"
  "--fusion-threshold-mb 16"
  "--cycle-time-ms 0.5"
  "--cycle-time-ms 5"
  "--cycle-time-ms 20"
  "--cache-capacity 0"
  "--fusion-threshold-mb 0 --cache-capacity 0"
  "--hierarchical-allreduce"
  "--fusion-threshold-mb 4 --hierarchical-allreduce"
  "--fusion-threshold-mb 0 --hierarchical-allreduce"
  "--fusion-threshold-mb 16 --cycle-time-ms 10 --cache-capacity 0 --hierarchical-allreduce"
)

# Predicts setting $3 (flags) from baseline run $2 and appends the row for workload $1,
# round $4.
predict() {
  local sim
  # shellcheck disable=SC2086  # a setting is a list of flags
  sim=$("$autotune" simulate --db "$db" --run "$2" --json ${3/baseline/})
  printf '%s\tpredicted\t%s\t%s\t%s\n' "$1" "$3" "$(json_field "$sim" step_ms_median)" "$4" \
    >> "$results"
}

if [[ -n $rescore ]]; then
  log "re-predicting the measurements in $results with $autotune"
  grep -v $'\tpredicted\t' "$results" > "$results.measured"
  mv "$results.measured" "$results"
  while IFS=$'\t' read -r workload kind setting _ round run; do
    [[ $kind == measured && $setting == baseline ]] || continue
    [[ -n $run ]] || { echo "accuracy.sh: $results predates --rescore (no run ids)" >&2; exit 2; }
    while IFS=$'\t' read -r w2 k2 s2 _ r2 _; do
      [[ $w2 == "$workload" && $k2 == measured && $r2 == "$round" ]] || continue
      predict "$workload" "$run" "$s2" "$round"
    done < <(cat "$results")
  done < <(cat "$results")
else
start=$(date +%s)
log "calibrating 2x2 at $rate into $db"
on_cluster calibrate --repetitions 10 --max-bytes $((16 << 20)) > /dev/null

# Rounds: every setting once per round, so a change in the machine's load hits all
# settings alike; a setting's measurement is the median over rounds of its run medians.
for workload in $workloads; do
  scale=$resnet_scale
  [[ $workload == vgg16 ]] && scale=$vgg_scale
  common=(record --workload "$workload" --scale "$scale" --steps "$steps" --warmup-steps 2)
  for ((r = 1; r <= repeats; r++)); do
    log "$workload (scale $scale): round $r of $repeats"
    baseline=""
    for s in "" "${settings[@]}"; do
      # shellcheck disable=SC2086  # a setting is a list of flags
      j=$(on_cluster "${common[@]}" $s)
      [[ -n $baseline ]] || baseline=$(json_field "$j" run)
      printf '%s\tmeasured\t%s\t%s\t%s\t%s\n' "$workload" "${s:-baseline}" \
        "$(json_field "$j" step_ms_median)" "$r" "$(json_field "$j" run)" >> "$results"
    done
    # Each round's settings predicted from that round's baseline trace alone.
    for s in "" "${settings[@]}"; do
      predict "$workload" "$baseline" "${s:-baseline}" "$r"
    done
    "$autotune" simulate --db "$db" --run "$baseline" --explain | sed -n '3,4p' | \
      sed "s/^/# round $r model: /" >&2
  done
done
log "measurements took $(( $(date +%s) - start )) s; raw rows in $results"
fi

python3 - "$results" "$bench_figure" "$root/bench/common" <<'EOF'
import statistics, sys
sys.path.insert(0, sys.argv[3])
from bench_stats import spearman
import bench_stats

rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1]) if line.strip()]

# One result line; target bounds the ratio value / anchor ("ratio<=1", ...) or is "none".
def figure(name, value, unit, anchor, target, anchor_name="target"):
    bench_stats.figure(sys.argv[2], "simulator_accuracy." + name, value, unit, anchor, target,
                       anchor_name)

all_measured, all_predicted, all_ape = [], [], []
for workload in dict.fromkeys(r[0] for r in rows):
    names = list(dict.fromkeys(r[2] for r in rows if r[0] == workload and r[1] == "measured"))
    by_setting = {n: [float(r[3]) for r in rows if r[0] == workload and r[1] == "measured"
                      and r[2] == n] for n in names}
    predicted_of = {}
    for r in rows:
        if r[0] == workload and r[1] == "predicted":
            predicted_of.setdefault(r[2], []).append(float(r[3]))
    predicted_of = {n: statistics.median(v) for n, v in predicted_of.items()}
    names = [n for n in names if n in predicted_of]
    measured = [statistics.median(by_setting[n]) for n in names]
    predicted = [predicted_of[n] for n in names]
    ape = [abs(p - m) / m for p, m in zip(predicted, measured)]
    all_measured += measured; all_predicted += predicted; all_ape += ape
    rounds = min(len(v) for v in by_setting.values())
    print(f"# {workload}: {len(names)} settings, {rounds} rounds each (median over rounds)")
    print(f"# {'setting':<78} {'measured ms':>12} {'spread':>7} {'predicted ms':>12} {'error':>7}")
    spreads, cvs = [], []
    for n, m, p in zip(names, measured, predicted):
        v = by_setting[n]
        spread = 100 * (max(v) - min(v)) / statistics.median(v)
        spreads.append(spread)
        if len(v) > 1:
            cvs.append(100 * statistics.pstdev(v) / statistics.mean(v))
        print(f"# {n:<78} {m:12.3f} {spread:6.1f}% {p:12.3f} {100 * (p - m) / m:+6.1f}%")
    mape = 100 * statistics.mean(ape)
    rho = spearman(predicted, measured)
    best = min(range(len(measured)), key=lambda i: measured[i])
    top3 = sorted(range(len(predicted)), key=lambda i: predicted[i])[:3]
    noise = statistics.median(spreads) if spreads else 0.0
    cv = statistics.median(cvs) if cvs else 0.0
    figure(f"{workload}_mape", mape, "%", 10, "ratio<=1")  # goal 5%
    figure(f"{workload}_spearman_rho", rho, "1", 0.9, "ratio>=1")
    figure(f"{workload}_measured_best_in_predicted_top3", 1.0 if best in top3 else 0.0, "bool", 1,
           "ratio>=1")
    # Self-replay: the baseline predicted from its own trace (issue 21's target: within 10%;
    # against autotune's executor, not a real job).
    if "baseline" in names:
        i = names.index("baseline")
        figure(f"{workload}_self_replay_abs_error", 100 * ape[i], "%", 10, "ratio<=1")
    # Noise, for information: medians over the settings of (max - min) / median of the
    # rounds' step times, and of the rounds' coefficient of variation.
    figure(f"{workload}_noise_range", noise, "%", mape if mape else 1, "none",
           anchor_name="model_mape")
    figure(f"{workload}_noise_cv", cv, "%", mape if mape else 1, "none",
           anchor_name="model_mape")
    # How well one measured round ranks the settings of another: what a perfect model could
    # show against single measurements (the anchor is the model's rho against the medians).
    by_round = {}
    for r in rows:
        if r[0] == workload and r[1] == "measured" and r[2] in names:
            by_round.setdefault(r[4], {})[r[2]] = float(r[3])
    complete = [v for v in by_round.values() if len(v) == len(names)]
    pairs = [spearman([a[n] for n in names], [b[n] for n in names])
             for i, a in enumerate(complete) for b in complete[i + 1:]]
    if pairs:
        # The median over pairs of rounds of the Spearman rho between their measured times.
        figure(f"{workload}_noise_spearman_round_vs_round", statistics.median(pairs), "1", rho,
               "none", anchor_name="model_spearman_rho")
if all_ape:
    mape = 100 * statistics.mean(all_ape)
    rho = spearman(all_predicted, all_measured)
    figure("overall_mape", mape, "%", 10, "ratio<=1")
    figure("overall_spearman_rho", rho, "1", 0.9, "ratio>=1")
EOF
