#!/usr/bin/env bash
# stage3.sh — ZeRO stage 3 beside stage 2 and bucketed DDP at K = 2: large, AdamW, the
# workshop's PCIe 4 link dilated 200×, every mode on our ring (--allreduce ring: the same small
# chunk buffers in every mode, so the peak RSS compares the strategies, not Open MPI's
# temporaries of a call's size). Four runs a round — bucketed, stage 2, stage 3 without
# prefetch, stage 3 prefetching one layer — the order rotated each round. One RESULTS_JSON
# record per line of OUT. DPSCALE_HEAP_POLICY=off (comm/heap_policy.h): the policy keeps freed
# blocks resident for Open MPI's per-call temporaries, which our ring does not allocate; left on,
# start-up's freed host copies of the weights stay resident and the optimizer state reuses them,
# so the peak RSS would hide what a stage saves in state.
#
#   experiments/sharded/stage3.sh BUILD_DIR OUT.jsonl [ROUNDS=3]
#   python3 experiments/sharded/stage3.py OUT.jsonl
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: $0 BUILD_DIR OUT.jsonl [ROUNDS]" >&2; exit 2; }
BUILD=$1 OUT=$2 ROUNDS=${3:-3}
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || { echo "stage3: ROUNDS must be a positive integer, got '$ROUNDS'" >&2; exit 2; }
for exe in train_ddp_bucketed train_sharded; do
  [[ -x "$BUILD/bin/$exe" ]] || { echo "stage3: $BUILD/bin/$exe not built" >&2; exit 2; }
done
mpi=(mpirun --bind-to none -x DPSCALE_HEAP_POLICY=off -np 2)
mpirun --version 2>&1 | grep -q "Open MPI" && mpi+=(--allow-run-as-root --oversubscribe)
common=(--backend cpu --model large --samples 4096 --batch-size 1024 --epochs 2 --lr 0.001 --threads 1 --quiet
        --optimizer adamw --link pcie4 --link-dilation 200 --allreduce ring)
runs=("train_ddp_bucketed"
      "train_sharded --shard-stage 2"
      "train_sharded --shard-stage 3 --prefetch-units 0"
      "train_sharded --shard-stage 3 --prefetch-units 1")
: > "$OUT"
for ((r = 0; r < ROUNDS; r++)); do
  for ((i = 0; i < ${#runs[@]}; i++)); do
    read -r -a run <<< "${runs[(i + r) % ${#runs[@]}]}"
    "${mpi[@]}" "$BUILD/bin/${run[0]}" "${common[@]}" "${run[@]:1}" | sed -n 's/^RESULTS_JSON: //p' >> "$OUT"
  done
done
