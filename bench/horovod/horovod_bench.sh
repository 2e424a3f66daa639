#!/usr/bin/env bash
# autotune against REAL Horovod (not our executor) on the emulated cluster.
#
# Where `horovod.torch` is importable by the system python3 (exit 77 with one line
# otherwise; README.md says how to build Horovod from its public source by hand), runs the
# real training job bench/horovod/train.py on 2 nodes x 2 ranks at --rate for three models,
# resnet50 (compute-bound), mlp (404 small tensors, little compute) and heldout_transformer
# (a transformer encoder: two large embedding-sized tensors and many small ones; "heldout_"
# marks a model never used to fit or tune anything, only to score on; `--models
# heldout_convnet` adds a small CNN whose step is short, train.py), under a grid of 12
# settings (fusion threshold {128, 0, 4, 32} MB x cycle time {1, 5, 25} ms; the first is
# Horovod's default), each through `autotune apply --config-file`. Two kinds of real runs:
#   - PRODUCTION runs (no HOROVOD_TIMELINE: the job as it runs for real; writing the
#     timeline costs 10-20%): every setting, --repeats rounds (default 2), the settings
#     interleaved (round 1 runs all settings, then round 2 all again), so that each
#     setting's run-to-run noise is measured and drift hits all settings alike. Files
#     MODEL/SETTING.rR.json. These are what the model is scored on (round 1 of the traced
#     settings is fitted to under --untraced-fit).
#   - TRACED runs (HOROVOD_TIMELINE + HOROVOD_TIMELINE_MARK_CYCLES=1) of --traced settings
#     only (default "f128_c1 f0_c25 f4_c5"), once each before the production rounds: the
#     model's inputs (fitting): the timeline and the run's own step log (train.py's line,
#     --traced-step-log); each rank also logs its gradient-ready times (train.py --ready-log,
#     the folder MODEL/fit/SETTING.rR.ready), which the import takes as --ready-log only
#     under --ready-logs. Files MODEL/fit/SETTING.rR.{json,tl.json,ready}.
# Then, per model (the autotune side; --rescore DIR re-runs only this, with the --autotune
# binary given, on DIR's stored runs):
#   - copies the calibration database bench.db to score.db (fresh each time), imports every
#     traced timeline into it (`autotune import`, MODEL/fit_runs.tsv lists the run ids) and
#     predicts every setting from the DEFAULT's traced run (`autotune simulate --json`,
#     step_ms_median; MODEL/predicted.tsv, "refused" with the reason where it refuses);
#   - score.py prints one row per setting (production median and min-max over rounds, traced
#     median where traced, predicted) and, as result lines (bench/common/result.h), the MAPE
#     against production, Spearman over all settings and over those that differ from the
#     default beyond twice the run-to-run noise, the measured best setting's speedup against
#     its predicted speedup, and whether the settings measured slower than the default
#     beyond noise are predicted slower; `autotune diagnose`'s verdict;
#   - with --search: `autotune search --live --production-runs --launcher "<this job>"` from
#     the imported default (in bench.db, once per folder; imported with this machine's cores and
#     its production round 1 as --step-log): each proposal runs untraced, then traced, and the
#     production step times decide.
# With --extrap: the mlp default only, traced and production, on 2x1, 4x1 and 2x2 nodes x
# ranks, --repeats rounds each (interleaved); scoring imports the 2x1 traced default (with
# --untraced-fit, its first --fit-rounds production rounds as --step-log) and predicts 2x1, 4x1 and 2x2 (`simulate --nodes N --ranks-per-node M`, calibration of 2x1
# only) against the production step times (a refusal is printed as the result); then, where
# target.db holds calibrates of 4x1 and 2x2 (made with the real runs; a minute of collectives
# each, not the job), predicts them again with those in the score database, as "4x1+cal" and
# "2x2+cal" (simulate takes a calibrate of the predicted shape where one exists).
# A run's step time is train.py's median step (wall clock per step, max over ranks); a
# setting's is the median over its rounds. Each figure is one result line printed by
# bench_figure.
#
# Usage: horovod_bench.sh [--out DIR] [--models "resnet50 mlp heldout_transformer"]
#                         [--settings "f128_c1 ..."] [--traced "f128_c1 f0_c25 f4_c5"]
#                         [--steps N] [--warmup N] [--repeats R] [--rate RATE] [--search]
#                         [--confirm N] [--autotune BIN] [--bench-figure BIN] [--python PY]
#                         [--host-cores N] [--untraced-fit [--fit-rounds N]]
#                         [--ready-logs] [--fit-traced "f128_c1 ..."] [--no-calibrate]
#        horovod_bench.sh --extrap [--out DIR] [--repeats R] ...
#        horovod_bench.sh --rescore DIR [--extrap] [--search] [--confirm N] [--autotune BIN]
#                         [--fit-traced "f128_c1 ..."] [--no-calibrate]
#        horovod_bench.sh --horovod-autotune SECONDS|search --out DIR [--models M] ...
#        horovod_bench.sh --confirm-settings A,B,... [--confirm-runs N] --out DIR [--models M]
#   --settings: run only these settings of the grid (default all 12; the default f128_c1 is
#   always run); the sub-MB settings f0.3_c2 and f1_c1 run only when named here. A second
#   run into the same --out keeps bench.db's calibration and adds the models given.
#   --host-cores N: the cores of the machine the emulated cluster runs on (default: nproc),
#   given to every import with --nodes-per-host = the topology's nodes (all its namespaces
#   share this machine), so that the model counts compute slowed by communication (0: off).
#   --untraced-fit: each traced setting's production round 1 is given to the import of its
#   traced run as --step-log: the default's fits the timeline's cost, the others' the
#   communication thread's spin share (those rounds are then fit data too; score.py also
#   scores the settings none of whose production runs were fitted, "held out").
#   --ready-logs: import the traced runs with their ready logs (every rank's own gradient-ready
#   times; without it, as a user who has only the timeline has them: as its cycles bound them).
#   --fit-rounds N: with --untraced-fit, its first N production rounds instead (default 1;
#   several --step-log: the import takes the median of their medians, so one round that came
#   out slow as a whole does not set the production level; the held-out settings stay held
#   out).
#   --fit-traced "S1 S2 ...": import only these traced settings as fit inputs (the default
#   f128_c1 among them; default: every traced one), as a user who traced the job at those
#   settings: "f128_c1" scores what one timeline predicts (a rescore takes it too).
#   --no-calibrate: score without the calibrates (the score database gets none), as a user who
#   has the job's timelines and cannot run `autotune calibrate` on its cluster: the job's own
#   collectives are the network model (self-calibration).
#   --confirm N: after the search, runs the default and best.yaml (or, when best.yaml keeps
#   the defaults, the grid's best) alternately N times each (traced, as the search's runs),
#   and prints the speedup with a bootstrap interval over those runs.
#
# Head to head with Horovod's own autotune (production runs, no timeline; per model of
# --models, into --out, then exit):
#   --horovod-autotune SECONDS: runs the job once with HOROVOD_AUTOTUNE=1 and
#   HOROVOD_AUTOTUNE_LOG=MODEL/horovod_autotune/autotune_log.csv for SECONDS of timed steps
#   (train.py --seconds; no knob in the environment, so Horovod tunes them all; "search": the
#   wall-clock seconds --search's live search took, MODEL/search_seconds), and writes
#   the setting its log ends on (its best row when its tuning ended, else its best-scored
#   row; horovod_autotune_setting.py) as MODEL/horovod_autotune/horovod.yaml and .env.
#   --confirm-settings A,B,...: alternates the default f128_c1 and each setting --confirm-runs
#   times (default 3; round r runs the default, A, B, ...), production runs into
#   MODEL/confirm_settings/, and prints per setting its median step time (median of run
#   medians), its speedup over the default paired for drift with a 95% t interval, and the
#   verdict of autotune's own decision rule on the same runs
#   (bench/common/confirm_settings.py). A setting is a grid name (f0_c25), "horovod"
#   (MODEL/horovod_autotune/horovod.yaml), "autotune" (MODEL/best.yaml of --search) or a
#   config file (its name without .yaml labels it).
# Needs root (network namespaces), the system python3 with torch, torchvision and horovod.
# Run it under the machine's timing lock when other measurements may run at the same time.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
autotune="$root/build/autotune"
bench_figure="$root/build/bench/common/bench_figure"
# autotune's decision rule on the grid's runs (score.py's rule_beyond_noise figures).
decision_tool="$root/build/bench/tuner/bench_decision_controls"
python=/usr/bin/python3
out=""
models="resnet50 mlp heldout_transformer"
only_settings=""
traced="f128_c1 f0_c25 f4_c5"
steps=8
warmup=2
repeats=2
rate=1gbit
search=0
confirm=0
extrap=0
rescore=""
host_cores=$(nproc)
untraced_fit=0
fit_rounds=1
hvd_autotune=""
confirm_settings=""
confirm_runs=3
ready_logs=0
fit_traced=""
no_calibrate=0

