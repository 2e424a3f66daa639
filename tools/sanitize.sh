#!/usr/bin/env bash
# The test suite under sanitizers (after tools/setup.sh), each in a build folder of its own:
#   asan: every test (unit, MPI, end to end) built with -DAUTOTUNE_SANITIZE=address,undefined
#         in build-asan/; a finding fails the test (UBSan halts, ASan aborts).
#   tsan: the MPI tests of the fusion engine, negotiation and record (the executor's threads:
#         the engine's background thread, the player, the stall check's thread) built with
#         -DAUTOTUNE_SANITIZE=thread in build-tsan/, under mpirun on 4 ranks.
# Open MPI is not built with sanitizers: tools/sanitizers/*.supp name what is its own.
# Usage: tools/sanitize.sh [asan|tsan|all]   (default all)
set -euo pipefail
cd "$(dirname "$0")/.."
what="${1:-all}"
supp="$PWD/tools/sanitizers"
jobs="$(nproc)"

if [ "$what" = asan ] || [ "$what" = all ]; then
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAUTOTUNE_WITH_NCCL=OFF \
    -DAUTOTUNE_SANITIZE=address,undefined >/dev/null
  cmake --build build-asan -j"$jobs"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
  # Processes that never start MPI: every finding, leaks included.
  ASAN_OPTIONS="detect_leaks=1:abort_on_error=1" \
  LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0" \
    ctest --test-dir build-asan --output-on-failure --timeout 1800 -j2 -E '^(executor_|cluster_)'
  # MPI ranks (executor_* and cluster_* tests): memory errors and undefined behaviour, not
  # leaks: Open MPI unloads its plugins (dlclose) at MPI_Finalize, so the blocks they keep
  # for the process's lifetime show as leaks from an "<unknown module>" that no suppression
  # can name (seen: ~117 KB per rank, no frame of ours in any of them).
  ASAN_OPTIONS="detect_leaks=0:abort_on_error=1" \
    ctest --test-dir build-asan --output-on-failure --timeout 1800 -R '^(executor_|cluster_)'
fi

if [ "$what" = tsan ] || [ "$what" = all ]; then
  cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAUTOTUNE_WITH_NCCL=OFF \
    -DAUTOTUNE_SANITIZE=thread >/dev/null
  cmake --build build-tsan -j"$jobs" --target executor_mpi_tests
  TSAN_OPTIONS="suppressions=$supp/tsan.supp:halt_on_error=1:second_deadlock_stack=1" \
    ctest --test-dir build-tsan --output-on-failure --timeout 1800 -R '^executor_mpi_4ranks$'
fi
echo "sanitize: $what clean"
