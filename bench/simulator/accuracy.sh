#!/usr/bin/env bash
# Simulator accuracy against the live executor on the emulated cluster (DESIGN.md, "The
# emulated cluster"; issue 3, "Accuracy").
#
# On 2 nodes x 2 ranks at 1 Gbit/s: records a calibration, and per workload (resnet50: many
# small tensors; vgg16: few large ones, each at a --scale that keeps a run well under a
# minute) a baseline run (repeated, for the measurement noise) and 13 other knob settings
# spanning threshold, cycle time, cache and hierarchical allreduce. Each setting is then
# simulated from the baseline trace alone (`autotune simulate --run BASELINE`), and the
# script prints, per workload and overall:
#   MAPE of the median step time, Spearman rank correlation of predicted vs measured,
#   whether the measured best setting is in the predicted top 3, and the noise (spread of
#   the repeated baseline medians: (max - min) / median, and their coefficient of variation).
# Targets (issue 3): MAPE <= 10% (goal 5%, and no worse than the noise), rho >= 0.9, best in
# top 3. Result lines use the benchmarks' fixed format:
#   bench=simulator_accuracy figure=<what> value=<v> unit=<u> anchor=target anchor_value=<a>
#   ratio=<v/a> target="<goal>" met=<yes|no|info>
#
# Usage: accuracy.sh [--autotune BIN] [--out DIR] [--steps N] [--repeats R]
#                    [--resnet-scale X] [--vgg-scale Y] [--rate RATE] [--workloads "a b"]
# Needs root (network namespaces), python3; exits 77 when the cluster cannot be hosted.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
autotune="$root/build/autotune"
out=""
steps=8
repeats=3
resnet_scale=0.1
vgg_scale=0.02
rate=1gbit
workloads="resnet50 vgg16"

while [[ $# -gt 0 ]]; do
  case $1 in
    --autotune) autotune=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --resnet-scale) resnet_scale=$2; shift 2 ;;
    --vgg-scale) vgg_scale=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --workloads) workloads=$2; shift 2 ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    *) echo "accuracy.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ -x $autotune ]] || { echo "accuracy.sh: no autotune binary at $autotune (--autotune BIN)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "accuracy.sh: needs python3" >&2; exit 77; }
[[ -n $out ]] || out=$(mktemp -d /tmp/autotune-accuracy.XXXXXX)
mkdir -p "$out"
db="$out/accuracy.db"
rm -f "$db" "$db-wal" "$db-shm"
results="$out/results.tsv"
: > "$results"

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

start=$(date +%s)
log "calibrating 2x2 at $rate into $db"
cal=$(on_cluster calibrate --repetitions 5 --max-bytes $((16 << 20)))
log "calibration: $(json_field "$cal" calibration 2>/dev/null || echo stored)"

for workload in $workloads; do
  scale=$resnet_scale
  [[ $workload == vgg16 ]] && scale=$vgg_scale
  common=(record --workload "$workload" --scale "$scale" --steps "$steps" --warmup-steps 2)
  log "$workload (scale $scale): baseline x$repeats"
  baseline=""
  for ((r = 0; r < repeats; r++)); do
    j=$(on_cluster "${common[@]}")
    run=$(json_field "$j" run)
    [[ -n $baseline ]] || baseline=$run
    printf '%s\trepeat\t%s\t%s\t-\n' "$workload" "baseline" "$(json_field "$j" step_ms_median)" \
      >> "$results"
  done
  sim=$("$autotune" simulate --db "$db" --run "$baseline" --json)
  # The baseline as a setting: its first recorded run's median against its prediction.
  base_measured=$(awk -F'\t' -v w="$workload" '$1 == w && $2 == "repeat" {print $4; exit}' "$results")
  printf '%s\tsetting\t%s\t%s\t%s\n' "$workload" "baseline" "$base_measured" \
    "$(json_field "$sim" step_ms_median)" >> "$results"
  for s in "${settings[@]}"; do
    # shellcheck disable=SC2086  # the setting is a list of flags
    j=$(on_cluster "${common[@]}" $s)
    # shellcheck disable=SC2086
    sim=$("$autotune" simulate --db "$db" --run "$baseline" --json $s)
    printf '%s\tsetting\t%s\t%s\t%s\n' "$workload" "$s" "$(json_field "$j" step_ms_median)" \
      "$(json_field "$sim" step_ms_median)" >> "$results"
    log "$workload $s: measured $(json_field "$j" step_ms_median) ms, predicted $(json_field "$sim" step_ms_median) ms"
  done
