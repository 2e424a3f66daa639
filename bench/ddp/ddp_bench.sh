#!/usr/bin/env bash
# autotune against REAL PyTorch DDP (not our executor) on the emulated cluster.
#
# Runs the real training job bench/ddp/train.py (torchvision model, gloo, DDP wrapped with no
# bucket arguments) on 2 nodes x 2 ranks at --rate for two models, resnet18 (62 gradient
# tensors, 11.7 M parameters: few, large) and mobilenet_v2 (158 tensors, 3.5 M parameters:
# many, small), under a grid of DDP settings (bucket_cap_mb {25, 0.5, 1, 2.5, 5, 10, 50, 100},
# and 25 with gradient_as_bucket_view; the first is DDP's default), each through
# `autotune apply --config-file` (the script is never edited). Then, per model:
#   - measures gloo's allreduce against size (`autotune calibrate --backend gloo`: the cost a
#     bucket pays however small, which one default's trace cannot show) unless the database
#     has one or --no-gloo-calibrate is given (a rescore too: the calibration is made once);
#   - runs the DEFAULT setting once more with AUTOTUNE_DDP_TRACE (the one recorded trace),
#     imports it (`autotune import --ddp-trace`, with the default's production round 1 as
#     --step-log: its production step time) and predicts every setting from it (`autotune
#     simulate`);
#   - prints real vs predicted step time per setting, the MAPE and the Spearman rank
#     correlation (targets: MAPE <= 10%, goal 5%);
#   - with --search: `autotune search --live --production-runs --launcher "<this job>"` from
#     the imported run (each proposal runs untraced, then traced; the verdict compares the
#     production runs only), the number of real runs it used, and the real step time of its
#     best.yaml against the default's and the grid's best (targets: within 5% of the grid's
#     best; never slower than the default beyond noise). --search-samples N: its budget of
#     measured samples, the imported default counted (default 4).
#   - with --confirm N: the default, autotune's choice (best.yaml with --search, else the
#     setting the simulator ranks first) and the grid's best run in turn, N rounds: the
#     chosen setting's real step time against the default's (speedup, bootstrap interval)
#     and the grid best's, measured side by side in time so that drift hits all alike.
# A setting's real step time is the median over its --repeats runs of train.py's median step
# (wall clock per step, max over ranks). Each figure is one result line
# (bench/common/result.h) printed by bench_figure.
#
# Usage: ddp_bench.sh [--out DIR] [--models "resnet18 mobilenet_v2"] [--steps N] [--warmup N]
#                     [--repeats R] [--rate RATE] [--search] [--search-samples N]
#                     [--confirm N] [--no-gloo-calibrate] [--fit-rounds N] [--autotune BIN]
#                     [--bench-figure BIN] [--python PY]
#        ddp_bench.sh --rescore DIR [--models M] [--search] [--search-samples N] [--confirm N]
#                     [--no-gloo-calibrate] [--fit-rounds N] [--import-tag TAG]  # re-score DIR's runs
#   --fit-rounds N: the default's import takes its first N production rounds as --step-log
#   (default 1; the median of their medians is its production step time; imported as the
#   workload MODEL-job-fitN beside MODEL-job).
#   --import-tag TAG: import the default's trace anew as the workload MODEL-job-TAG (a rescore
#   otherwise reuses the import it finds: an autotune whose import changed needs a new one).
# Needs root (network namespaces) and the system python3 with torch and torchvision
# (Debian's python3-torch, python3-torchvision; exit 77 with one line otherwise).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
autotune="$root/build/autotune"
bench_figure="$root/build/bench/common/bench_figure"
# autotune's decision rule on the grid's runs (score.py's rule_beyond_noise figures).
decision_tool="$root/build/bench/tuner/bench_decision_controls"
python=/usr/bin/python3
out=""
models="resnet18 mobilenet_v2"
steps=10
warmup=3
repeats=1
rate=1gbit
search=0
search_samples=4
confirm=0
rescore=""
gloo_calibrate=1
fit_rounds=1
import_tag=""

while [[ $# -gt 0 ]]; do
  case $1 in
    --out) out=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --search) search=1; shift ;;
    --search-samples) search_samples=$2; shift 2 ;;
    --confirm) confirm=$2; shift 2 ;;
    --autotune) autotune=$2; shift 2 ;;
    --bench-figure) bench_figure=$2; shift 2 ;;
    --python) python=$2; shift 2 ;;
    --rescore) rescore=$2; shift 2 ;;
    --no-gloo-calibrate) gloo_calibrate=0; shift ;;
    --fit-rounds) fit_rounds=$2; shift 2 ;;
    --import-tag) import_tag=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "ddp_bench.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ $fit_rounds =~ ^[1-9][0-9]*$ ]] ||
  { echo "ddp_bench.sh: --fit-rounds takes a count of rounds (1 or more): $fit_rounds" >&2
    exit 2; }
