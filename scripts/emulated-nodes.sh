#!/usr/bin/env bash
# emulated-nodes.sh — two "nodes" on one machine out of real parts, for multi-node runs:
#
#   netns dpnode0 (10.77.0.1) ── veth dpveth0 ══ tbf RATE ══ dpveth1 ── netns dpnode1 (10.77.0.2)
#
# Each node is a Linux network namespace with its own loopback; the only path between them is
# a veth pair whose two ends are each capped by a token-bucket filter (tc qdisc tbf: the netem
# qdisc is not available on these kernels). Open MPI then runs its TCP transport between the
# namespaces and shared memory (vader) inside each; ranks are launched by `mpirun --hostfile`
# with scripts/ns-rsh as the rsh agent, which enters the namespace named by the host instead of
# ssh-ing to it (scripts/ns-mpirun puts the flags together).
#
#   scripts/emulated-nodes.sh up [--rate 1gbit] [--slurm]
#                                                 create (idempotent; a second `up` only re-caps);
#                                                 --slurm also starts a real Slurm on the two nodes
#                                                 (scripts/emulated-slurm.sh; clients: scripts/ns-slurm)
#   scripts/emulated-nodes.sh down                remove everything `up` made, Slurm's daemons
#                                                 first (idempotent)
#   For the CTest fixture (tests/twonode): `up --if-possible --owner ctest` exits 0 with the
#   reason where namespaces cannot be made (the tests then skip, saying why), and records that
#   it made the nodes; `down --owner ctest` removes them only if that `up` made them, so a
#   test run leaves nodes someone set up by hand as it found them. With --slurm the same holds
#   for Slurm on its own: a fixture that found the nodes up but Slurm down starts Slurm, and its
#   `down --owner` stops Slurm only.
#   scripts/emulated-nodes.sh status              exit 0 when up, 1 when not; prints the state
#   scripts/emulated-nodes.sh check               exit 0 when namespaces can be made here, else
#                                                 77 with the reason (CTest's skip code)
#
# Needs root and iproute2 (ip, tc) and util-linux (unshare, for each node's own host name; see
# scripts/ns-rsh). The hostfile for mpirun is written to $DPSCALE_NODES_DIR (default
# /run/dpscale-nodes)/hostfile. Nothing is installed; nothing outside the two namespaces, the
# veth pair (which lives inside them) and that directory is touched.
set -euo pipefail

NS=(dpnode0 dpnode1)
IFS_=(dpveth0 dpveth1)
ADDR=(10.77.0.1 10.77.0.2)
PREFIX=24
SUBNET=10.77.0.0/24
SLOTS=${DPSCALE_NODE_SLOTS:-4}
DIR=${DPSCALE_NODES_DIR:-/run/dpscale-nodes}
SKIP=77
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

die() { echo "emulated-nodes: $*" >&2; exit 2; }

# Why namespaces cannot be made here, or nothing (an empty line) when they can.
why_not() {
  if [[ $(id -u) -ne 0 ]]; then echo "not root (network namespaces and tc need CAP_NET_ADMIN)"; return; fi
  for tool in ip tc unshare; do
    command -v "$tool" >/dev/null 2>&1 || { echo "'$tool' not found (install iproute2 / util-linux)"; return; }
  done
  # A throw-away namespace proves the kernel lets us: containers often forbid it.
  local probe="dpnode-probe-$$"
  if ! ip netns add "$probe" 2>/dev/null; then echo "'ip netns add' refused (no network namespaces here)"; return; fi
  ip netns delete "$probe" 2>/dev/null || true
}

ns_exists() { [[ -e /run/netns/$1 ]]; }

