#!/usr/bin/env bash
# vs-pytorch.sh — the transformer's CPU training step, dpscale (train_single_gpu) against
# PyTorch (bench/torch_gpt_peer.py) on the same model, batch and sequence length, one thread, fp32,
# in interleaved rounds (which framework goes first alternates), one JSON line per run.
#
#   experiments/transformer/vs-pytorch.sh BUILD_DIR OUT.jsonl [ROUNDS=3]
#   python3 experiments/transformer/table.py vs-pytorch OUT.jsonl
#
# Per round and model (gpt-tiny; MID, default gpt:layers=4,dim=256,heads=4,vocab=8192,context=128):
# dpscale's step = its epoch time / steps per epoch (STEPS steps after 3 warm-up steps, --gemm
# auto), PyTorch's the median of STEPS timed steps after 3 warm-up steps. SEQ (64) and BATCH (16).
# It ends by printing table.py's table: per model the median step of each and dpscale's speed-up.
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: $0 BUILD_DIR OUT.jsonl [ROUNDS]" >&2; exit 2; }
BUILD=$1 OUT=$2 ROUNDS=${3:-3}
SEQ=${SEQ:-64} BATCH=${BATCH:-16} STEPS=${STEPS:-20}
MID=${MID:-gpt:layers=4,dim=256,heads=4,vocab=8192,context=128}
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PY=${PYTHON:-/usr/bin/python3}
[[ -x "$BUILD/bin/train_single_gpu" ]] || { echo "vs-pytorch: $BUILD/bin/train_single_gpu not built" >&2; exit 2; }
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || { echo "vs-pytorch: ROUNDS must be a positive integer, got '$ROUNDS'" >&2; exit 2; }
"$PY" -c "import torch" 2>/dev/null || { echo "vs-pytorch: $PY cannot import torch" >&2; exit 2; }
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
: > "$OUT"
ours() {
  local line
  line=$("$BUILD/bin/train_single_gpu" --backend cpu --model "$1" --seq-len "$SEQ" --batch-size "$BATCH" \
    --samples $((BATCH * STEPS)) --epochs 1 --lr 0.05 --quiet | grep '^RESULTS_JSON: ' | sed 's/^RESULTS_JSON: //')
  "$PY" -c 'import json,sys; r=json.loads(sys.argv[1]); print(json.dumps({"framework":"dpscale","model":sys.argv[2],"round":int(sys.argv[3]),"step_s":r["avg_epoch_s"]/r["steps_per_epoch"],"gemm_library":r["gemm_library"],"tokens_per_s":r["tokens_per_s"]}))' "$line" "$1" "$2" >> "$OUT"
}
theirs() {
  "$PY" "$HERE/bench/torch_gpt_peer.py" --model "$1" --seq-len "$SEQ" --batch-size "$BATCH" --steps "$STEPS" |
    grep '^TORCH_JSON: ' | sed 's/^TORCH_JSON: //' |
    "$PY" -c 'import json,sys; r=json.loads(sys.stdin.read()); r["round"]=int(sys.argv[1]); print(json.dumps(r))' "$2" >> "$OUT"
}
for ((r = 1; r <= ROUNDS; r++)); do
  for m in gpt-tiny "$MID"; do
    if ((r % 2)); then ours "$m" "$r"; theirs "$m" "$r"; else theirs "$m" "$r"; ours "$m" "$r"; fi
  done
done
"$PY" "$HERE/experiments/transformer/table.py" vs-pytorch "$OUT"