[[ -z $import_tag || $import_tag =~ ^[A-Za-z0-9_.-]+$ ]] ||
  { echo "ddp_bench.sh: --import-tag takes letters, digits, '_', '.' and '-': $import_tag" >&2
    exit 2; }
[[ -x $autotune ]] || { echo "ddp_bench.sh: no autotune binary at $autotune" >&2; exit 2; }
[[ -x $bench_figure ]] || { echo "ddp_bench.sh: no bench_figure at $bench_figure" >&2; exit 2; }
if ! "$python" -c "import torch.distributed, torchvision" 2>/dev/null; then
  echo "ddp_bench.sh: $python cannot import torch and torchvision (apt-get install" \
    "python3-torch python3-torchvision); skipped" >&2
  exit 77
fi
if [[ -n $rescore ]]; then out=$rescore; fi
[[ -n $out ]] || out=$(mktemp -d /tmp/autotune-ddp.XXXXXX)
mkdir -p "$out"
db="$out/bench.db"
log() { echo "# $*" >&2; }
cluster=("$root/tools/cluster.sh" --nodes 2 --ranks-per-node 2 --rate "$rate")
# gloo's rendezvous on node 0's address; its sockets on the shaped link; one compute thread.
export MASTER_ADDR=10.77.0.1 MASTER_PORT=29531 GLOO_SOCKET_IFNAME=eth0 OMP_NUM_THREADS=1

# name bucket_cap_mb gradient_as_bucket_view; the first row is DDP's default.
settings=(
  "c25 25 false" "c0.5 0.5 false" "c1 1 false" "c2.5 2.5 false" "c5 5 false" "c10 10 false"
  "c50 50 false" "c100 100 false" "c25v 25 true"
)

# Writes the config file of setting $1 ($2 MB, view $3) for model dir $4.
write_config() {
  printf 'ddp:\n  bucket_cap_mb: %s\n  gradient_as_bucket_view: %s\n' "$2" "$3" > "$4/$1.yaml"
}

# The job's command line for model $1 (what --launcher gets too).
job_command() {
  echo "${cluster[*]} -- $python $here/train.py --model $1 --steps $steps --warmup $warmup"
}

# Runs model $1 under config $2, train.py's JSON line to $3; $4 (optional): trace folder.
run_job() {
  local rc=0 trace=${4:-}
  if [[ -n $trace ]]; then
    rm -rf "$trace"
    AUTOTUNE_DDP_TRACE=$trace "$autotune" apply --config-file "$2" -- $(job_command "$1") \
      > "$3.raw" 2> "$3.err" || rc=$?
  else
    "$autotune" apply --config-file "$2" -- $(job_command "$1") > "$3.raw" 2> "$3.err" || rc=$?
  fi
  if [[ $rc -eq 77 ]]; then cat "$3.err" >&2; exit 77; fi
  if [[ $rc -ne 0 ]]; then
    echo "ddp_bench.sh: the $1 job under $2 failed (exit $rc):" >&2
    tail -5 "$3.err" >&2
    exit 1
  fi
  grep '^{' "$3.raw" | tail -1 > "$3"
}

if [[ -z $rescore ]]; then
  rm -f "$db" "$db-wal" "$db-shm"
  start=$(date +%s)
  log "calibrating 2x2 at $rate into $db"
  "${cluster[@]}" -- "$autotune" calibrate --db "$db" --repetitions 5 \
    --max-bytes $((32 << 20)) --quiet > "$out/calibrate.log" 2>&1 ||
    { echo "ddp_bench.sh: calibrate failed:" >&2; tail -5 "$out/calibrate.log" >&2; exit 1; }
  for model in $models; do
    mkdir -p "$out/$model"
    for row in "${settings[@]}"; do
      read -r name mb view <<<"$row"
      write_config "$name" "$mb" "$view" "$out/$model"
    done
    log "$model: the default with AUTOTUNE_DDP_TRACE (the recorded trace)"
    run_job "$model" "$out/$model/c25.yaml" "$out/$model/traced.json" "$out/$model/trace"
    for ((r = 1; r <= repeats; r++)); do
      for row in "${settings[@]}"; do
        read -r name mb view <<<"$row"
        log "$model $name (bucket_cap_mb $mb, gradient_as_bucket_view $view) round $r of $repeats"
        run_job "$model" "$out/$model/$name.yaml" "$out/$model/$name.r$r.json"
      done
    done
  done
  log "real runs took $(( $(date +%s) - start )) s"
fi

