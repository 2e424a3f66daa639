#!/usr/bin/env bash
# autotune against REAL Horovod (not our executor) on the emulated cluster.
#
# Where `horovod.torch` is importable by the system python3 (exit 77 with one line
# otherwise; README.md says how to build Horovod from its public source by hand), runs the
# real training job bench/horovod/train.py on 2 nodes x 2 ranks at --rate for two models,
# resnet50 (compute-bound) and mlp (404 small tensors, little compute), under a grid of 12
# settings (fusion threshold {128, 0, 4, 32} MB x cycle time {1, 5, 25} ms; the first is
# Horovod's default), each through `autotune apply --config-file` with HOROVOD_TIMELINE on
# (every run pays the timeline's cost alike, as `search --live` does). Then, per model:
#   - imports the DEFAULT setting's timeline (`autotune import`) and predicts every setting
#     from it and a calibration of the same cluster (`autotune simulate`);
#   - prints real vs predicted step time per setting, the MAPE and the Spearman rank
#     correlation (targets: MAPE <= 10%, goal 5%);
#   - `autotune diagnose`'s verdict on the imported default;
#   - with --search: `autotune search --live --launcher "<this job>"` from the imported run,
#     the number of real runs it used, and the real step time of its best.yaml against the
#     default's (`autotune compare`, bootstrap interval). Targets: where the grid shows a gain
#     beyond noise, best.yaml within 3% of the grid's best using at most 3 real runs; where it
#     shows none, the verdict "keep the defaults" after one.
# A setting's real step time is the median over its --repeats runs of train.py's median step
# (wall clock per step, max over ranks). Each figure is one result line
# (bench/common/result.h) printed by bench_figure.
#
# Usage: horovod_bench.sh [--out DIR] [--models "resnet50 mlp"] [--steps N] [--warmup N]
#                         [--repeats R] [--rate RATE] [--search] [--confirm N] [--autotune BIN]
#                         [--bench-figure BIN] [--python PY]
#        horovod_bench.sh --rescore DIR [--search] [--confirm N]   # re-score DIR's runs
#   --confirm N: after the search, runs the default and best.yaml (or, when best.yaml keeps
#   the defaults, the grid's best) alternately N times each, and prints the speedup with a
#   bootstrap interval over those runs: the comparison a user would trust, made side by side
#   in time so that the machine's drift hits both alike.
# Needs root (network namespaces), the system python3 with torch, torchvision and horovod.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
autotune="$root/build/autotune"
bench_figure="$root/build/bench/common/bench_figure"
python=/usr/bin/python3
out=""
models="resnet50 mlp"
steps=8
warmup=2
repeats=1
rate=1gbit
search=0
confirm=0
rescore=""

while [[ $# -gt 0 ]]; do
  case $1 in
    --out) out=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --search) search=1; shift ;;
    --confirm) confirm=$2; shift 2 ;;
    --autotune) autotune=$2; shift 2 ;;
    --bench-figure) bench_figure=$2; shift 2 ;;
    --python) python=$2; shift 2 ;;
    --rescore) rescore=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "horovod_bench.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ -x $autotune ]] || { echo "horovod_bench.sh: no autotune binary at $autotune" >&2; exit 2; }
[[ -x $bench_figure ]] || { echo "horovod_bench.sh: no bench_figure at $bench_figure" >&2; exit 2; }
if ! "$python" -c "import horovod.torch, torchvision" 2>/dev/null; then
  echo "horovod_bench.sh: $python cannot import horovod.torch and torchvision (build Horovod" \
    "from source as README.md says); skipped" >&2
  exit 77
fi
if [[ -n $rescore ]]; then out=$rescore; fi
[[ -n $out ]] || out=$(mktemp -d /tmp/autotune-horovod.XXXXXX)
mkdir -p "$out"
db="$out/bench.db"
log() { echo "# $*" >&2; }
cluster=("$root/tools/cluster.sh" --nodes 2 --ranks-per-node 2 --rate "$rate")

# name fusion_mb cycle_ms; the first row is Horovod's default.
settings=(
  "f128_c1 128 1" "f128_c5 128 5" "f128_c25 128 25"
  "f0_c1 0 1" "f0_c5 0 5" "f0_c25 0 25"
  "f4_c1 4 1" "f4_c5 4 5" "f4_c25 4 25"
  "f32_c1 32 1" "f32_c5 32 5" "f32_c25 32 25"
)

# Writes the config file of setting $1 ($2 MB, $3 ms) for model dir $4.
write_config() {
  printf 'params:\n  fusion_threshold_mb: %s\n  cycle_time_ms: %s\n' "$2" "$3" > "$4/$1.yaml"
}

# The job's command line for model $1 (what --launcher gets too).
job_command() {
  echo "${cluster[*]} -- $python $here/train.py --model $1 --steps $steps --warmup $warmup"
}

