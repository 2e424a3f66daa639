#!/usr/bin/env bash
# Checks that tools/cluster.sh leaves nothing behind: after a failing program, after SIGTERM
# and SIGINT mid-run, and that nothing appears in the root namespace while it runs; and that
# bad usage gets one line and exit status 2.
#
#   teardown_test.sh CLUSTER_SH
set -euo pipefail
set -m  # background jobs get their own process group and do not ignore SIGINT

cluster=${1:?usage: teardown_test.sh CLUSTER_SH}
failures=0
fail() {
  echo "teardown_test: FAIL: $*"
  failures=$((failures + 1))
}

if [[ $(id -u) -ne 0 ]]; then
  echo "teardown_test: skipped: needs root"
  exit 77
fi

alive() {  # process $1 exists and is not a zombie waiting for its new parent to reap it
  local state
  state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
  [[ -n $state && $state != Z ]]
}

namespaces_of() {  # namespaces of the cluster.sh run with PID $1
  ip netns list | awk '{print $1}' | grep -E "^at$1(hub|n[0-9]+)$" || true
}

# 1. A failing program: its status comes back, nothing is left.
rc=0
"$cluster" --nodes 2 --ranks-per-node 1 -- sh -c 'exit 3' >/dev/null 2>&1 &
pid=$!
wait "$pid" || rc=$?
((rc != 0)) || fail "a failing program gave status 0"
[[ -z $(namespaces_of "$pid") ]] || fail "namespaces left after a failing program: $(namespaces_of "$pid")"

# 2. Interrupted mid-run by SIGTERM and SIGINT.
root_links_before=$(ip -o link show | awk -F': ' '{print $2}' | sort)
for signal in TERM INT; do
  "$cluster" --nodes 2 --ranks-per-node 1 -- sleep 60 >/dev/null 2>&1 &
  pid=$!
  sleeper=""
  for _ in $(seq 1 100); do  # up to 10 s for mpirun to start the ranks
    sleeper=$(ip netns pids "at${pid}n1" 2>/dev/null | head -n 1 || true)
    [[ -n $sleeper ]] && break
    sleep 0.1
  done
  [[ -n $sleeper ]] || fail "SIG$signal: no process ever ran in node 1"
  inside=$(ip netns pids "at${pid}n0" 2>/dev/null; ip netns pids "at${pid}n1" 2>/dev/null) || true
  if [[ $signal == TERM ]]; then
    root_links_during=$(ip -o link show | awk -F': ' '{print $2}' | sort)
    [[ $root_links_during == "$root_links_before" ]] ||
      fail "links appeared in the root namespace during a run"
  fi
  kill "-$signal" "$pid"
  rc=0
  wait "$pid" || rc=$?
  ((rc != 0)) || fail "SIG$signal: cluster.sh exited 0"
  [[ -z $(namespaces_of "$pid") ]] || fail "SIG$signal: namespaces left: $(namespaces_of "$pid")"
  for p in $inside; do
    if alive "$p"; then
      fail "SIG$signal: process $p of the cluster still runs"
      kill -KILL "$p" 2>/dev/null || true
    fi
  done
done

# 3. Bad usage: one line, status 2, nothing created.
for args in "--rate fast -- true" "--nodes 0 -- true" "--frobnicate -- true" "--nodes 2"; do
  rc=0
  # shellcheck disable=SC2086  # split the case into words on purpose
  msg=$("$cluster" $args 2>&1 >/dev/null) || rc=$?
  ((rc == 2)) || fail "'$args' gave status $rc, expected 2"
  [[ $(printf '%s\n' "$msg" | wc -l) -eq 1 && $msg == cluster.sh:* ]] ||
    fail "'$args' did not give one 'cluster.sh: ...' line: $msg"
done

if ((failures > 0)); then
  echo "teardown_test: $failures failure(s)"
  exit 1
fi
echo "teardown_test: ok"