while [[ $# -gt 0 ]]; do
  case $1 in
    --out) out=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    --settings) only_settings=$2; shift 2 ;;
    --traced) traced=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --search) search=1; shift ;;
    --confirm) confirm=$2; shift 2 ;;
    --extrap) extrap=1; shift ;;
    --autotune) autotune=$2; shift 2 ;;
    --bench-figure) bench_figure=$2; shift 2 ;;
    --python) python=$2; shift 2 ;;
    --rescore) rescore=$2; shift 2 ;;
    --host-cores) host_cores=$2; shift 2 ;;
    --untraced-fit) untraced_fit=1; shift ;;
    --fit-rounds) fit_rounds=$2; shift 2 ;;
    --horovod-autotune) hvd_autotune=$2; shift 2 ;;
    --confirm-settings) confirm_settings=$2; shift 2 ;;
    --confirm-runs) confirm_runs=$2; shift 2 ;;
    --ready-logs) ready_logs=1; shift ;;
    --fit-traced) fit_traced=$2; shift 2 ;;
    --no-calibrate) no_calibrate=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "horovod_bench.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ $fit_rounds =~ ^[1-9][0-9]*$ ]] ||
  { echo "horovod_bench.sh: --fit-rounds takes a count of rounds (1 or more): $fit_rounds" >&2
    exit 2; }
