#!/usr/bin/env bash
# gpu-session.sh — the one script of a session that is lent a GPU (one H100 or H200, about 15
# minutes of device time): the GPU kit, with this build's programs and the base revision's
# trainers side by side on the same card, into one folder named after the card.
#
#   1. here, on the build machine (no GPU needed; minutes, mostly compiling the base):
#        scripts/gpu-session.sh prepare [BASE_REV]
#      builds BASE_REV's four trainers into build-base/ (from `git archive`, so nothing of the
#      work tree changes) and the kit into build-kit/ from build/ (CUDA on) and build-base/;
#      then runs the kit's CPU self-test once. Both folders are ignored by git.
#   2. on the GPU machine, from the repository root, with build-kit/ carried there:
#        scripts/gpu-session.sh run build-kit OUT [--pack]
#      runs build-kit/run.sh into OUT/<card>/ (e.g. OUT/h100-80gb-hbm3/): the kit's 14 files,
#      00-summary.md first, ready to commit as docs/gpu/<card>/. --pack leaves two files instead,
#      OUT/<card>.tar.gz (that folder) and OUT/<card>-summary.md, for a transport that brings back
#      only a few files. Budget DPSCALE_KIT_BUDGET_S (default here 420 s); to rerun some steps
#      into a new folder:
#        DPSCALE_KIT_ONLY='^ab$|^bench:' scripts/gpu-session.sh run build-kit OUT2
#      The kit's copy of this script (build-kit/kit/gpu-session.sh) runs the same from the kit
#      alone, where the repository there is another revision.
#
# BASE_REV defaults to kDefaultBase below: the last revision whose forward added the bias and the
# ReLU in a pass of its own after each GEMM (since then cuBLASLt's epilogue does it: models/cuda/
# cuda_lt_linear.h). a0f2802 is the last one whose finite check ran in passes of its own.
#
# The device's transport may bring back only a few files: run with --pack there.
#
# Exit status: prepare 0 made; run: the kit's (0 every step ok, 1 a step failed or ran out of
# time, 3 the programs cannot run here); 2 bad arguments.
set -euo pipefail
kDefaultBase=74c065d

die() { echo "gpu-session.sh: $*" >&2; exit 2; }
ROOT=$(cd "$(dirname "$0")/.." && pwd)
(( $# >= 1 )) || die "usage: gpu-session.sh prepare [BASE_REV] | run KIT OUT"

case $1 in
  prepare)
    (( $# <= 2 )) || die "usage: gpu-session.sh prepare [BASE_REV]"
    rev=${2:-$kDefaultBase}
    git -C "$ROOT" rev-parse --verify -q "$rev^{commit}" > /dev/null || die "no revision '$rev' in this repository"
    [[ -f $ROOT/build/CMakeCache.txt ]] ||
      die "no build/: cmake -S . -B build -DCMAKE_BUILD_TYPE=Release (a CUDA toolkit must be found)"
    # Configured again: the records' version (git describe) is fixed when CMake configures.
    cmake -S "$ROOT" -B "$ROOT/build" > /dev/null
    # Every program the kit carries, built from this tree (one left stale would ship old code).
    mapfile -t programs < <("$ROOT/scripts/gpu-kit.sh" --programs)
    cmake --build "$ROOT/build" -j "$(nproc)" --target "${programs[@]}"
    objdump -p "$ROOT/build/bin/train_single_gpu" | grep 'NEEDED *libcudart' > /dev/null ||
      die "build/ has no CUDA backend (no CUDA toolkit found at configure time)"
    B=$ROOT/build-base
    short=$(git -C "$ROOT" rev-parse --short "$rev")
    # A fresh build directory every time: git archive stamps every file with the commit's time, so
    # over objects built after that time (an earlier prepare of another revision) make would think
    # them current and link two revisions' objects together (trainers that crash). A compiler
    # cache keeps the full build cheap.
    rm -rf "$B"
    mkdir -p "$B/src"
    git -C "$ROOT" archive "$rev" | tar -x -C "$B/src"
    # A compiler cache, if any, comes in through CMake's own CMAKE_<LANG>_COMPILER_LAUNCHER variables.
    cmake -S "$B/src" -B "$B" -DCMAKE_BUILD_TYPE=Release -DDPSCALE_VERSION="$short" > "$B/configure.log"
    cmake --build "$B" -j "$(nproc)" --target train_single_gpu train_dp_naive train_dp_interleaved train_ddp_bucketed
    "$ROOT/scripts/gpu-kit.sh" "$ROOT/build-kit" "$ROOT/build" "$B"
    rm -rf "$ROOT/build-kit-selftest"
    "$ROOT/build-kit/run.sh" "$ROOT/build-kit-selftest" --self-test > /dev/null ||
      { echo "gpu-session.sh: the kit's self-test failed: build-kit-selftest/00-summary.md" >&2; exit 1; }
    echo "gpu-session.sh: build-kit/ is ready (base $short); on the GPU machine: scripts/gpu-session.sh run build-kit OUT" >&2
    ;;
  run)
    (( $# == 3 || $# == 4 )) || die "usage: gpu-session.sh run KIT OUT [--pack]"
    KIT=$2 OUT=$3 pack=0
    if (( $# == 4 )); then [[ $4 == --pack ]] || die "unknown argument '$4' (--pack)"; pack=1; fi
    [[ -x $KIT/run.sh ]] || die "$KIT is not a kit (scripts/gpu-session.sh prepare makes build-kit/)"
    name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || true)
    [[ -n $name ]] || die "no GPU here (nvidia-smi names none)"
    # "NVIDIA H100 80GB HBM3" -> h100-80gb-hbm3
    card=$(printf '%s' "$name" | tr 'A-Z' 'a-z' | sed -e 's/^nvidia //' -e 's/[^a-z0-9]\{1,\}/-/g' -e 's/^-//' -e 's/-$//')
    mkdir -p "$OUT"
    export DPSCALE_KIT_BUDGET_S=${DPSCALE_KIT_BUDGET_S:-420}
    echo "gpu-session.sh: $name -> $OUT/$card (budget ${DPSCALE_KIT_BUDGET_S}s)" >&2
    if (( ! pack )); then exec "$KIT/run.sh" "$OUT/$card"; fi
    rc=0
    stage=$(mktemp -d "${TMPDIR:-/tmp}/dpscale-session.XXXXXX")
    "$KIT/run.sh" "$stage/$card" || rc=$?
    tar -czf "$OUT/$card.tar.gz" -C "$stage" "$card"
    cp "$stage/$card/00-summary.md" "$OUT/$card-summary.md" 2>/dev/null || true
    rm -rf "$stage"
    exit "$rc"
    ;;
  *) die "unknown command '$1' (prepare, run)" ;;
esac
