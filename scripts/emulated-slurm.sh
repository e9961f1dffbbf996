#!/usr/bin/env bash
# emulated-slurm.sh — a real Slurm on the two emulated nodes of scripts/emulated-nodes.sh:
# munged on the machine, slurmctld inside dpnode0 (the cluster's first node, as on a real one)
# and one slurmd per node namespace, each under its node's host name (a UTS namespace of its
# own, for Open MPI's per-host names; see scripts/ns-rsh). No cgroups: processes are tracked by
# walking /proc (proctrack/linuxproc), tasks are not confined (task/none).
#
#   scripts/emulated-slurm.sh up [--owner NAME]    start (the nodes must be up); waits until both
#                                                  are idle; records NAME when it started them
#   scripts/emulated-slurm.sh down [--owner NAME]  stop every daemon `up` started (idempotent);
#                                                  with --owner only if that owner started them
#   scripts/emulated-slurm.sh check   exit 0 when Slurm can run here, else 77 with the reason
#
# Called by `emulated-nodes.sh up --slurm` and `down`. Everything lives in $DPSCALE_NODES_DIR/slurm
# (config, state, logs, pids); the config is found through SLURM_CONF, so /etc/slurm is not
# touched. Slurm's client commands (sinfo, srun, sbatch, scancel) reach the controller from
# inside dpnode0 only: scripts/ns-slurm runs one there with SLURM_CONF set.
set -euo pipefail

DIR=${DPSCALE_NODES_DIR:-/run/dpscale-nodes}
S=$DIR/slurm
NS=(dpnode0 dpnode1)
ADDR=(10.77.0.1 10.77.0.2)
SLOTS=${DPSCALE_NODE_SLOTS:-4}
SKIP=77

die() { echo "emulated-slurm: $*" >&2; exit 2; }

# Why Slurm cannot run here, or nothing when it can.
why_not() {
  if [[ $(id -u) -ne 0 ]]; then echo "not root (slurmd runs jobs as their users and needs root)"; return; fi
  for tool in munged slurmctld slurmd sinfo srun sbatch scancel; do
    command -v "$tool" >/dev/null 2>&1 || { echo "'$tool' not found (install slurm-wlm and munge: scripts/install-deps.sh)"; return; }
  done
  [[ -r /etc/munge/munge.key ]] || echo "no /etc/munge/munge.key (the munge package makes one)"
}

write_conf() {
  mkdir -p "$S/state" "$S/log" "$S/spool"
  local mem; mem=$(awk '/MemTotal/ {print int($2 / 1024 / 2)}' /proc/meminfo)
  cat >"$S/slurm.conf" <<EOF
# Written by scripts/emulated-slurm.sh: two nodes, no cgroups, no accounting.
ClusterName=dpscale
SlurmctldHost=dpnode0(${ADDR[0]})
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
# The nodes declare the slots of the hostfile, which may exceed this machine's cores.
SlurmdParameters=config_overrides
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool/%n
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.%n.pid
SlurmctldLogFile=$S/log/slurmctld.log
SlurmdLogFile=$S/log/slurmd.%n.log
SlurmctldParameters=enable_configless
KillWait=5
MinJobAge=60
InactiveLimit=0
SlurmdTimeout=60
NodeName=dpnode0 NodeAddr=${ADDR[0]} CPUs=$SLOTS RealMemory=$mem State=UNKNOWN
NodeName=dpnode1 NodeAddr=${ADDR[1]} CPUs=$SLOTS RealMemory=$mem State=UNKNOWN
PartitionName=dp Nodes=dpnode[0-1] Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
}