[[ -x $autotune ]] || { echo "horovod_bench.sh: no autotune binary at $autotune" >&2; exit 2; }
[[ -x $bench_figure ]] || { echo "horovod_bench.sh: no bench_figure at $bench_figure" >&2; exit 2; }
if ! "$python" -c "import horovod.torch, torchvision" 2>/dev/null; then
  echo "horovod_bench.sh: $python cannot import horovod.torch and torchvision (build Horovod" \
    "from source as README.md says); skipped" >&2
  exit 77
fi
if [[ -n $rescore ]]; then
  out=$rescore
  # The measurement's --steps, --warmup and --rate (the import leaves its warm-up out).
  if [[ -f $out/bench.conf ]]; then source "$out/bench.conf"; fi
fi
[[ -n $out ]] || out=$(mktemp -d /tmp/autotune-horovod.XXXXXX)
mkdir -p "$out"
[[ -n $rescore ]] || printf 'steps=%s\nwarmup=%s\nrate=%s\n' "$steps" "$warmup" "$rate" \
  > "$out/bench.conf"
db="$out/bench.db"      # the calibration (and the live search's runs); never rescored
calibrate_reps=10       # calibrate's --repetitions (30 with an eager-limit setting)
sdb="$out/score.db"     # bench.db + this scoring's imports; made afresh by every scoring
log() { echo "# $(date -u +%T) $*" >&2; }

# name fusion_mb cycle_ms; the first row is Horovod's default.
settings=(
  "f128_c1 128 1" "f128_c5 128 5" "f128_c25 128 25"
  "f0_c1 0 1" "f0_c5 0 5" "f0_c25 0 25"
  "f4_c1 4 1" "f4_c5 4 5" "f4_c25 4 25"
  "f32_c1 32 1" "f32_c5 32 5" "f32_c25 32 25"
)
# Sub-MB buffers, where a live search's picks often land (one or three MLP layers a buffer),
# and settings with Open MPI's TCP eager limit at 512 KiB (a fourth field: what a search
# writes with the MLP's small buffers, tuner::WithCompanionKnobs; bench/horovod/README.md):
# run only when --settings names them, so the default grid stays the 12 above. Every eager
# limit named is calibrated too (`calibrate --mpi-tcp-eager-limit`, into bench.db, every
# calibrate then at 30 repetitions a size), so that the model predicts what the limit does
# (simulator/eager_limit.h).
extra_settings=("f0.3_c2 0.3 2" "f1_c1 1 1" "f128_c1_e512k 128 1 524288"
                "f0.3_c2_e512k 0.3 2 524288" "f0_c25_e512k 0 25 524288")
# The knobs of setting $1 ("fusion_mb cycle_ms [eager_limit]").
knobs_of() {
  local row
  for row in "${settings[@]}" "${extra_settings[@]}"; do
    [[ ${row%% *} == "$1" ]] && { echo "${row#* }"; return; }
  done
  echo "horovod_bench.sh: unknown setting $1" >&2; exit 2
}

# Writes the config file of setting $1 into folder $2.
write_config() {
  local mb ms eager
  read -r mb ms eager <<<"$(knobs_of "$1")"
  printf 'params:\n  fusion_threshold_mb: %s\n  cycle_time_ms: %s\n' "$mb" "$ms" > "$2/$1.yaml"
  [[ -z $eager ]] ||
    printf 'autotune_extra:\n  mpi:\n    tcp_eager_limit: %s\n' "$eager" >> "$2/$1.yaml"
}

# The job's command line for model $1 on $2 nodes x $3 ranks (what --launcher gets too); $4,
# when given, replaces "--steps N" (e.g. "--seconds 60").
job_command() {
  echo "$root/tools/cluster.sh --nodes ${2:-2} --ranks-per-node ${3:-2} --rate $rate --" \
    "$python $here/train.py --model $1 ${4:---steps $steps} --warmup $warmup"
}

