#!/usr/bin/env bash
# Emulated cluster on one machine (DESIGN.md, "The emulated cluster").
#
# Brings up N "nodes" as network namespaces, each with its own host name, joined through a
# bridge in a hub namespace by veth links that HTB shapes to --rate in both directions
# (node egress on the node's side, node ingress on the hub's side: a full-duplex switch
# port). Runs a program on N x M ranks with mpirun started inside node 0, then tears
# everything down, also on failure or interrupt.
#
#   node i: namespace at<PID>n<i>, host name at<PID>n<i>, eth0 = 10.77.0.<i+1>/24
#   hub:    namespace at<PID>hub, bridge br0, ports p<i> (the peers of each node's eth0)
#
# Addresses exist only inside these namespaces; nothing is added to the root namespace.
# Ranks on one node talk through shared memory (vader), across nodes through TCP on eth0.
set -euo pipefail

readonly PROG="cluster.sh"
readonly SUBNET_PREFIX="10.77.0"
readonly SUBNET="${SUBNET_PREFIX}.0/24"

usage() {
  cat <<EOF
Usage: $PROG [options] -- PROGRAM [ARGS...]
       $PROG [options] --check
       $PROG --cleanup-stale

Runs PROGRAM on every rank of an emulated cluster (like mpirun's argv) and exits with
mpirun's status. Needs root, iproute2 (ip, tc with HTB) and util-linux unshare.

Options:
  --nodes N            number of nodes (network namespaces), 1-250. Default 2.
  --ranks-per-node M   MPI ranks on each node. Default 2.
  --rate RATE          link rate of each node, tc syntax: <number>(bit|kbit|mbit|gbit|tbit).
                       Default 1gbit.
  --mpirun-args "..."  extra mpirun flags, split on spaces (e.g. "--map-by node").
  --check              set up, check that every node reaches node 0 and has its own host
                       name and a shaped link, tear down. No PROGRAM.
  --cleanup-stale      delete namespaces left by $PROG runs that no longer exist (after
                       SIGKILL), then exit.
  -h, --help           this text.

Exit status: mpirun's (or 0 for a passed --check); 2 for bad usage; 77 when this machine
cannot host the cluster (not root, a tool missing, no HTB).

Every rank gets AUTOTUNE_CLUSTER_NODES, AUTOTUNE_CLUSTER_RANKS_PER_NODE and
AUTOTUNE_CLUSTER_LINK_BITS_PER_S in its environment.
EOF
}

die() {
  echo "$PROG: $*" >&2
  exit 2
}

# This machine cannot host the cluster (exit 77: ctest's and automake's "skipped").
unavailable() {
  echo "$PROG: $*" >&2
  exit 77
}

# Everything created, for the cleanup trap.
created_ns=()
workdir=""
mpirun_pid=""

# shellcheck disable=SC2317  # invoked by the EXIT trap
cleanup() {
  local rc=$?
  trap - EXIT INT TERM HUP
  set +e
  if [[ -n $mpirun_pid ]] && kill -0 "$mpirun_pid" 2>/dev/null; then
    kill -TERM "$mpirun_pid" 2>/dev/null
    for _ in 1 2 3 4 5 6 7 8 9 10; do
      kill -0 "$mpirun_pid" 2>/dev/null || break
      sleep 0.2
    done
    kill -KILL "$mpirun_pid" 2>/dev/null
  fi
  # Whatever still runs inside our namespaces (ranks, orteds): TERM, then KILL.
  local ns pid signal
  for signal in TERM KILL; do
    for ns in "${created_ns[@]}"; do
      for pid in $(ip netns pids "$ns" 2>/dev/null); do
        kill "-$signal" "$pid" 2>/dev/null
      done
    done
    [[ $signal == TERM ]] && sleep 0.3
  done
  for ns in "${created_ns[@]}"; do
    if [[ -e /run/netns/$ns ]]; then
      ip netns del "$ns" 2>/dev/null || echo "$PROG: warning: could not delete namespace $ns" >&2
    fi
  done
  [[ -n $workdir ]] && rm -rf "$workdir"
  exit "$rc"
}

cleanup_stale() {
  local ns pid
  for ns in $(ip netns list | awk '{print $1}'); do
    [[ $ns =~ ^at([0-9]+)(hub|n[0-9]+)$ ]] || continue
    pid=${BASH_REMATCH[1]}
    if [[ -r /proc/$pid/cmdline ]] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q "$PROG"; then
      continue  # that run is alive
    fi
    for p in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null || true; done
    ip netns del "$ns" && echo "$PROG: deleted stale namespace $ns"
  done
}

# Rate in tc syntax -> bits per second (decimal units, as tc reads them).
rate_bits_per_s() {
  [[ $1 =~ ^([0-9]+([.][0-9]+)?)(bit|kbit|mbit|gbit|tbit)$ ]] ||
    die "--rate '$1' must be <number>(bit|kbit|mbit|gbit|tbit), e.g. 1gbit"
  local factor
  case ${BASH_REMATCH[3]} in
    bit) factor=1 ;; kbit) factor=1e3 ;; mbit) factor=1e6 ;; gbit) factor=1e9 ;; tbit) factor=1e12 ;;
  esac
  awk -v n="${BASH_REMATCH[1]}" -v f="$factor" 'BEGIN { printf "%.0f", n * f }'
}