up() {
  local rate=1gbit if_possible=0 owner="" slurm=0
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --if-possible) if_possible=1; shift ;;
      --slurm) slurm=1; shift ;;
      --owner) [[ $# -ge 2 ]] || die "--owner needs a name"; owner=$2; shift 2 ;;
      --rate) [[ $# -ge 2 ]] || die "--rate needs a value (e.g. 1gbit, 200mbit)"; rate=$2; shift 2 ;;
      --rate=*) rate=${1#--rate=}; shift ;;
      *) die "unknown argument '$1' (up [--rate RATE] [--slurm] [--if-possible] [--owner NAME])" ;;
    esac
  done
  [[ $rate =~ ^[0-9]+(\.[0-9]+)?([kmg]?bit|[kmg]?bps)$ ]] || die "--rate '$rate' is not a tc rate (e.g. 1gbit, 500mbit)"
  local reason; reason=$(why_not)
  if [[ -n $reason ]]; then
    echo "emulated-nodes: cannot make namespaces: $reason" >&2
    [[ $if_possible -eq 1 ]] && exit 0
    exit $SKIP
  fi
  local existed=0
  ns_exists "${NS[0]}" && existed=1
  # The fixture leaves nodes someone already set up exactly as they are (rate included).
  if [[ -n $owner && $existed -eq 1 ]] && status >/dev/null; then
    echo "emulated-nodes: already up; left as they are"; status
    [[ $slurm -eq 1 ]] && slurm_up "$owner" "$if_possible"
    return 0
  fi

  for i in 0 1; do ns_exists "${NS[$i]}" || ip netns add "${NS[$i]}"; done
  if ! ip -n "${NS[0]}" link show "${IFS_[0]}" >/dev/null 2>&1; then
    # A half-made pair (one end left from an interrupted `up`) would block the name: clear it.
    ip -n "${NS[1]}" link del "${IFS_[1]}" 2>/dev/null || true
    ip link add "${IFS_[0]}" netns "${NS[0]}" type veth peer name "${IFS_[1]}" netns "${NS[1]}"
  fi
  for i in 0 1; do
    local n=${NS[$i]} dev=${IFS_[$i]}
    ip -n "$n" link set lo up
    ip -n "$n" addr replace "${ADDR[$i]}/$PREFIX" dev "$dev"
    ip -n "$n" link set "$dev" up
    # The cap: a token bucket on each end's egress, so each direction gets RATE. burst must hold
    # at least one rate/HZ worth of bytes; 256 KiB is enough up to ~10 gbit. latency bounds the
    # queue (packets waiting longer are dropped and TCP backs off, as on a real congested link).
    # (Large GSO packets are no way around it: tbf segments a packet larger than its bucket.)
    ip netns exec "$n" tc qdisc replace dev "$dev" root tbf rate "$rate" burst 256kb latency 100ms
  done
  mkdir -p "$DIR"
  printf '%s slots=%s\n%s slots=%s\n' "${NS[0]}" "$SLOTS" "${NS[1]}" "$SLOTS" >"$DIR/hostfile"
  echo "$rate" >"$DIR/rate"
  echo "$SUBNET" >"$DIR/subnet"
  # Who made them: only when this `up` created them (nodes already up stay someone else's).
  if [[ -n $owner && $existed -eq 0 ]]; then echo "$owner" >"$DIR/owner"; fi
  # Both namespaces must answer each other before anyone launches across them.
  # No ping here (iputils is not a dependency): a TCP connect to a closed port answers
  # "refused" when the peer is reachable, and times out when it is not.
  local probe
  probe=$(ip netns exec "${NS[0]}" timeout 3 bash -c "exec 3<>/dev/tcp/${ADDR[1]}/9" 2>&1 || true)
  [[ $probe == *refused* ]] || die "namespaces made but ${NS[0]} cannot reach ${ADDR[1]} over the veth pair (${probe:-timeout})"
  status
  if [[ $slurm -eq 1 ]]; then slurm_up "$owner" "$if_possible"; fi
}

# Slurm on the nodes (scripts/emulated-slurm.sh). Where it cannot run, --if-possible says why and
# succeeds (the slurm tests then skip, naming the reason). The owner is recorded only when this
# call started it.
slurm_up() {
  local owner=$1 if_possible=$2 rc=0
  "$HERE/emulated-slurm.sh" up ${owner:+--owner "$owner"} || rc=$?
  if [[ $rc -eq $SKIP && $if_possible -eq 1 ]]; then return 0; fi
  [[ $rc -eq 0 ]] || exit "$rc"
}

down() {
  local owner=""
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --owner) [[ $# -ge 2 ]] || die "--owner needs a name"; owner=$2; shift 2 ;;
      *) die "unknown argument '$1' (down [--owner NAME])" ;;
    esac
  done
  if [[ -n $owner && "$(cat "$DIR/owner" 2>/dev/null)" != "$owner" ]]; then
    "$HERE/emulated-slurm.sh" down --owner "$owner" >/dev/null
    echo "emulated-nodes: left up (not made by '$owner')"
    return 0
  fi
  # Slurm's daemons live in the namespaces: stopped before the namespaces go.
  "$HERE/emulated-slurm.sh" down >/dev/null
  for i in 0 1; do
    if ns_exists "${NS[$i]}"; then ip netns delete "${NS[$i]}"; fi  # takes its veth end (and so the pair) with it
  done
  rm -rf "$DIR"
  echo "emulated-nodes: down"
}

status() {
  local ok=0
  for i in 0 1; do
    local n=${NS[$i]} dev=${IFS_[$i]}
    if ! ns_exists "$n"; then echo "${n}: absent"; ok=1; continue; fi
    local addr qdisc
    addr=$(ip -n "$n" -o -4 addr show dev "$dev" 2>/dev/null | awk '{print $4}')
    qdisc=$(ip netns exec "$n" tc qdisc show dev "$dev" 2>/dev/null | grep -o 'tbf.*rate [^ ]*' || true)
    echo "${n}: ${dev} ${addr:-no address} ${qdisc:-no tbf}"
    [[ -n $addr && -n $qdisc ]] || ok=1
  done
  [[ -f $DIR/hostfile ]] && echo "hostfile: $DIR/hostfile" || { echo "hostfile: absent"; ok=1; }
  if [[ -d $DIR/slurm ]]; then "$HERE/emulated-slurm.sh" status || true; fi
  return $ok
}

case "${1:-}" in
  up) shift; up "$@" ;;
  down) shift; down "$@" ;;
  status) status ;;
  check) reason=$(why_not); if [[ -n $reason ]]; then echo "$reason"; exit $SKIP; fi; echo "namespaces can be made here" ;;
  *) echo "usage: $0 up [--rate RATE] [--slurm] [--if-possible] [--owner NAME] | down [--owner NAME] | status | check" >&2; exit 2 ;;
esac
