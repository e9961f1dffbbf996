#!/usr/bin/env bash
# run.sh — how often a two-node `srun --mpi=pmix` job step dies in start-up, per
# launch setting: runs the same small data-parallel trainer step many times on the emulated
# Slurm (scripts/emulated-slurm.sh) and counts the steps that fail, and among them those where a
# rank died of SIGSEGV (Open MPI 4.1.4 under Slurm's PMIx plugin: a rank segfaults inside
# MPI_Init when a TCP fragment reaches it before its PML has registered its receive callbacks).
# Several settings ("arms") are measured in one loop, interleaved run by run, so every arm sees
# the same background load; the race only shows under load (a busy machine, or --busy). The
# setting the sweep and the tests use, SLURM_PMIX_FENCE=ring, was chosen with it
# (experiments/slurm-startup/README.md; docs/cluster.md, "Start-up under srun"):
#   nice -n 10 experiments/slurm-startup/run.sh --busy 2 --arm before --arm 'ring SLURM_PMIX_FENCE=ring'
#
#   experiments/slurm-startup/run.sh [--runs N] [--minutes M] [--stop-at F] [--k K] [--busy B]
#                                 [--keep-going] [--arm 'NAME [VAR=VALUE ...]'] ...
#
#   --runs N      runs per arm (default 400)
#   --minutes M   stop after M minutes of wall time, whatever the count (default 15)
#   --stop-at F   an arm that has F segfaults stops running (default 6; 0 = never)
#   --k K         ranks, K/2 on each node (default 4)
#   --busy B      B busy loops beside the runs, at the loop's own priority (under nice -n 10
#                 they take CPU from the runs, little from anyone else's work; default 0)
#   --arm '...'   a name, then the environment the step runs with (srun passes it to every
#                 rank and to Slurm's PMIx plugin); repeatable. Every arm starts from the
#                 caller's environment without SLURM_PMIX_FENCE (the plugin's default unless
#                 the arm sets it). Default: one arm "default", the launch as scripts/ns-slurm
#                 sets it up.
#   e.g. experiments/slurm-startup/run.sh --runs 400 --arm before --arm 'after OMPI_MCA_X=1'
#
# Prints a line per failed run as it happens and, at the end, per arm:
#   ARM: S segfaults, O other failures in N runs
# Each failed run's srun output is kept under $DPSCALE_LOOP_LOG (default
# build/slurm-tmp/startup-loop/) as ARM-RUN.txt. Exit 0 when the loop ran, 2 on bad input, 77
# where Slurm cannot run here. Brings the emulated nodes and Slurm up if they are not, and takes
# down what it brought up. Needs root and a built build/bin/train_dp_naive (copied once, so a
# rebuild during the loop does not change the program under test). Run it under `nice -n 10`
# on a shared machine.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
here=$repo/scripts  # the emulated nodes and Slurm: the product's tools
runs=400 minutes=15 stop_at=6 k=4 busy=0
arms=()
die() { echo "slurm-startup-loop: $*" >&2; exit 2; }
int() { [[ $2 =~ ^[0-9]+$ ]] || die "$1 '$2' is not a whole number"; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) [[ $# -ge 2 ]] || die "--runs needs a value"; int --runs "$2"; runs=$2; shift 2 ;;
    --minutes) [[ $# -ge 2 ]] || die "--minutes needs a value"; int --minutes "$2"; minutes=$2; shift 2 ;;
    --stop-at) [[ $# -ge 2 ]] || die "--stop-at needs a value"; int --stop-at "$2"; stop_at=$2; shift 2 ;;
    --k) [[ $# -ge 2 ]] || die "--k needs a value"; int --k "$2"; k=$2; shift 2 ;;
    --busy) [[ $# -ge 2 ]] || die "--busy needs a value"; int --busy "$2"; busy=$2; shift 2 ;;
    --arm) [[ $# -ge 2 ]] || die "--arm needs 'NAME [VAR=VALUE ...]'"; arms+=("$2"); shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
[[ $runs -ge 1 && $minutes -ge 1 && $minutes -le 120 ]] || die "--runs at least 1, --minutes 1 to 120"
[[ $k -ge 2 && $((k % 2)) -eq 0 ]] || die "--k must be even (K/2 ranks on each node)"
[[ $busy -le 8 ]] || die "--busy at most 8"
[[ ${#arms[@]} -gt 0 ]] || arms=(default)
names=() envs=()
for a in "${arms[@]}"; do
  read -r -a words <<<"$a"
  [[ ${#words[@]} -ge 1 && ${words[0]} =~ ^[A-Za-z0-9_.-]+$ ]] || die "--arm '$a': the first word is the arm's name"
  for w in "${words[@]:1}"; do [[ $w =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || die "--arm '$a': '$w' is not VAR=VALUE"; done
  for n in "${names[@]}"; do [[ $n != "${words[0]}" ]] || die "two arms named '$n'"; done
  names+=("${words[0]}"); envs+=("${words[*]:1}")
done
[[ -x $repo/build/bin/train_dp_naive ]] || die "build/bin/train_dp_naive not built"
if ! why=$("$here/emulated-slurm.sh" check); then echo "slurm-startup-loop: skipped: $why" >&2; exit 77; fi

# The program and the logs live on a path both nodes see (each node has its own /tmp).
log=${DPSCALE_LOOP_LOG:-$repo/build/slurm-tmp/startup-loop}
mkdir -p "$log"
work=$(mktemp -d "$log/run.XXXXXX")
cp "$repo/build/bin/train_dp_naive" "$work/"

pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
  "$here/emulated-nodes.sh" down --owner startup-loop >/dev/null 2>&1 || true
}
trap cleanup EXIT
# An interrupt ends the loop after the run in progress; the tallies so far are still printed.
stop=0
trap 'stop=1' INT TERM
"$here/emulated-nodes.sh" up --slurm --owner startup-loop >/dev/null
for ((b = 0; b < busy; ++b)); do sh -c 'while :; do :; done' & pids+=($!); done

step=("$work/train_dp_naive" --backend cpu --model 784,64,32,10 --samples 512 --batch-size 256
      --max-steps 1 --warmup-steps 0 --gemm openblas --threads 1 --quiet)
declare -a segv other done_
for i in "${!names[@]}"; do segv[i]=0; other[i]=0; done_[i]=0; done
deadline=$((SECONDS + minutes * 60))
echo "# $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); K=$k (2x$((k / 2))), $runs runs per arm, $minutes min at most, busy $busy"
for i in "${!names[@]}"; do echo "# arm ${names[i]}: ${envs[i]:-(as ns-slurm sets it)}"; done
for ((r = 1; r <= runs; ++r)); do
  for i in "${!names[@]}"; do
    [[ $SECONDS -lt $deadline && $stop -eq 0 ]] || break 2
    [[ $stop_at -eq 0 || ${segv[i]} -lt $stop_at ]] || continue
    read -r -a e <<<"${envs[i]}"
    out=$work/out.txt rc=0
    (cd "$work" && timeout 120 env -u SLURM_PMIX_FENCE "${e[@]}" "$here/ns-slurm" srun --mpi=pmix --kill-on-bad-exit=1 -N 2 \
       --ntasks-per-node $((k / 2)) -n "$k" "${step[@]}") >"$out" 2>&1 || rc=$?
    done_[i]=$((done_[i] + 1))
    if [[ $rc -ne 0 ]]; then
      if grep -q -E 'Segmentation fault|signal 11' "$out"; then segv[i]=$((segv[i] + 1)); kind=segfault
      else other[i]=$((other[i] + 1)); kind="failure (exit $rc)"; fi
      cp "$out" "$log/${names[i]}-$r.txt"
      echo "$(date -u +%T) ${names[i]} run $r: $kind; output in $log/${names[i]}-$r.txt"
    fi
  done
  all_stopped=1
  for i in "${!names[@]}"; do [[ $stop_at -ne 0 && ${segv[i]} -ge $stop_at ]] || all_stopped=0; done
  [[ $all_stopped -eq 0 ]] || break
done
echo "# $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
for i in "${!names[@]}"; do
  echo "${names[i]}: ${segv[i]} segfaults, ${other[i]} other failures in ${done_[i]} runs"
done