nodes=2
ranks_per_node=2
rate=1gbit
mpirun_extra=""
mode=run
while [[ $# -gt 0 ]]; do
  case $1 in
    --nodes) [[ $# -ge 2 ]] || die "--nodes needs a value"; nodes=$2; shift 2 ;;
    --ranks-per-node) [[ $# -ge 2 ]] || die "--ranks-per-node needs a value"; ranks_per_node=$2; shift 2 ;;
    --rate) [[ $# -ge 2 ]] || die "--rate needs a value"; rate=$2; shift 2 ;;
    --mpirun-args) [[ $# -ge 2 ]] || die "--mpirun-args needs a value"; mpirun_extra=$2; shift 2 ;;
    --check) mode=check; shift ;;
    --cleanup-stale) mode=stale; shift ;;
    -h | --help) usage; exit 0 ;;
    --) shift; break ;;
    *) die "unknown option '$1' (see --help; the program goes after --)" ;;
  esac
done

[[ $(id -u) -eq 0 ]] || unavailable "needs root (it creates network namespaces); run it as root"
for tool in ip tc unshare mpirun awk; do
  command -v "$tool" >/dev/null 2>&1 || unavailable "needs '$tool', which is not on PATH"
done
if [[ $mode == stale ]]; then
  cleanup_stale
  exit 0
fi
if ! [[ $nodes =~ ^[0-9]+$ ]] || ((nodes < 1 || nodes > 250)); then
  die "--nodes '$nodes' must be an integer in 1-250"
fi
if ! [[ $ranks_per_node =~ ^[0-9]+$ ]] || ((ranks_per_node < 1)); then
  die "--ranks-per-node '$ranks_per_node' must be a positive integer"
fi
link_bits=$(rate_bits_per_s "$rate")
((link_bits >= 8000)) || die "--rate '$rate' is below 8kbit"
if [[ $mode == run && $# -eq 0 ]]; then
  die "no program to run: $PROG [options] -- PROGRAM [ARGS...] (or --check)"
fi
if [[ $mode == check && $# -gt 0 ]]; then
  die "--check takes no program"
fi

prefix="at$$"
hub="${prefix}hub"
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

workdir=$(mktemp -d "/tmp/${prefix}.XXXXXX")

# HTB on the egress of one side of a link: one class at the link rate, everything in it.
# Burst: 1 ms at the link rate (at least 32 KiB), so that a sender briefly descheduled on
# this machine's few shared cores can catch up instead of losing that link time.
burst_bytes=$((link_bits / 8 / 1000))
((burst_bytes >= 32768)) || burst_bytes=32768
shape() {
  local ns=$1 dev=$2
  tc -n "$ns" qdisc add dev "$dev" root handle 1: htb default 1 ||
    unavailable "cannot add an HTB qdisc on $dev in $ns (kernel without sch_htb?)"
  tc -n "$ns" class add dev "$dev" parent 1: classid 1:1 htb rate "$rate" ceil "$rate" \
    burst "$burst_bytes" cburst "$burst_bytes" quantum 60000
}

node_names=()
created_ns+=("$hub")  # listed first, so that a signal right after the add still cleans it
ip netns add "$hub" || unavailable "cannot create network namespaces here (ip netns add failed)"
ip -n "$hub" link set lo up
ip -n "$hub" link add br0 type bridge
ip -n "$hub" link set br0 up
for ((i = 0; i < nodes; i++)); do
  ns="${prefix}n$i"
  created_ns+=("$ns")
  ip netns add "$ns"
  node_names+=("$ns")
  ip -n "$ns" link set lo up
  ip -n "$ns" link add eth0 type veth peer name "p$i" netns "$hub"
  ip -n "$ns" addr add "${SUBNET_PREFIX}.$((i + 1))/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$hub" link set "p$i" master br0
  ip -n "$hub" link set "p$i" up
  shape "$ns" eth0    # node -> switch
  shape "$hub" "p$i"  # switch -> node
done

hostfile="$workdir/hostfile"
for ns in "${node_names[@]}"; do
  echo "$ns slots=$ranks_per_node"
done >"$hostfile"

# mpirun's remote shell: a host name is a namespace; the remote command runs there under its
# own UTS namespace with the node's host name (else the nodes' shared-memory files collide).
agent="$workdir/agent.sh"
cat >"$agent" <<EOF
#!/bin/sh
# Generated by $PROG: mpirun's plm_rsh_agent for the namespaces of run $prefix.
host="\$1"
shift
case "\$host" in
  ${prefix}n[0-9]*) ;;
  *) echo "$PROG agent: unknown host '\$host'" >&2; exit 1 ;;
esac
# Like ssh: the remaining words form one command line for the remote shell.
exec ip netns exec "\$host" unshare --uts sh -c "hostname \$host && exec \$*"
EOF
chmod +x "$agent"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export AUTOTUNE_CLUSTER_NODES=$nodes
export AUTOTUNE_CLUSTER_RANKS_PER_NODE=$ranks_per_node
export AUTOTUNE_CLUSTER_LINK_BITS_PER_S=$link_bits

extra_args=()
if [[ -n $mpirun_extra ]]; then
  read -r -a extra_args <<<"$mpirun_extra"
fi
# shellcheck disable=SC2054  # the commas belong to the MCA value
mpirun_cmd=(mpirun --allow-run-as-root --oversubscribe --bind-to none
  --hostfile "$hostfile" -np $((nodes * ranks_per_node))
  --mca plm_rsh_agent "$agent" --mca plm_rsh_no_tree_spawn 1
  --mca btl self,vader,tcp --mca btl_tcp_links 2 --mca mpi_yield_when_idle 1
  --mca btl_tcp_if_include "$SUBNET" --mca oob_tcp_if_include "$SUBNET"
  -x AUTOTUNE_CLUSTER_NODES -x AUTOTUNE_CLUSTER_RANKS_PER_NODE
  -x AUTOTUNE_CLUSTER_LINK_BITS_PER_S
  "${extra_args[@]}")

# Runs "$@" inside node 0 with node 0's host name, in the background so that the traps can
# act while it runs; returns its exit status.
run_in_node0() {
  # shellcheck disable=SC2016  # $0 and $@ expand in the inner shell
  ip netns exec "${node_names[0]}" unshare --uts \
    sh -c 'hostname "$0" && exec "$@"' "${node_names[0]}" "$@" &
  mpirun_pid=$!
  local rc=0
  wait "$mpirun_pid" || rc=$?
  mpirun_pid=""
  return "$rc"
}

if [[ $mode == check ]]; then
  for ((i = 0; i < nodes; i++)); do
    tc -n "${node_names[$i]}" class show dev eth0 | grep -q "htb 1:1 .*rate" ||
      die "node $i: no HTB class on eth0"
    tc -n "$hub" class show dev "p$i" | grep -q "htb 1:1 .*rate" ||
      die "node $i: no HTB class on hub port p$i"
  done
  # Every orted connects back to mpirun in node 0 over TCP on the shaped links, so this
  # checks connectivity node i -> node 0 -> node i as well as the launch path.
  out="$workdir/hostnames"
  rc=0
  run_in_node0 "${mpirun_cmd[@]}" hostname >"$out" || rc=$?
  ((rc == 0)) || die "check failed: mpirun hostname exited with $rc"
  for ns in "${node_names[@]}"; do
    count=$(grep -cx "$ns" "$out" || true)
    ((count == ranks_per_node)) ||
      die "check failed: host $ns ran $count ranks, expected $ranks_per_node"
  done
  echo "$PROG: check ok: $nodes nodes x $ranks_per_node ranks, links shaped by HTB to" \
    "$rate, hosts ${node_names[*]}"
  exit 0
fi

rc=0
run_in_node0 "${mpirun_cmd[@]}" "$@" || rc=$?
exit "$rc"
