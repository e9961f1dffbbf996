#!/usr/bin/env bash
# run.sh — dpscale's GPU kit (made by scripts/gpu-kit.sh): the CUDA checks on a bare GPU machine,
# as one command that ends well inside 10 minutes.
#
#   DIR/run.sh OUTDIR                on the GPU machine
#   DIR/run.sh OUTDIR --self-test    the same steps on this CPU with tiny models (what CI runs)
#
# Steps (kit/steps.sh, in order of value, each under a cap printed against the budget before
# the first starts): the stream-ordering and exactness tests on the GPU, NCCL at K = 2 and 4 (on
# one GPU: --share-gpu) early; the DP loop at K = 1 against single in one process
# (bench_dp_loop); the new trainers against the base revision's on this card (when the kit
# carries one: kit/ab.sh); the step's parts (bench_step); bench_gemm on cuBLAS, pedantic
# against default math, against the GPU's fp32 peak; train_single_gpu on the four presets at the
# workshop's single-GPU settings, fp32 and --tf32; the element-wise passes and the optimizer's
# finite check (bench_kernels); the CPU-pinned DP tests; one DP trainer per mode at K = 1 over
# NCCL (without a base: ab.sh runs them otherwise); bench_allreduce --algos nccl at K = 1.
# Before them: unpack the payload, find the machine's
# cudart/cuBLAS/NCCL (kit/cuda-libs.sh), and — when the kit's programs cannot run on its CUDA —
# rebuild them there with its nvcc (kit/build-here.sh).
#
# OUTDIR (new or empty) receives 14 files: 00-summary.md (read this first), system.txt,
# tests.log, train-fp32.jsonl, train-tf32.jsonl, ab.jsonl, bench_dp_loop-fp32.json,
# bench_dp_loop-tf32.json, bench_step-fp32.json, bench_step-tf32.json, bench_kernels.json,
# bench_gemm.json, bench_allreduce.txt, run.log.
# Time: DPSCALE_KIT_BUDGET_S (default 540 s) bounds the whole run; each step gets what is left.
# DPSCALE_KIT_ONLY=REGEX runs only the steps whose names match (e.g. '^ab$|^bench:').
# Exit status: 0 every step ok; 1 a step failed or ran out of time (the summary says which);
# 2 bad arguments; 3 the programs cannot run on this machine (the summary says why).
set -uo pipefail
# shellcheck source-path=SCRIPTDIR

