#!/usr/bin/env bash
# Tests under sanitizers (after tools/setup.sh), each sanitizer in a build folder of its own.
#   ci: what CI runs (.ci/run): the code that parses outside input and the code that runs
#       threads, nothing else. Under ASan+UBSan (build-asan/): the unit suites of traces,
#       store and formats, the replay of every committed fuzz corpus (fuzz/corpus), the
#       executor's unit suite and its MPI tests on 4 ranks (one node, 2x2 pseudo-nodes).
#       Under TSan (build-tsan/): the executor's MPI tests (the fusion engine's background
#       thread, the step player, the stall check's thread, negotiation, record).
#   asan: the ci set under ASan+UBSan plus the tuner, simulator and bench unit suites.
#   asan-all: every ctest test (the end-to-end CLI tests too) in build-asan/.
#   tsan: the executor's MPI tests under TSan, as in ci.
#   all: asan + tsan.
# Every build goes through ccache when it is installed (tools/ccache_flags.sh), so a second
# run recompiles only what changed. Open MPI is not built with sanitizers:
# tools/sanitizers/*.supp name what is its own, and MPI ranks run without leak checks (Open
# MPI unloads its plugins at MPI_Finalize, so the blocks they keep for the process's lifetime
# show as leaks of an "<unknown module>" that no suppression can name: ~117 KB per rank, no
# frame of ours in any of them).
# Usage: tools/sanitize.sh [ci|asan|asan-all|tsan|all]   (default all)
set -euo pipefail
cd "$(dirname "$0")/.."
what="${1:-all}"
supp="$PWD/tools/sanitizers"
jobs="$(nproc)"
mpirun_flags=(-np 4 --oversubscribe --allow-run-as-root --bind-to none
              --mca mpi_yield_when_idle 1 --mca btl self,vader,tcp)
# Suites that parse outside input or run threads (the ci set), then the rest (asan).
parser_thread_suites=(traces/traces_tests store/store_tests formats/formats_tests
                      executor/executor_unit_tests)
other_suites=(tuner/tuner_tests simulator/simulator_tests bench/bench_tests)
fuzz_targets=(workload_json config_yaml tuner_csv horovod_timeline store_db)
export CCACHE_BASEDIR="$PWD"

# At -O1 (as the sanitizers' own docs advise for reasonable speed with exact reports): on a
# fresh clone on this 2-core machine the CI set's ASan build took 356 s against 587 s at -O2,
# its TSan build 79 s against 125 s. The test code itself (tests/) at -O0: a test file of
# GoogleTest's macros under ASan compiles in 15.1 s at -O0 against 26.3 s at -O1
# (tests/traces/workload_test.cc), and what it checks runs in the -O1 libraries.
configure() {  # folder, sanitizer list; the report's scripts come from setup's npm install
  cmake -S . -B "$1" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAUTOTUNE_WITH_NCCL=OFF \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DAUTOTUNE_TEST_OPTIMIZE=-O0 \
    -DAUTOTUNE_SANITIZE="$2" -DAUTOTUNE_REPORT_MODULES="$PWD/build/report-web/node_modules" \
    $(tools/ccache_flags.sh) >/dev/null
}

# MPI tests of the executor on 4 ranks: one node, then 2 pseudo-nodes x 2.
run_mpi_tests() {  # folder
  timeout 1800 mpirun "${mpirun_flags[@]}" "$1/tests/executor/executor_mpi_tests"
  timeout 1800 mpirun "${mpirun_flags[@]}" -x AUTOTUNE_RANKS_PER_NODE=2 \
    "$1/tests/executor/executor_mpi_tests" --gtest_filter=-RecordTest.*
}

run_asan() {  # unit suites and fuzz targets to build and run, then the MPI tests
  local suites=("$@")
  configure build-asan address,undefined
  local targets=(executor_mpi_tests)
  for s in "${suites[@]}"; do targets+=("$(basename "$s")"); done
  for f in "${fuzz_targets[@]}"; do targets+=("fuzz_replay_$f"); done
  local started=$SECONDS
  cmake --build build-asan -j"$jobs" --target "${targets[@]}"
  echo "sanitize: asan build $((SECONDS - started)) s"
  for s in "${suites[@]}"; do
    echo "sanitize: asan $s"
    ASAN_OPTIONS="detect_leaks=1:abort_on_error=1" \
    LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0" \
      "build-asan/tests/$s" --gtest_brief=1
  done
  for f in "${fuzz_targets[@]}"; do
    echo "sanitize: asan fuzz corpus $f"
    ASAN_OPTIONS="detect_leaks=1:abort_on_error=1" \
    LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0" \
      "build-asan/fuzz/fuzz_replay_$f" "fuzz/corpus/$f" >/dev/null
  done
  echo "sanitize: asan executor MPI tests"
  ASAN_OPTIONS="detect_leaks=0:abort_on_error=1" run_mpi_tests build-asan
}

export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
case "$what" in
  ci) run_asan "${parser_thread_suites[@]}" ;;
  asan|all) run_asan "${parser_thread_suites[@]}" "${other_suites[@]}" ;;
  tsan|asan-all) ;;
  *) echo "sanitize: unknown mode '$what' (ci, asan, asan-all, tsan or all)" >&2; exit 2 ;;
esac

if [ "$what" = asan-all ]; then
  configure build-asan address,undefined
  cmake --build build-asan -j"$jobs"
  ASAN_OPTIONS="detect_leaks=1:abort_on_error=1" \
  LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0" \
    ctest --test-dir build-asan --output-on-failure --timeout 1800 -j2 -E '^(executor_|cluster_)'
  ASAN_OPTIONS="detect_leaks=0:abort_on_error=1" \
    ctest --test-dir build-asan --output-on-failure --timeout 1800 -R '^(executor_|cluster_)'
fi

if [ "$what" = tsan ] || [ "$what" = all ] || [ "$what" = ci ]; then
  configure build-tsan thread
  started=$SECONDS
  cmake --build build-tsan -j"$jobs" --target executor_mpi_tests
  echo "sanitize: tsan build $((SECONDS - started)) s"
  echo "sanitize: tsan executor MPI tests"
  TSAN_OPTIONS="suppressions=$supp/tsan.supp:halt_on_error=1:second_deadlock_stack=1" \
    run_mpi_tests build-tsan
fi
echo "sanitize: $what clean"