# A daemon inside node $1's namespaces, detached: its network namespace, a UTS one named after
# the node (Open MPI names per-host files after it), and a mount namespace whose /tmp is the
# node's own, as on a real node (Slurm's PMIx plugin makes per-step directories there by job and
# step id, which two nodes sharing one /tmp would both make). Every directory that was in the
# host's /tmp is bound back into the node's /tmp, so a checkout or build under /tmp stays where
# the jobs look for it (as a shared file system on a cluster). nsenter, not `ip netns exec`:
# that also remounts /sys, which hides /sys/fs/cgroup, and slurmd refuses to start without a
# cgroup file system to detect (even with no cgroup plugin in use).
in_node() {
  local node=$1; shift
  mkdir -p "$S/tmp/$node"
  chmod 1777 "$S/tmp/$node"
  setsid nsenter --net="/run/netns/$node" unshare --uts --mount --propagation private \
    sh -c 'hostname "$1"; mkdir -p "$3"; mount --bind /tmp "$3"; mount --bind "$2" /tmp
           for d in "$3"/*/; do [ -d "$d" ] || continue; n=$(basename "$d"); mkdir -p "/tmp/$n" && mount --bind "$d" "/tmp/$n"; done
           shift 3; exec "$@"' in-node "$node" "$S/tmp/$node" "$S/host-tmp-$node" "$@" \
    </dev/null >>"$S/log/daemons.out" 2>&1 &
}

up() {
  local owner=""
  [[ ${1:-} == --owner && $# -ge 2 ]] && owner=$2
  local reason; reason=$(why_not)
  if [[ -n $reason ]]; then echo "emulated-slurm: cannot run Slurm: $reason" >&2; exit $SKIP; fi
  [[ -f $DIR/hostfile && -e /run/netns/${NS[0]} ]] || die "the emulated nodes are not up (scripts/emulated-nodes.sh up)"
  if status >/dev/null 2>&1; then echo "emulated-slurm: already up"; return 0; fi
  down >/dev/null
  write_conf
  # munged: the machine's own unless one already answers (its socket is a file, so every
  # namespace reaches it). One we start is ours to stop.
  if ! munge -n </dev/null >/dev/null 2>&1; then
    mkdir -p /run/munge /var/log/munge /var/lib/munge
    munged --force --pid-file="$S/munged.pid" --log-file="$S/log/munged.log" \
      || die "munged did not start: $(tail -n 1 "$S/log/munged.log" 2>/dev/null)"
  fi
  export SLURM_CONF=$S/slurm.conf
  in_node "${NS[0]}" slurmctld -D -i
  for n in "${NS[@]}"; do in_node "$n" slurmd -D -N "$n"; done
  # Both nodes idle within 30 s, or say what the logs say.
  local i
  for ((i = 0; i < 60; ++i)); do
    if [[ $(sinfo_ -h -N -o '%N %t' 2>/dev/null | grep -c ' idle$') -eq 2 ]]; then
      if [[ -n $owner ]]; then echo "$owner" >"$S/owner"; fi
      status; return 0
    fi
    sleep 0.5
  done
  echo "emulated-slurm: the nodes did not become idle; last log lines:" >&2
  tail -n 3 "$S"/log/*.log "$S/log/daemons.out" >&2 2>/dev/null || true
  down >/dev/null
  exit 1
}

sinfo_() { SLURM_CONF=$S/slurm.conf ip netns exec "${NS[0]}" sinfo "$@"; }

# Stop a daemon by its pid file, waiting for it to go (slurmd ends its job steps first).
stop_pid() {
  local f=$1 pid
  [[ -f $f ]] || return 0
  pid=$(cat "$f" 2>/dev/null || true)
  if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$f"
}

down() {
  [[ -d $S ]] || { echo "emulated-slurm: down"; return 0; }
  if [[ ${1:-} == --owner && "$(cat "$S/owner" 2>/dev/null)" != "${2:-}" ]]; then
    echo "emulated-slurm: left up (not started by '${2:-}')"; return 0
  fi
  for n in "${NS[@]}"; do stop_pid "$S/slurmd.$n.pid"; done
  stop_pid "$S/slurmctld.pid"
  stop_pid "$S/munged.pid"
  rm -rf "$S"
  echo "emulated-slurm: down"
}

status() {
  [[ -f $S/slurm.conf ]] || { echo "slurm: absent"; return 1; }
  local out; out=$(sinfo_ -h -N -o '%N %t' 2>&1) || { echo "slurm: $out"; return 1; }
  echo "slurm: $(echo "$out" | tr '\n' ' ')(SLURM_CONF=$S/slurm.conf)"
}

case "${1:-}" in
  up) shift; up "$@" ;;
  down) shift; down "$@" ;;
  status) status ;;
  check) reason=$(why_not); if [[ -n $reason ]]; then echo "$reason"; exit $SKIP; fi; echo "Slurm can run here" ;;
  *) echo "usage: $0 up | down | status | check" >&2; exit 2 ;;
esac
