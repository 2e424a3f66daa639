#!/usr/bin/env bash
# Test driver: runs a command, shows its output, and passes only when the command exits 0
# AND its output matches every given extended regular expression (ctest's
# PASS_REGULAR_EXPRESSION alone ignores the exit status). Exit 77 from the command (the
# machine cannot host the emulated cluster) is passed through for ctest's SKIP_RETURN_CODE.
#
#   expect_output.sh [--fresh FILE]... [--expect REGEX]... -- COMMAND [ARGS...]
#
# --fresh FILE removes FILE (and its SQLite -wal/-shm companions) before the run.
set -euo pipefail

patterns=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --fresh) rm -f -- "$2" "$2-wal" "$2-shm" "$2-journal"; shift 2 ;;
    --expect) patterns+=("$2"); shift 2 ;;
    --) shift; break ;;
    *) echo "expect_output.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
[[ $# -gt 0 ]] || { echo "expect_output.sh: no command" >&2; exit 2; }

out=$(mktemp)
trap 'rm -f "$out"' EXIT
rc=0
"$@" >"$out" 2>&1 || rc=$?
cat "$out"
if ((rc == 77)); then
  echo "expect_output.sh: skipped: this machine cannot host the emulated cluster"
  exit 77
fi
if ((rc != 0)); then
  echo "expect_output.sh: FAIL: command exited with status $rc: $*"
  exit 1
fi
for p in "${patterns[@]}"; do
  if ! grep -Eq -- "$p" "$out"; then
    echo "expect_output.sh: FAIL: output lacks /$p/"
    exit 1
  fi
done
echo "expect_output.sh: ok"