# gloo's allreduce curve, the DDP jobs' calibrate (once per database; made before any import).
if [[ $gloo_calibrate -eq 1 ]]; then
  have=$("$python" -c "import sqlite3,sys
try:
  print(sqlite3.connect(sys.argv[1]).execute(
    \"SELECT count(*) FROM calibrations WHERE backend = 'gloo'\").fetchone()[0])
except sqlite3.OperationalError:
  print(0)" "$db")
  if [[ $have == 0 ]]; then
    log "calibrating gloo's allreduce on 2x2 at $rate into $db"
    "${cluster[@]}" -- "$autotune" calibrate --backend gloo --db "$db" --repetitions 5 \
      --max-bytes $((32 << 20)) --quiet > "$out/calibrate-gloo.log" 2>&1 ||
      { echo "ddp_bench.sh: calibrate --backend gloo failed:" >&2
        tail -5 "$out/calibrate-gloo.log" >&2; exit 1; }
  fi
fi

# The workload name of model $1's import: another --fit-rounds is another import of it.
job_name() {
  local name=$1-job
  [[ $fit_rounds -eq 1 ]] || name+=-fit$fit_rounds
  [[ -z $import_tag ]] || name+=-$import_tag
  echo "$name"
}

# Imports model $1's trace (once: a rescore reuses it); prints the run id.
import_trace() {
  local existing
  # 0 also for a database not created yet (a rescore of a folder given no bench.db).
  existing=$("$python" -c "import sqlite3,sys
try:
  print(sqlite3.connect(sys.argv[1]).execute(
    \"SELECT coalesce(min(id), 0) FROM runs WHERE kind = 'imported' AND workload_name = ?\",
    (sys.argv[2],)).fetchone()[0])
except sqlite3.OperationalError:
  print(0)" "$db" "$(job_name "$1")")
  if [[ $existing != 0 ]]; then echo "$existing"; return; fi
  # The default's production round 1 is its production step time (the live search's verdict
  # compares production runs only); with --fit-rounds N its first N rounds (the median of
  # their medians).
  local steplog=() r
  for ((r = 1; r <= fit_rounds; r++)); do
    [[ -e $out/$1/c25.r$r.json ]] && steplog+=(--step-log "$out/$1/c25.r$r.json")
  done
  # The traced run's own step log: the tracing cost like for like (a production run no faster
  # than the traced one is pooled with it: simulator/simulation.cc FitProductionModel).
  [[ -e $out/$1/traced.json ]] && steplog+=(--traced-step-log "$out/$1/traced.json")
  # No --host-cores: counting the 2 cores' sharing (CpuShare) was tried on 3 grids and is not
  # better on the one held out (README.md, "The host's cores"). nproc says 1 here anyway
  # (OMP_NUM_THREADS=1 above).
  "$autotune" import --ddp-trace "$out/$1/trace" --db "$db" --nodes 2 --ranks-per-node 2 \
    --warmup-steps "$warmup" --workload "$(job_name "$1")" "${steplog[@]}" --json |
    "$python" -c "import json,sys; print(json.load(sys.stdin)['run'])"
}

for model in $models; do
  run=$(import_trace "$model")
  log "$model: the default's trace imported as run $run"
  : > "$out/$model/predicted.tsv"
  for row in "${settings[@]}"; do
    read -r name mb view <<<"$row"
    "$autotune" simulate --db "$db" --run "$run" --config-file "$out/$model/$name.yaml" --json |
      "$python" -c "import json,sys; print('$name', json.load(sys.stdin)['step_ms_median'])" \
      >> "$out/$model/predicted.tsv"
  done
  # The live search runs once per output folder (a rescore scores its runs again).
  if [[ $search -eq 1 && ! -s $out/$model/search.log ]]; then
    log "$model: search --live on the real job"
    "$autotune" search --db "$db" --run "$run" --live --production-runs \
      --launcher "$(job_command "$model")" \
      --autotune-warmup-samples "$warmup" --autotune-steps-per-sample "$steps" \
      --max-samples "$search_samples" --out "$out/$model/best.yaml" \
      > "$out/$model/search.log" 2>&1 ||
      { echo "ddp_bench.sh: search failed:" >&2; tail -5 "$out/$model/search.log" >&2; exit 1; }
  fi
  if [[ $confirm -gt 0 && ! -d $out/$model/confirm ]]; then
    mkdir -p "$out/$model/confirm"
    read -r chosen grid_best < <("$python" "$here/score.py" --model "$model" --dir "$out/$model" \
      --db "$db" --run "$run" --autotune "$autotune" --bench-figure "$bench_figure" \
      --search "$search" --print-contenders)
    for ((r = 1; r <= confirm; r++)); do
      for which in default chosen grid_best; do
        config=$out/$model/c25.yaml
        [[ $which == chosen ]] && config=$chosen
        [[ $which == grid_best ]] && config=$grid_best
        log "$model confirm round $r of $confirm: $which ($config)"
        run_job "$model" "$config" "$out/$model/confirm/$which.r$r.json"
      done
    done
  fi
  "$python" "$here/score.py" --model "$model" --dir "$out/$model" --db "$db" --run "$run" \
    --autotune "$autotune" --bench-figure "$bench_figure" --search "$search" \
    --search-samples "$search_samples" --decision-tool "$decision_tool"
done