usage() { echo "usage: run.sh OUTDIR [--self-test]" >&2; exit 2; }
(( $# >= 1 && $# <= 2 )) || usage
OUT=$1
SELF=0
if (( $# == 2 )); then if [[ $2 == --self-test ]]; then SELF=1; else usage; fi; fi
KIT=$(cd "$(dirname "$0")" && pwd)
if [[ -e $OUT && ( ! -d $OUT || -n $(ls -A "$OUT" 2>/dev/null) ) ]]; then
  echo "run.sh: OUTDIR $OUT exists and is not an empty directory" >&2
  exit 2
fi
mkdir -p "$OUT" || { echo "run.sh: cannot create $OUT" >&2; exit 2; }
OUT=$(cd "$OUT" && pwd)

T0=$(date +%s)
BUDGET=${DPSCALE_KIT_BUDGET_S:-540}
RESERVE=20  # kept back for the summary
WORK=$(mktemp -d "${TMPDIR:-/tmp}/dpscale-kit.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
exec 3>>"$OUT/run.log"
elapsed() { echo $(( $(date +%s) - T0 )); }
log() { echo "[$(elapsed)s] $*" >&3; echo "run.sh: $*" >&2; }
# step_cap WANT: WANT seconds, or what is left of the budget when that is less.
step_cap() { local left=$(( BUDGET - RESERVE - $(elapsed) )); (( left < $1 )) && echo "$left" || echo "$1"; }
: > "$WORK/steps.tsv"

# shellcheck source=env.sh
. "$KIT/kit/env.sh"
# shellcheck source=steps.sh
. "$KIT/kit/steps.sh"

manifest() { sed -n "s/^$1: //p" "$KIT/MANIFEST.txt"; }
summarize() {
  python3 "$KIT/kit/summary.py" "$OUT" "$WORK" "$SELF" > "$WORK/summary.md" 2>&3 ||
    { echo "# dpscale GPU kit: summary.py failed (python3?); the steps:"; cat "$WORK/steps.tsv"; } > "$WORK/summary.md"
  mv "$WORK/summary.md" "$OUT/00-summary.md"
  # What the programs wrote themselves (Google Benchmark's "executable", its "Running ..." line)
  # names this machine's folders: written OUT/, WORK/ and KIT/ as in run.log (OUT first: it may
  # sit inside the kit's folder, or beside it with the kit's name as a prefix).
  local f
  for f in "$OUT"/*; do
    [[ -f $f ]] && sed -i -e "s|$OUT|OUT|g" -e "s|$WORK|WORK|g" -e "s|$KIT|KIT|g" "$f"
  done
  # Every step's file exists, empty if the step never ran: the reader finds all fourteen.
  for f in system.txt tests.log train-fp32.jsonl train-tf32.jsonl ab.jsonl bench_dp_loop-fp32.json \
           bench_dp_loop-tf32.json bench_step-fp32.json bench_step-tf32.json bench_kernels.json bench_gemm.json \
           bench_allreduce.txt; do
    [[ -e $OUT/$f ]] || : > "$OUT/$f"
  done
}
cannot_run() {  # one reason, into the log, the summary, stderr; exit 3
  log "cannot run here: $*"
  printf 'setup\tfailed\t%s\t%s\n' "$(elapsed)" "$*" >> "$WORK/steps.tsv"
  summarize
  exit 3
}

log "kit $(manifest version), $( ((SELF)) && echo "self-test on the CPU" || echo "GPU run"), budget ${BUDGET}s"

# --- unpack -----------------------------------------------------------------------------------
ROOT=$WORK/root
mkdir -p "$ROOT"
if ! tar -xJf "$KIT/payload.tar.xz" -C "$ROOT" 2>&3; then
  python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$KIT/payload.tar.xz" "$ROOT" 2>&3 ||
    cannot_run "cannot unpack payload.tar.xz (neither xz nor python3's tarfile)"
fi
BIN=$ROOT/bin
# The base revision's trainers (gpu-kit.sh's BASE_BUILD_DIR), for the side-by-side step.
BASE_BIN=""
[[ -x $ROOT/base/bin/train_single_gpu ]] && BASE_BIN=$ROOT/base/bin

# --- glibc and libstdc++ ----------------------------------------------------------------------
have_glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')
need_glibc=$(manifest glibc_needs)
if [[ -n $have_glibc && -n $need_glibc && $(printf '%s\n%s\n' "$need_glibc" "$have_glibc" | sort -V | head -1) != "$need_glibc" ]]; then
  cannot_run "the kit needs glibc $need_glibc, this machine has $have_glibc (make the kit on an older system)"
fi
compat=""
need_cxx=$(manifest glibcxx_needs)
host_cxx=$(ldconfig -p 2>/dev/null | awk '$1 == "libstdc++.so.6" && $NF ~ /^\// {print $NF; exit}')
if [[ -n $need_cxx ]] && ! { [[ -n $host_cxx ]] && grep -aq "GLIBCXX_$need_cxx" "$host_cxx"; }; then
  compat=1
  log "this machine's libstdc++ (${host_cxx:-none}) lacks GLIBCXX_$need_cxx: using the kit's (compat/)"
fi

# --- CUDA libraries: the machine's own ---------------------------------------------------------
needs=$(manifest cuda_needs)
cuda_dirs=""
missing=""
if [[ -n $needs && $needs != none ]]; then
  # shellcheck disable=SC2086  # $needs is a list of sonames
  while read -r name dir; do
    if [[ $dir == - ]]; then missing+="$name "; continue; fi
    [[ ":$cuda_dirs:" == *":$dir:"* ]] || cuda_dirs=${cuda_dirs:+$cuda_dirs:}$dir
    log "found $name in $dir"
  done < <("$KIT/kit/cuda-libs.sh" $needs)
fi
kit_env "$ROOT" "$cuda_dirs" "$compat"
export DPSCALE_BIN_DIR=$BIN DPSCALE_MPIEXEC=$ROOT/bin/mpirun OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
# What this machine is, first: a run that cannot go on still says what it found.
"$KIT/kit/system.sh" "$BIN" > "$OUT/system.txt" 2>&3
{ echo; echo "## kit"; cat "$KIT/MANIFEST.txt"; } >> "$OUT/system.txt"

export BACKEND=cpu  # steps.sh reads it
if (( ! SELF )); then
  BACKEND=cuda
  # No GPU at all: nothing a rebuild could mend.
  if ! nvidia-smi -L 2>/dev/null | grep '^GPU ' > /dev/null; then
    cannot_run "no GPU here (nvidia-smi lists none); on a CPU machine run: run.sh OUTDIR --self-test"
  fi
  # Can the kit's programs use this GPU? One tiny run answers (libraries, driver, device).
  probe() {
    "$BIN/train_single_gpu" --backend cuda --model 784,16,10 --samples 256 --batch-size 128 --epochs 1 --quiet \
      > /dev/null 2> "$WORK/probe.err"
  }
  if [[ -n $missing ]] || ! probe; then
    why=${missing:+missing $missing}
    [[ -z $why ]] && why=$(tail -1 "$WORK/probe.err")
    log "the kit's programs cannot use this GPU ($why): rebuilding with this machine's nvcc"
    if run_step build 300 - "$KIT/kit/build-here.sh" "$KIT" "$ROOT" "$WORK/rebuild" &&
       [[ -x $WORK/rebuild/build/bin/train_single_gpu ]]; then
      BIN=$WORK/rebuild/build/bin
      export DPSCALE_BIN_DIR=$BIN
      # The base's carried trainers cannot run here either: no side-by-side step.
      [[ -n $BASE_BIN ]] && log "the base revision's trainers are not rebuilt: no side-by-side step"
      BASE_BIN=""
      { echo; echo "## rebuilt here (kit/build-here.sh): train_single_gpu's libraries"; ldd "$BIN/train_single_gpu"; } \
        >> "$OUT/system.txt" 2>&1
      # The rebuilt programs find CUDA's libraries through their RUNPATH (this machine's toolkit).
      probe || cannot_run "rebuilt, and still: $(tail -1 "$WORK/probe.err")"
    else
      cannot_run "$why; and the rebuild failed (run.log)"
    fi
  fi
fi

# --- the steps, in order of value (steps.sh: kit_plan) ----------------------------------------
print_plan
run_plan

summarize
log "done in $(elapsed)s: OUT/00-summary.md"
if cut -f2 "$WORK/steps.tsv" | grep -v '^ok$' > /dev/null; then exit 1; fi
exit 0