# Runs `job_command $1 $5 $6` under config $2; traced (timeline to $3.tl.json) unless $4 is
# "production"; train.py's JSON line to $3.json.
run_job() {
  local rc=0 env=() ready=()
  if [[ $4 != production ]]; then
    env=(HOROVOD_TIMELINE="$3.tl.json" HOROVOD_TIMELINE_MARK_CYCLES=1)
    rm -rf "$3.ready"
    ready=(--ready-log "$3.ready")
  fi
  env "${env[@]}" "$autotune" apply --config-file "$2" -- $(job_command "$1" "${5:-}" "${6:-}") \
    "${ready[@]}" > "$3.raw" 2> "$3.err" || rc=$?
  if [[ $rc -eq 77 ]]; then cat "$3.err" >&2; exit 77; fi
  if [[ $rc -ne 0 ]]; then
    echo "horovod_bench.sh: the $1 job under $2 ($4) failed (exit $rc):" >&2
    tail -5 "$3.err" >&2
    exit 1
  fi
  grep '^{' "$3.raw" | tail -1 > "$3.json"
}

# Calibrates $1 nodes x $2 ranks into bench.db (at Open MPI's TCP eager limit $3 when given
# and not 0) unless it holds a calibration of that topology and limit already (a second
# invocation into the same --out adds models). The first calibrate starts bench.db afresh.
calibrate() {
  local have=0 any=0 eager=${3:-0} flag=() suffix=""
  if [[ -s $db ]]; then
    read -r any have < <("$python" -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1])
t=c.execute(\"SELECT count(*) FROM sqlite_master WHERE name = 'calibrations'\").fetchone()[0]
cols=[r[1] for r in c.execute('PRAGMA table_info(calibrations)')] if t else []
q='SELECT count(*) FROM calibrations WHERE nodes = ? AND ranks_per_node = ?'
a=t and c.execute(q, (int(sys.argv[2]), int(sys.argv[3]))).fetchone()[0]
e=int(sys.argv[4])
h=a if 'tcp_eager_limit' not in cols else t and c.execute(
    q + ' AND tcp_eager_limit = ?', (int(sys.argv[2]), int(sys.argv[3]), e)).fetchone()[0]
print(a, 0 if e and 'tcp_eager_limit' not in cols else h)" "$db" "$1" "$2" "$eager")
  fi
  if [[ $eager != 0 ]]; then
    flag=(--mpi-tcp-eager-limit "$eager")
    suffix=" (eager limit $eager)"
  fi
  if [[ $have != 0 ]]; then
    log "bench.db holds a calibration of $1x$2$suffix already: kept"
    return
  fi
  [[ $any != 0 ]] || rm -f "$db" "$db-wal" "$db-shm"
  log "calibrating $1x$2$suffix at $rate into $db"
  "$root/tools/cluster.sh" --nodes "$1" --ranks-per-node "$2" --rate "$rate" -- \
    "$autotune" calibrate --db "$db" --repetitions "$calibrate_reps" --max-bytes $((16 << 20)) \
    "${flag[@]}" \
    > "$out/calibrate${eager/#0/}.log" 2>&1 ||
    { echo "horovod_bench.sh: calibrate failed:" >&2; tail -5 "$out/calibrate${eager/#0/}.log" >&2
      exit 1; }
}

# Copies bench.db to score.db (a consistent copy, WAL included).
fresh_score_db() {
  rm -f "$sdb" "$sdb-wal" "$sdb-shm"
  "$python" -c "import sqlite3,sys; s=sqlite3.connect(sys.argv[1]); d=sqlite3.connect(sys.argv[2])
s.backup(d)
if sys.argv[3] == '1':
    d.execute('DELETE FROM calibration_points'); d.execute('DELETE FROM calibrations'); d.commit()
d.close()" "$db" "$sdb" "$no_calibrate"
}

# Imports timeline $1 (setting config $2, $3 nodes x $4 ranks, workload $5, the untraced
# step logs $6... if given, one per production run) into score.db, with the traced run's own
# step log (train.py's line of the same run, X.r1.json beside X.r1.tl.json) as
# --traced-step-log where it exists; prints the run id.
import_timeline() {
  local host=()
  [[ $host_cores -gt 0 ]] && host=(--host-cores "$host_cores" --nodes-per-host "$3")
  local log
  for log in "${@:6}"; do [[ -n $log ]] && host+=(--step-log "$log"); done
  [[ -e ${1%.tl.json}.json ]] && host+=(--traced-step-log "${1%.tl.json}.json")
  [[ $ready_logs -eq 1 && -d ${1%.tl.json}.ready ]] && host+=(--ready-log "${1%.tl.json}.ready")
  "$autotune" import --horovod-timeline "$1" --db "$sdb" --nodes "$3" --ranks-per-node "$4" \
    --config-file "$2" --warmup-steps "$warmup" --workload "$5" "${host[@]}" --json |
    "$python" -c "import json,sys; print(json.load(sys.stdin)['run'])"
}

