#!/usr/bin/env bash
# triad.sh — the mid-size transformer's overlap at K = 2: interleaved and bucketed (caps 4 and
# 25 MiB) with the exposure triad (--triad TRIAD, default 4) on the emulated link at a fixed
# dilation of 100, so the runs' comm times compare (the sweep's auto dilation measures F per
# run). Rounds alternate the order (interleaved first, then last). One RESULTS_JSON record per
# line of OUT.
#
#   [TRIAD=4] experiments/transformer/triad.sh BUILD_DIR OUT.jsonl [ROUNDS=2]
#   python3 experiments/transformer/table.py triad OUT.jsonl
# TRIAD: the steps of each triad phase (--triad): the phases' noise falls with it, and at 25 MiB
# the comm the triad must resolve is a fraction of the compute's run-to-run spread.
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: $0 BUILD_DIR OUT.jsonl [ROUNDS]" >&2; exit 2; }
BUILD=$1 OUT=$2 ROUNDS=${3:-2} TRIAD=${TRIAD:-4}
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || { echo "triad: ROUNDS must be a positive integer, got '$ROUNDS'" >&2; exit 2; }
[[ "$TRIAD" =~ ^[1-9][0-9]*$ ]] || { echo "triad: TRIAD must be a positive integer, got '$TRIAD'" >&2; exit 2; }
for exe in train_dp_interleaved train_ddp_bucketed; do
  [[ -x "$BUILD/bin/$exe" ]] || { echo "triad: $BUILD/bin/$exe not built" >&2; exit 2; }
done
mpi=(mpirun --bind-to none -np 2)
mpirun --version 2>&1 | grep -q "Open MPI" && mpi+=(--allow-run-as-root --oversubscribe)
common=(--backend cpu --model gpt:layers=4,dim=256,heads=4,vocab=8192,context=128 --seq-len 64 --batch-size 16
        --samples 256 --epochs 1 --max-steps 8 --lr 0.05 --threads 1 --quiet --link 50:300 --link-dilation 100
        --triad "$TRIAD")
run() { "${mpi[@]}" "$BUILD/bin/$1" "${common[@]}" "${@:2}" | sed -n 's/^RESULTS_JSON: //p' >> "$OUT"; }
: > "$OUT"
for ((r = 1; r <= ROUNDS; r++)); do
  ((r % 2)) && run train_dp_interleaved
  run train_ddp_bucketed --bucket-cap-mb 4
  run train_ddp_bucketed --bucket-cap-mb 25
  ((r % 2)) || run train_dp_interleaved
done
