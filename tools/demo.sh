#!/usr/bin/env bash
# The main job on the embedded default: a local 4-rank `record` of resnet50 into
# ./autotune.db under two knob settings (no fusion vs 64 MB fusion), then `compare`.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
db=${AUTOTUNE_DB:-autotune.db}
common=(--np 4 --workload resnet50 --scale 0.25 --steps 30 --warmup-steps 3 --db "$db" --json)
run_id() { sed -n 's/.*"run":\([0-9]*\).*/\1/p' | tail -n 1; }
a=$(build/autotune record "${common[@]}" --fusion-threshold-mb 0 | run_id)
b=$(build/autotune record "${common[@]}" --fusion-threshold-mb 64 | run_id)
build/autotune runs --db "$db"
build/autotune compare --db "$db" "$a" "$b"
build/autotune report --db "$db" --compare "$a" "$b" --out report.html
echo "demo: open $(pwd)/report.html"