# Appends "NAME STEP_MS" (or "NAME refused: REASON") to file $1 for `simulate --run $2` with
# the remaining arguments, and "NAME RUN" (the simulated run it stored) to $1.runs.
predict() {
  local file=$1 name=$2 run=$3 json rc=0
  shift 3
  json=$("$autotune" simulate --db "$sdb" --run "$run" "$@" --json 2> "$file.err") || rc=$?
  if [[ $rc -eq 0 ]]; then
    local step_ms sim_run
    read -r step_ms sim_run < <("$python" -c \
      "import json,sys; d=json.loads(sys.argv[1]); print(d['step_ms_median'], d['run'])" "$json")
    echo "$name $step_ms" >> "$file"
    echo "$name $sim_run" >> "$file.runs"
  else
    echo "$name refused: $(grep -v '^\s*$' "$file.err" | tail -1)" >> "$file"
  fi
}

if [[ -n $hvd_autotune ]]; then
  [[ $hvd_autotune == search || $hvd_autotune =~ ^[0-9]+([.][0-9]+)?$ ]] ||
    { echo "horovod_bench.sh: --horovod-autotune takes seconds or 'search', not $hvd_autotune" >&2
      exit 2; }
  for model in $models; do
    budget=$hvd_autotune
    if [[ $budget == search ]]; then
      [[ -s $out/$model/search_seconds ]] ||
        { echo "horovod_bench.sh: no $out/$model/search_seconds (run --search first)" >&2; exit 2; }
      budget=$(cat "$out/$model/search_seconds")
    fi
    d=$out/$model/horovod_autotune
    mkdir -p "$d"
    rm -f "$d/autotune_log.csv"
    log "$model: Horovod's autotune (HOROVOD_AUTOTUNE=1), production, $budget s of steps"
    start=$(date +%s)
    rc=0
    # No knob in the environment: Horovod holds a knob given there fixed and tunes the rest.
    env -u HOROVOD_FUSION_THRESHOLD -u HOROVOD_CYCLE_TIME -u HOROVOD_CACHE_CAPACITY \
      -u HOROVOD_HIERARCHICAL_ALLREDUCE -u HOROVOD_HIERARCHICAL_ALLGATHER -u HOROVOD_TIMELINE \
      HOROVOD_AUTOTUNE=1 HOROVOD_AUTOTUNE_LOG="$d/autotune_log.csv" \
      $(job_command "$model" "" "" "--seconds $budget") > "$d/run.raw" 2> "$d/run.err" ||
      rc=$?
    if [[ $rc -ne 0 ]]; then
      echo "horovod_bench.sh: the $model job under HOROVOD_AUTOTUNE failed (exit $rc):" >&2
      tail -5 "$d/run.err" >&2
      exit 1
    fi
    grep '^{' "$d/run.raw" | tail -1 > "$d/run.json"
    log "$model: Horovod's autotune ran $(( $(date +%s) - start )) s (wall clock, launch included)"
    "$python" "$here/horovod_autotune_setting.py" "$d/autotune_log.csv" "$d/horovod.yaml"
    "$autotune" apply --config-file "$d/horovod.yaml" --print-env > "$d/horovod.env"
  done
  exit 0
fi

