#!/usr/bin/env bash
# Fuzzes the parsers of outside input with libFuzzer under ASan and UBSan (fuzz/CMakeLists.txt
# lists the targets).
#   tools/fuzz.sh [TARGET|all] [RUNS]   run each target RUNS executions (default 1000000, or
#                                       FUZZ_MAX_TIME_S seconds, default 600, whichever first)
#                                       over its committed corpus fuzz/corpus/TARGET
#   tools/fuzz.sh --merge [TARGET|all]  minimise the committed corpus plus what fuzzing found
#                                       (build-fuzz/found/TARGET) back into fuzz/corpus/TARGET
#   tools/fuzz.sh --seeds               rewrite the seed inputs (builtin workloads, example
#                                       configs, a tuner CSV, a small database, timelines) into
#                                       build-fuzz/seeds/TARGET; --merge then takes them in
# Builds in build-fuzz with clang (-DAUTOTUNE_FUZZ=ON). New inputs land in
# build-fuzz/found/TARGET, crashes in build-fuzz/artifacts/TARGET/. Limits: FUZZ_RSS_MB
# (default 2048) per process, FUZZ_TIMEOUT_S (default 10) per input. Runs under nice -n 10.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=$ROOT/build-fuzz
ALL_TARGETS=(workload_json config_yaml tuner_csv horovod_timeline store_db)
RSS_MB=${FUZZ_RSS_MB:-2048}
TIMEOUT_S=${FUZZ_TIMEOUT_S:-10}
MAX_TIME_S=${FUZZ_MAX_TIME_S:-600}

targets_of() {
  if [[ -z "${1:-}" || "$1" == all ]]; then echo "${ALL_TARGETS[@]}"; return; fi
  for t in "${ALL_TARGETS[@]}"; do [[ "$t" == "$1" ]] && { echo "$t"; return; }; done
  echo "fuzz.sh: unknown target '$1' (known: ${ALL_TARGETS[*]})" >&2
  exit 2
}

configure() {
  command -v clang++ >/dev/null || { echo "fuzz.sh: clang++ not found (apt install clang)" >&2; exit 1; }
  if [[ ! -f $BUILD/CMakeCache.txt ]]; then
    local launcher=()
    command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
      -DCMAKE_CXX_COMPILER=clang++ -DAUTOTUNE_FUZZ=ON -DAUTOTUNE_SANITIZE=address,undefined \
      -DAUTOTUNE_WITH_NCCL=OFF "${launcher[@]}" >/dev/null
  fi
}

build() {  # build TARGET...
  configure
  local names=()
  for t in "$@"; do names+=("fuzz_$t"); done
  nice -n 10 cmake --build "$BUILD" -j2 --target "${names[@]}" >/dev/null
}

fuzz_one() {  # fuzz_one TARGET RUNS
  local t=$1 runs=$2
  mkdir -p "$BUILD/found/$t" "$BUILD/artifacts/$t"
  echo "== $t: $runs runs (at most ${MAX_TIME_S} s)"
  nice -n 10 "$BUILD/fuzz/fuzz_$t" -runs="$runs" -max_total_time="$MAX_TIME_S" \
    -rss_limit_mb="$RSS_MB" -malloc_limit_mb="$RSS_MB" -timeout="$TIMEOUT_S" -print_final_stats=1 \
    -artifact_prefix="$BUILD/artifacts/$t/" "$BUILD/found/$t" "$ROOT/fuzz/corpus/$t"
}

merge_one() {  # merge_one TARGET: minimise corpus + found + seeds into fuzz/corpus/TARGET
  local t=$1 fresh=$BUILD/merged/$t
  rm -rf "$fresh" && mkdir -p "$fresh" "$ROOT/fuzz/corpus/$t"
  local inputs=("$ROOT/fuzz/corpus/$t")
  for d in "$BUILD/found/$t" "$BUILD/seeds/$t"; do [[ -d $d ]] && inputs+=("$d"); done
  # Edges only (no hit counts): a corpus of a few hundred files that keeps the coverage.
  nice -n 10 "$BUILD/fuzz/fuzz_$t" -merge=1 -use_counters=0 -rss_limit_mb="$RSS_MB" \
    -timeout="$TIMEOUT_S" \
    "$fresh" "${inputs[@]}" 2>&1 | grep -E "MERGE-OUTER: [0-9]+ new files" || true
  # Inputs that once crashed stay under their names: they are the regression tests.
  find "$ROOT/fuzz/corpus/$t" -name 'crash-*' -exec cp {} "$fresh/" \;
  for f in "$fresh"/crash-*; do [[ -e $f ]] && rm -f "$fresh/$(sha1sum <"$f" | cut -c1-40)"; done
  rm -rf "$ROOT/fuzz/corpus/$t" && mv "$fresh" "$ROOT/fuzz/corpus/$t"
  echo "$t: $(ls "$ROOT/fuzz/corpus/$t" | wc -l) files, $(du -sh --apparent-size "$ROOT/fuzz/corpus/$t" | cut -f1)"
}

seeds() {  # the seeds come from the normal build (gcc): fuzz_make_seeds and the fixtures
  local normal=$ROOT/build
  [[ -f $normal/CMakeCache.txt ]] || cmake -S "$ROOT" -B "$normal" -DAUTOTUNE_WITH_NCCL=OFF >/dev/null
  nice -n 10 cmake --build "$normal" -j2 --target fuzz_make_seeds >/dev/null
  rm -rf "$BUILD/seeds" && mkdir -p "$BUILD/seeds"
  "$normal/fuzz/fuzz_make_seeds" "$BUILD/seeds"
  # A real timeline cut off after its first steps (the importer reads a cut-off file).
  for f in "$ROOT"/tests/fixtures/horovod/*.json.gz; do
    local name
    name=$(basename "$f" .json.gz)
    gzip -dc "$f" | head -c 60000 >"$BUILD/seeds/horovod_timeline/${name}_cut.json" || true
  done
  ls -R "$BUILD/seeds" | head -40
}

case "${1:-}" in
  --merge)
    read -r -a ts <<<"$(targets_of "${2:-}")"
    build "${ts[@]}"
    for t in "${ts[@]}"; do merge_one "$t"; done
    ;;
  --seeds)
    mkdir -p "$BUILD"
    seeds
    ;;
  -h|--help)
    sed -n '2,16p' "$0"
    ;;
  *)
    read -r -a ts <<<"$(targets_of "${1:-}")"
    runs=${2:-1000000}
    build "${ts[@]}"
    for t in "${ts[@]}"; do fuzz_one "$t" "$runs"; done
    ;;
esac