done
log "measurements took $(( $(date +%s) - start )) s; raw rows in $results"

python3 - "$results" <<'EOF'
import statistics, sys

rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1]) if line.strip()]

def ranks(values):
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
    ra, rb = ranks(a), ranks(b)
    ma, mb = statistics.mean(ra), statistics.mean(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    den = (sum((x - ma) ** 2 for x in ra) * sum((y - mb) ** 2 for y in rb)) ** 0.5
    return cov / den if den > 0 else 0.0

def figure(name, value, unit, anchor, target, met):
    ratio = value / anchor if anchor else 0.0
    print(f"bench=simulator_accuracy figure={name} value={value:.4g} unit={unit} anchor=target "
          f"anchor_value={anchor:.4g} ratio={ratio:.4g} target=\"{target}\" met={met}")

all_measured, all_predicted, all_ape = [], [], []
for workload in dict.fromkeys(r[0] for r in rows):
    settings = [r for r in rows if r[0] == workload and r[1] == "setting"]
    repeats = [float(r[3]) for r in rows if r[0] == workload and r[1] == "repeat"]
    measured = [float(r[3]) for r in settings]
    predicted = [float(r[4]) for r in settings]
    ape = [abs(p - m) / m for p, m in zip(predicted, measured)]
    all_measured += measured; all_predicted += predicted; all_ape += ape
    print(f"# {workload}: {len(settings)} settings")
    print(f"# {'setting':<80} {'measured ms':>12} {'predicted ms':>12} {'error':>8}")
    for r, m, p in zip(settings, measured, predicted):
        print(f"# {r[2]:<80} {m:12.3f} {p:12.3f} {100 * (p - m) / m:+7.1f}%")
    mape = 100 * statistics.mean(ape)
    rho = spearman(predicted, measured)
    best = min(range(len(measured)), key=lambda i: measured[i])
    top3 = sorted(range(len(predicted)), key=lambda i: predicted[i])[:3]
    noise = 100 * (max(repeats) - min(repeats)) / statistics.median(repeats) if repeats else 0
    cv = 100 * statistics.pstdev(repeats) / statistics.mean(repeats) if len(repeats) > 1 else 0
    figure(f"{workload}_mape", mape, "%", 10, "<= 10% (goal 5%)", "yes" if mape <= 10 else "no")
    figure(f"{workload}_spearman_rho", rho, "1", 0.9, ">= 0.9", "yes" if rho >= 0.9 else "no")
    figure(f"{workload}_measured_best_in_predicted_top3", 1.0 if best in top3 else 0.0, "bool", 1,
           "yes", "yes" if best in top3 else "no")
    figure(f"{workload}_noise_range", noise, "%", mape if mape else 1, "for scale: spread of "
           f"{len(repeats)} repeated baseline medians", "info")
    figure(f"{workload}_noise_cv", cv, "%", mape if mape else 1, "coefficient of variation of "
           "the repeated baseline medians", "info")
if all_ape:
    mape = 100 * statistics.mean(all_ape)
    rho = spearman(all_predicted, all_measured)
    figure("overall_mape", mape, "%", 10, "<= 10% (goal 5%)", "yes" if mape <= 10 else "no")
    figure("overall_spearman_rho", rho, "1", 0.9, ">= 0.9", "yes" if rho >= 0.9 else "no")
EOF