if [[ -n $confirm_settings ]]; then
  [[ $confirm_runs =~ ^[1-9][0-9]*$ ]] ||
    { echo "horovod_bench.sh: --confirm-runs takes a count, not $confirm_runs" >&2; exit 2; }
  IFS=, read -r -a wanted <<<"$confirm_settings"
  for model in $models; do
    d=$out/$model/confirm_settings
    mkdir -p "$d"
    write_config f128_c1 "$d"
    labels=()
    for want in "${wanted[@]}"; do
      case $want in
        horovod) config=$out/$model/horovod_autotune/horovod.yaml; label=horovod ;;
        autotune) config=$out/$model/best.yaml; label=autotune ;;
        *.yaml) config=$want; label=$(basename "$want" .yaml) ;;
        *)
          found=0
          for row in "${settings[@]}" "${extra_settings[@]}"; do
            [[ ${row%% *} == "$want" ]] && found=1
          done
          [[ $found -eq 1 ]] ||
            { echo "horovod_bench.sh: --confirm-settings: unknown setting $want" >&2; exit 2; }
          write_config "$want" "$d"
          config=$d/$want.yaml
          label=$want ;;
      esac
      label=${label//[^A-Za-z0-9_]/_}
      [[ -f $config ]] ||
        { echo "horovod_bench.sh: --confirm-settings $want: no config file $config" >&2; exit 2; }
      [[ $config == "$d/$label.yaml" ]] || cp "$config" "$d/$label.yaml"
      labels+=("$label")
    done
    for ((r = 1; r <= confirm_runs; r++)); do
      for label in f128_c1 "${labels[@]}"; do
        log "$model confirm-settings round $r of $confirm_runs: $label, production"
        run_job "$model" "$d/$label.yaml" "$d/$label.r$r" production
      done
    done
    "$python" "$root/bench/common/confirm_settings.py" --dir "$d" --default f128_c1 \
      --settings "${labels[*]}" --prefix "horovod.$model" --bench-figure "$bench_figure" \
      --decision-tool "$decision_tool"
  done
  exit 0
fi

if [[ $extrap -eq 1 ]]; then
  topologies=("2 1" "4 1" "2 2")
  if [[ -z $rescore ]]; then
    start=$(date +%s)
    calibrate 2 1
    for t in "${topologies[@]}"; do
      read -r n m <<<"$t"
      mkdir -p "$out/${n}x$m/fit"
      write_config f128_c1 "$out/${n}x$m"
    done
    for ((r = 1; r <= repeats; r++)); do
      for kind in production traced; do
        for t in "${topologies[@]}"; do
          read -r n m <<<"$t"
          d=$out/${n}x$m
          log "extrap mlp f128_c1 on ${n}x$m, $kind, round $r of $repeats"
          if [[ $kind == production ]]; then
            run_job mlp "$d/f128_c1.yaml" "$d/f128_c1.r$r" production "$n" "$m"
          else
            run_job mlp "$d/f128_c1.yaml" "$d/fit/f128_c1.r$r" traced "$n" "$m"
          fi
        done
      done
    done
    log "real runs took $(( $(date +%s) - start )) s"
    # The predicted shapes' own calibrates, into target.db (bench.db keeps 2x1's only).
    rm -f "$out/target.db" "$out/target.db-wal" "$out/target.db-shm"
    for t in "4 1" "2 2"; do
      read -r n m <<<"$t"
      log "calibrating ${n}x$m at $rate into $out/target.db"
      "$root/tools/cluster.sh" --nodes "$n" --ranks-per-node "$m" --rate "$rate" -- \
        "$autotune" calibrate --db "$out/target.db" --repetitions 10 --max-bytes $((16 << 20)) \
        > "$out/calibrate.${n}x$m.log" 2>&1 ||
        { echo "horovod_bench.sh: calibrate of ${n}x$m failed:" >&2
          tail -5 "$out/calibrate.${n}x$m.log" >&2; exit 1; }
    done
  fi
  fresh_score_db
  steplogs=()
  if [[ $untraced_fit -eq 1 ]]; then
    for ((r = 1; r <= fit_rounds; r++)); do
      [[ -e $out/2x1/f128_c1.r$r.json ]] && steplogs+=("$out/2x1/f128_c1.r$r.json")
    done
  fi
  run=$(import_timeline "$out/2x1/fit/f128_c1.r1.tl.json" "$out/2x1/f128_c1.yaml" 2 1 mlp-job \
    "${steplogs[@]}")
  log "2x1 traced default imported as run $run"
  : > "$out/predicted.tsv"
  : > "$out/predicted.tsv.runs"
  : > "$out/comm.tsv"
  for t in "${topologies[@]}"; do
    read -r n m <<<"$t"
    predict "$out/predicted.tsv" "${n}x$m" "$run" --nodes "$n" --ranks-per-node "$m"
    # The communication part of the step (diagnose's median step: exposed and total): of the
    # predicted run, and of the real traced run of that topology (imported under a workload
    # name of its own, so that nothing it holds is fitted into the 2x1 model).
    sim_run=$(awk -v t="${n}x$m" '$1 == t {print $2}' "$out/predicted.tsv.runs")
    [[ -n $sim_run && -e $out/${n}x$m/fit/f128_c1.r1.tl.json ]] || continue
    real_run=$(import_timeline "$out/${n}x$m/fit/f128_c1.r1.tl.json" "$out/${n}x$m/f128_c1.yaml" \
      "$n" "$m" "mlp-real-${n}x$m")
    comm=()
    for id in "$sim_run" "$real_run"; do
      comm+=($("$autotune" diagnose --db "$sdb" --run "$id" --json | "$python" -c \
        "import json,sys; d=json.load(sys.stdin); print(d['exposed_comm_ms'], d['total_comm_ms'])"))
    done
    # Four figures or none: a diagnose that failed leaves this topology's line out.
    if [[ ${#comm[@]} -eq 4 ]]; then echo "${n}x$m ${comm[*]}" >> "$out/comm.tsv"; fi
  done
  # Again with the predicted shapes' own calibrates in the score database.
  if [[ -s $out/target.db ]]; then
    # Both databases were made by the same autotune, so their tables have the same columns.
    "$python" -c "import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute('ATTACH ? AS t', (sys.argv[2],))
ids = {}
for row in c.execute('SELECT * FROM t.calibrations').fetchall():
    cur = c.execute('INSERT INTO calibrations VALUES (NULL' + ', ?' * (len(row) - 1) + ')', row[1:])
    ids[row[0]] = cur.lastrowid
for row in c.execute('SELECT * FROM t.calibration_points').fetchall():
    c.execute('INSERT INTO calibration_points VALUES (' + ', '.join('?' * len(row)) + ')',
              (ids[row[0]],) + row[1:])
c.commit()" "$sdb" "$out/target.db"
    for t in "4 1" "2 2"; do
      read -r n m <<<"$t"
      predict "$out/predicted.tsv" "${n}x$m+cal" "$run" --nodes "$n" --ranks-per-node "$m"
      sim_run=$(awk -v t="${n}x$m+cal" '$1 == t {print $2}' "$out/predicted.tsv.runs")
      real=$(awk -v t="${n}x$m" '$1 == t {print $4, $5}' "$out/comm.tsv")
      [[ -n $sim_run && -n $real ]] || continue
      comm=($("$autotune" diagnose --db "$sdb" --run "$sim_run" --json | "$python" -c \
        "import json,sys; d=json.load(sys.stdin); print(d['exposed_comm_ms'], d['total_comm_ms'])"))
      if [[ ${#comm[@]} -eq 2 ]]; then echo "${n}x$m+cal ${comm[*]} $real" >> "$out/comm.tsv"; fi
    done
  fi
  "$python" "$here/score.py" --extrap --model mlp --dir "$out" --db "$sdb" --run "$run" \
    --autotune "$autotune" --bench-figure "$bench_figure"
  exit 0
fi

# The settings this invocation runs.
grid=()
for row in "${settings[@]}"; do
  name=${row%% *}
  if [[ -z $only_settings || $name == f128_c1 || " $only_settings " == *" $name "* ]]; then
    grid+=("$name")
  fi
done
for row in "${extra_settings[@]}"; do
  name=${row%% *}
  [[ " $only_settings " == *" $name "* ]] && grid+=("$name")
done

if [[ -z $rescore ]]; then
  start=$(date +%s)
  # With an eager limit among the settings, 30 repetitions a size: the model takes the limit's
  # effect from the calibrates' means (the rendezvous is a tail), which 10 leave noisy.
  for name in "${grid[@]}"; do
    read -r _ _ eager <<<"$(knobs_of "$name")"
    [[ -z $eager ]] || calibrate_reps=30
  done
  calibrate 2 2
  # Each eager limit the settings name, calibrated at it too.
  for name in "${grid[@]}"; do
    read -r _ _ eager <<<"$(knobs_of "$name")"
    [[ -z $eager ]] || calibrate 2 2 "$eager"
  done
  for model in $models; do
    mkdir -p "$out/$model/fit"
    for name in "${grid[@]}"; do write_config "$name" "$out/$model"; done
    for name in $traced; do
      log "$model $name ($(knobs_of "$name") MB ms), traced"
      run_job "$model" "$out/$model/$name.yaml" "$out/$model/fit/$name.r1" traced
    done
    for ((r = 1; r <= repeats; r++)); do
      for name in "${grid[@]}"; do
        log "$model $name ($(knobs_of "$name") MB ms), production round $r of $repeats"
        run_job "$model" "$out/$model/$name.yaml" "$out/$model/$name.r$r" production
      done
    done
  done
  log "real runs took $(( $(date +%s) - start )) s"
fi

# The live search's import of the default (in bench.db, once: a rescore reuses it).
search_import() {
  local existing
  existing=$("$python" -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(
    \"SELECT coalesce(min(id), 0) FROM runs WHERE kind = 'imported' AND workload_name = ?\",
    (sys.argv[2],)).fetchone()[0])" "$db" "$1-job")
  if [[ $existing != 0 ]]; then echo "$existing"; return; fi
  # On this machine's cores as the scored imports are (the live search's own imports take the
  # host from this run).
  local host=()
  [[ $host_cores -gt 0 ]] && host=(--host-cores "$host_cores" --nodes-per-host 2)
  # The default's production round 1 is its production step time: the search's verdict compares
  # production runs only (--production-runs).
  [[ -e $out/$1/f128_c1.r1.json ]] && host+=(--step-log "$out/$1/f128_c1.r1.json")
  [[ -e $out/$1/fit/f128_c1.r1.json ]] && host+=(--traced-step-log "$out/$1/fit/f128_c1.r1.json")
  "$autotune" import --horovod-timeline "$out/$1/fit/f128_c1.r1.tl.json" --db "$db" \
    --nodes 2 --ranks-per-node 2 --config-file "$out/$1/f128_c1.yaml" --warmup-steps "$warmup" \
    --workload "$1-job" "${host[@]}" --json |
    "$python" -c "import json,sys; print(json.load(sys.stdin)['run'])"
}

fresh_score_db
for model in $models; do
  [[ -d $out/$model ]] || continue
  : > "$out/$model/fit_runs.tsv"
  run=""
  production_fit=""  # the settings whose production rounds the imports took
  for tl in "$out/$model"/fit/*.r1.tl.json; do
    name=$(basename "$tl" .r1.tl.json)
    [[ -z $fit_traced || " $fit_traced " == *" $name "* ]] || continue
    steplogs=()
    if [[ $untraced_fit -eq 1 && -e $out/$model/$name.r1.json ]]; then
      for ((r = 1; r <= fit_rounds; r++)); do
        [[ -e $out/$model/$name.r$r.json ]] && steplogs+=("$out/$model/$name.r$r.json")
      done
      production_fit+="$name "
    fi
    id=$(import_timeline "$tl" "$out/$model/$name.yaml" 2 2 "$model-job" "${steplogs[@]}")
    echo "$name $id" >> "$out/$model/fit_runs.tsv"
    [[ $name == f128_c1 ]] && run=$id
  done
  [[ -n $run ]] || { echo "horovod_bench.sh: no traced default for $model" >&2; exit 1; }
  log "$model: traced default imported as run $run (fit inputs, setting run:" \
    "$(tr '\n' ' ' < "$out/$model/fit_runs.tsv"))"
  : > "$out/$model/predicted.tsv"
  for row in "${settings[@]}" "${extra_settings[@]}"; do
    read -r name mb ms eager <<<"$row"
    [[ -e $out/$model/$name.r1.json ]] || continue
    predict "$out/$model/predicted.tsv" "$name" "$run" --fusion-threshold-mb "$mb" \
      --cycle-time-ms "$ms" --mpi-tcp-eager-limit "${eager:-0}"
  done
  "$autotune" diagnose --db "$sdb" --run "$run" --json > "$out/$model/diagnose.json"
  search_run=""
  # The live search runs once per output folder (a rescore scores its runs again).
  if [[ $search -eq 1 ]]; then
    search_run=$(search_import "$model")
    if [[ ! -s $out/$model/search.log ]]; then
      log "$model: search --live on the real job"
      search_start=$(date +%s)
      "$autotune" search --db "$db" --run "$search_run" --live --production-runs \
        --launcher "$(job_command "$model")" \
        --autotune-warmup-samples "$warmup" --autotune-steps-per-sample "$steps" \
        --max-samples 4 --out "$out/$model/best.yaml" > "$out/$model/search.log" 2>&1 ||
        { echo "horovod_bench.sh: search failed:" >&2; tail -5 "$out/$model/search.log" >&2; exit 1; }
      # The budget to give --horovod-autotune for an equal wall-clock budget.
      echo "$(( $(date +%s) - search_start ))" > "$out/$model/search_seconds"
      log "$model: search --live took $(cat "$out/$model/search_seconds") s (wall clock)"
    fi
  fi
  score=("$python" "$here/score.py" --model "$model" --dir "$out/$model" --db "$sdb" --run "$run"
    --autotune "$autotune" --bench-figure "$bench_figure" --search "$search"
    --decision-tool "$decision_tool" --grid "${settings[*]%% *}")
  [[ -n $production_fit ]] && score+=(--production-fit "$production_fit"
    --fit-rounds "$fit_rounds")
  [[ -n $search_run ]] && score+=(--search-db "$db" --search-run "$search_run")
  if [[ $confirm -gt 0 && ! -d $out/$model/confirm ]]; then
    mkdir -p "$out/$model/confirm"
    other=$("${score[@]}" --print-contender)
    for ((r = 1; r <= confirm; r++)); do
      for which in default contender; do
        config=$out/$model/f128_c1.yaml
        [[ $which == contender ]] && config=$other
        log "$model confirm round $r of $confirm: $which ($config)"
        run_job "$model" "$config" "$out/$model/confirm/$which.r$r" traced
      done
    done
  fi
  "${score[@]}"
done