# Runs model $1 under config $2, timeline to $3, train.py's JSON line to $4.
run_job() {
  local rc=0
  HOROVOD_TIMELINE=$3 HOROVOD_TIMELINE_MARK_CYCLES=1 \
    "$autotune" apply --config-file "$2" -- $(job_command "$1") > "$4.raw" 2> "$4.err" || rc=$?
  if [[ $rc -eq 77 ]]; then cat "$4.err" >&2; exit 77; fi
  if [[ $rc -ne 0 ]]; then
    echo "horovod_bench.sh: the $1 job under $2 failed (exit $rc):" >&2
    tail -5 "$4.err" >&2
    exit 1
  fi
  grep '^{' "$4.raw" | tail -1 > "$4"
}

if [[ -z $rescore ]]; then
  rm -f "$db" "$db-wal" "$db-shm"
  start=$(date +%s)
  log "calibrating 2x2 at $rate into $db"
  "${cluster[@]}" -- "$autotune" calibrate --db "$db" --repetitions 10 \
    --max-bytes $((16 << 20)) > "$out/calibrate.log" 2>&1 ||
    { echo "horovod_bench.sh: calibrate failed:" >&2; tail -5 "$out/calibrate.log" >&2; exit 1; }
  for model in $models; do
    mkdir -p "$out/$model"
    for ((r = 1; r <= repeats; r++)); do
      for row in "${settings[@]}"; do
        read -r name mb ms <<<"$row"
        write_config "$name" "$mb" "$ms" "$out/$model"
        log "$model $name (fusion $mb MB, cycle $ms ms) round $r of $repeats"
        run_job "$model" "$out/$model/$name.yaml" "$out/$model/$name.r$r.tl.json" \
          "$out/$model/$name.r$r.json"
      done
    done
  done
  log "real runs took $(( $(date +%s) - start )) s"
fi

# Imports the default's first timeline of model $1 (once: a rescore reuses it); prints the
# run id.
import_default() {
  local existing
  existing=$("$python" -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(
    \"SELECT coalesce(min(id), 0) FROM runs WHERE kind = 'imported' AND workload_name = ?\",
    (sys.argv[2],)).fetchone()[0])" "$db" "$1-job")
  if [[ $existing != 0 ]]; then echo "$existing"; return; fi
  "$autotune" import --horovod-timeline "$out/$1/f128_c1.r1.tl.json" --db "$db" \
    --nodes 2 --ranks-per-node 2 --config-file "$out/$1/f128_c1.yaml" --warmup-steps "$warmup" \
    --workload "$1-job" --json |
    "$python" -c "import json,sys; print(json.load(sys.stdin)['run'])"
}

for model in $models; do
  run=$(import_default "$model")
  log "$model: default timeline imported as run $run"
  : > "$out/$model/predicted.tsv"
  for row in "${settings[@]}"; do
    read -r name mb ms <<<"$row"
    "$autotune" simulate --db "$db" --run "$run" --fusion-threshold-mb "$mb" \
      --cycle-time-ms "$ms" --json |
      "$python" -c "import json,sys; print('$name', json.load(sys.stdin)['step_ms_median'])" \
      >> "$out/$model/predicted.tsv"
  done
  "$autotune" diagnose --db "$db" --run "$run" --json > "$out/$model/diagnose.json"
  # The live search runs once per output folder (a rescore scores its runs again).
  if [[ $search -eq 1 && ! -s $out/$model/search.log ]]; then
    log "$model: search --live on the real job"
    "$autotune" search --db "$db" --run "$run" --live --launcher "$(job_command "$model")" \
      --autotune-warmup-samples "$warmup" --autotune-steps-per-sample "$steps" \
      --max-samples 4 --out "$out/$model/best.yaml" > "$out/$model/search.log" 2>&1 ||
      { echo "horovod_bench.sh: search failed:" >&2; tail -5 "$out/$model/search.log" >&2; exit 1; }
  fi
  if [[ $confirm -gt 0 && ! -d $out/$model/confirm ]]; then
    mkdir -p "$out/$model/confirm"
    other=$("$python" "$here/score.py" --model "$model" --dir "$out/$model" --db "$db" \
      --run "$run" --autotune "$autotune" --bench-figure "$bench_figure" --search "$search" \
      --print-contender)
    for ((r = 1; r <= confirm; r++)); do
      for which in default contender; do
        config=$out/$model/f128_c1.yaml
        [[ $which == contender ]] && config=$other
        log "$model confirm round $r of $confirm: $which ($config)"
        run_job "$model" "$config" "$out/$model/confirm/$which.r$r.tl.json" \
          "$out/$model/confirm/$which.r$r.json"
      done
    done
  fi
  "$python" "$here/score.py" --model "$model" --dir "$out/$model" --db "$db" --run "$run" \
    --autotune "$autotune" --bench-figure "$bench_figure" --search "$search"
done
