#!/usr/bin/env bash
# run.sh — dpscale's CPU backend against PyTorch's CPU trainers (bench/torch_peer.py,
# the workshop's code without the GPU) and against its own GEMM libraries' rate, side by side in
# one run. Rounds interleave everything (and swap which framework goes first), so a busy spell of
# a shared machine falls on both alike; table.py prints the medians and ratios.
#
#   experiments/pytorch-peer/run.sh BUILD_DIR OUT.jsonl [ROUNDS=3]
#   python3 experiments/pytorch-peer/table.py OUT.jsonl
#
# Per round: single device, small, medium and large, dpscale (--gemm auto, the default) and
# PyTorch; at K = 2, small and medium, dpscale's naive, interleaved and bucketed and PyTorch's
# naive, interleaved and DDP (the best mode of each is compared); bench_step on the three models in
# every GEMM library built in (a full step against its GEMMs alone: the step's rate against the
# best library's sgemm rate on the same shapes). One thread per rank everywhere. SAMPLES (8192)
# and EPOCHS (2) set the trainers' work; both frameworks train the same steps at batch 1024.
# The environment is left as it is (OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE included); each line
# records OPENBLAS_CORETYPE and the 1-minute load average before the run, so a loaded machine
# shows. UNSET_CORETYPE=1 unsets OPENBLAS_CORETYPE for this script's runs only.
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: $0 BUILD_DIR OUT.jsonl [ROUNDS]" >&2; exit 2; }
BUILD=$1 OUT=$2 ROUNDS=${3:-3}
SAMPLES=${SAMPLES:-8192} EPOCHS=${EPOCHS:-2}
BIN="$BUILD/bin"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PY=${PYTHON:-/usr/bin/python3}  # Debian's python3-torch
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || { echo "gemm-vs-pytorch: ROUNDS must be a positive integer, got '$ROUNDS'" >&2; exit 2; }
for exe in train_single_gpu train_dp_naive train_dp_interleaved train_ddp_bucketed bench_step; do
  [[ -x "$BIN/$exe" ]] || { echo "gemm-vs-pytorch: $BIN/$exe not built (run: cmake --build $BUILD)" >&2; exit 2; }
done
"$PY" -c "import torch" 2>/dev/null || { echo "gemm-vs-pytorch: $PY cannot import torch (install python3-torch)" >&2; exit 2; }
[[ "${UNSET_CORETYPE:-0}" == 1 ]] && unset OPENBLAS_CORETYPE
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
mpi=(mpirun --bind-to none -np 2)
mpirun --version 2>&1 | grep -q "Open MPI" && mpi+=(--allow-run-as-root --oversubscribe)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: > "$tmp/out.jsonl"
common=(--samples "$SAMPLES" --batch-size 1024 --epochs "$EPOCHS" --lr 0.01)

# note ROUND WHAT JSON: one line of OUT with the round, what ran, the load before it and the pin.
note() {
  "$PY" - "$1" "$2" "$3" "$load" "${OPENBLAS_CORETYPE:-}" >> "$tmp/out.jsonl" <<'PYEOF'
import json, sys
r, what, rec, load, pin = sys.argv[1:]
print(json.dumps({"round": int(r), "what": what, "load1_before": float(load), "openblas_coretype": pin,
                  "record": json.loads(rec)}))
PYEOF
}
dpscale() {  # dpscale ROUND WHAT K EXE ARGS...
  local r=$1 what=$2 k=$3 exe=$4
  shift 4
  load=$(cut -d' ' -f1 /proc/loadavg)
  local cmd=("$BIN/$exe" --backend cpu "$@" "${common[@]}" --quiet)
  (( k > 1 )) && cmd=("${mpi[@]}" "${cmd[@]}")
  "${cmd[@]}" > "$tmp/run.txt" 2> "$tmp/err.txt" || { cat "$tmp/err.txt" >&2; echo "gemm-vs-pytorch: $what failed" >&2; exit 1; }
  note "$r" "$what" "$(sed -n 's/^RESULTS_JSON: //p' "$tmp/run.txt")"
}
torch() {  # torch ROUND WHAT K MODEL MODE
  load=$(cut -d' ' -f1 /proc/loadavg)
  "$PY" "$HERE/bench/torch_peer.py" --model "$4" --mode "$5" --world-size "$3" "${common[@]}" > "$tmp/run.txt" \
    2> "$tmp/err.txt" || { cat "$tmp/err.txt" >&2; echo "gemm-vs-pytorch: $2 failed" >&2; exit 1; }
  note "$1" "$2" "$(sed -n 's/^TORCH_JSON: //p' "$tmp/run.txt")"
}

echo "# gemm-vs-pytorch: $ROUNDS rounds on $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(getconf _NPROCESSORS_ONLN) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for ((r = 1; r <= ROUNDS; r++)); do
  for model in small medium large; do
    echo "# round $r: single $model" >&2
    if (( r % 2 )); then
      dpscale "$r" "dpscale single $model" 1 train_single_gpu --model "$model"
      torch "$r" "pytorch single $model" 1 "$model" single
    else
      torch "$r" "pytorch single $model" 1 "$model" single
      dpscale "$r" "dpscale single $model" 1 train_single_gpu --model "$model"
    fi
  done
  for model in small medium; do
    echo "# round $r: K = 2, $model" >&2
    for i in 0 1 2; do
      dmode=(naive interleaved bucketed) tmode=(naive interleaved ddp) dexe=(train_dp_naive train_dp_interleaved train_ddp_bucketed)
      if (( (r + i) % 2 )); then
        dpscale "$r" "dpscale ${dmode[$i]} $model" 2 "${dexe[$i]}" --model "$model"
        torch "$r" "pytorch ${tmode[$i]} $model" 2 "$model" "${tmode[$i]}"
      else
        torch "$r" "pytorch ${tmode[$i]} $model" 2 "$model" "${tmode[$i]}"
        dpscale "$r" "dpscale ${dmode[$i]} $model" 2 "${dexe[$i]}" --model "$model"
      fi
    done
  done
  echo "# round $r: bench_step" >&2
  load=$(cut -d' ' -f1 /proc/loadavg)
  "$BIN/bench_step" --models=small,medium,large --benchmark_format=json > "$tmp/step.json" 2> "$tmp/err.txt" \
    || { cat "$tmp/err.txt" >&2; exit 1; }
  note "$r" "bench_step" "$(cat "$tmp/step.json")"
done
cp "$tmp/out.jsonl" "$OUT"
"$PY" "$HERE/experiments/pytorch-peer/table.py" "$OUT"
