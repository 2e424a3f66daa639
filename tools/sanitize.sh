#!/usr/bin/env bash
# Tests under sanitizers (after tools/setup.sh), each sanitizer in a build folder of its own.
#   asan: the unit suites (traces, tuner, simulator, executor, bench) and the executor's MPI
#         tests on 4 ranks (one node, 2x2 pseudo-nodes), built with
#         -DAUTOTUNE_SANITIZE=address,undefined in build-asan/; a finding fails the run.
#   asan-all: every ctest test (the end-to-end CLI tests too) in build-asan/.
#   tsan: the executor's MPI tests (the fusion engine's background thread, the step player,
#         the stall check's thread, negotiation, record) built with -DAUTOTUNE_SANITIZE=thread
#         in build-tsan/, on 4 ranks.
# Open MPI is not built with sanitizers: tools/sanitizers/*.supp name what is its own, and
# MPI ranks run without leak checks (Open MPI unloads its plugins at MPI_Finalize, so the
# blocks they keep for the process's lifetime show as leaks of an "<unknown module>" that
# no suppression can name: ~117 KB per rank, no frame of ours in any of them).
# Usage: tools/sanitize.sh [asan|asan-all|tsan|all]   (default all = asan + tsan)
set -euo pipefail
cd "$(dirname "$0")/.."
what="${1:-all}"
supp="$PWD/tools/sanitizers"
jobs="$(nproc)"
mpirun_flags=(-np 4 --oversubscribe --allow-run-as-root --bind-to none
              --mca mpi_yield_when_idle 1 --mca btl self,vader,tcp)
unit_suites=(traces/traces_tests store/store_tests formats/formats_tests tuner/tuner_tests
             simulator/simulator_tests executor/executor_unit_tests bench/bench_tests)

configure() {  # folder, sanitizer list; the report's scripts come from setup's npm install
  cmake -S . -B "$1" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAUTOTUNE_WITH_NCCL=OFF \
    -DAUTOTUNE_SANITIZE="$2" -DAUTOTUNE_REPORT_MODULES="$PWD/build/report-web/node_modules" \
    >/dev/null
}

# MPI tests of the executor on 4 ranks: one node, then 2 pseudo-nodes x 2.
run_mpi_tests() {  # folder
  timeout 1800 mpirun "${mpirun_flags[@]}" "$1/tests/executor/executor_mpi_tests"
  timeout 1800 mpirun "${mpirun_flags[@]}" -x AUTOTUNE_RANKS_PER_NODE=2 \
    "$1/tests/executor/executor_mpi_tests" --gtest_filter=-RecordTest.*
}

export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
if [ "$what" = asan ] || [ "$what" = all ]; then
  configure build-asan address,undefined
  targets=()
  for s in "${unit_suites[@]}"; do targets+=("$(basename "$s")"); done
  cmake --build build-asan -j"$jobs" --target "${targets[@]}" executor_mpi_tests
  for s in "${unit_suites[@]}"; do
    echo "sanitize: asan $s"
    ASAN_OPTIONS="detect_leaks=1:abort_on_error=1" \
    LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0" \
      "build-asan/tests/$s" --gtest_brief=1
  done
  echo "sanitize: asan executor MPI tests"
  ASAN_OPTIONS="detect_leaks=0:abort_on_error=1" run_mpi_tests build-asan
fi

if [ "$what" = asan-all ]; then
  configure build-asan address,undefined
  cmake --build build-asan -j"$jobs"
  ASAN_OPTIONS="detect_leaks=1:abort_on_error=1" \
  LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0" \
    ctest --test-dir build-asan --output-on-failure --timeout 1800 -j2 -E '^(executor_|cluster_)'
  ASAN_OPTIONS="detect_leaks=0:abort_on_error=1" \
    ctest --test-dir build-asan --output-on-failure --timeout 1800 -R '^(executor_|cluster_)'
fi

if [ "$what" = tsan ] || [ "$what" = all ]; then
  configure build-tsan thread
  cmake --build build-tsan -j"$jobs" --target executor_mpi_tests
  echo "sanitize: tsan executor MPI tests"
  TSAN_OPTIONS="suppressions=$supp/tsan.supp:halt_on_error=1:second_deadlock_stack=1" \
    run_mpi_tests build-tsan
fi
echo "sanitize: $what clean"
