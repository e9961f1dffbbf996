#!/usr/bin/env bash
# gemm-rate.sh — the transformer's GEMMs inside its CPU training step against the same GEMMs
# alone in the same library (bench_step's step/<transformer>/... benchmarks), for gpt-tiny and the
# mid-size decoder in every GEMM library built in, in rounds that rotate which library goes
# first and alternate which model does; one JSON line per benchmark.
#
#   experiments/transformer/gemm-rate.sh BUILD_DIR OUT.jsonl [ROUNDS=3]
#   python3 experiments/transformer/table.py gemm-rate OUT.jsonl
#
# Per benchmark: bench_step's counters (step_ms, gemm_ms, alone_ms and in_place_ms,
# rate_over_alone and rate_over_in_place, their attention/dense split, gemm_over_step;
# bench/bench_step.cpp's header defines them), one BLAS thread, fp32, batch BATCH (16) and
# sequence SEQ (64), as vs-pytorch.sh, the CPU's model name and the machine's 1-minute load
# before the benchmark. It ends by printing table.py's table.
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: $0 BUILD_DIR OUT.jsonl [ROUNDS]" >&2; exit 2; }
BUILD=$1 OUT=$2 ROUNDS=${3:-3}
SEQ=${SEQ:-64} BATCH=${BATCH:-16}
MID=${MID:-gpt:layers=4,dim=256,heads=4,vocab=8192,context=128}
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PY=${PYTHON:-/usr/bin/python3}
[[ -x "$BUILD/bin/bench_step" ]] || { echo "gemm-rate: $BUILD/bin/bench_step not built" >&2; exit 2; }
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || { echo "gemm-rate: ROUNDS must be a positive integer, got '$ROUNDS'" >&2; exit 2; }
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
CPU=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
# The libraries this build has, in bench_step's own order (it lists what --gemm would take).
mapfile -t LIBS < <("$BUILD/bin/bench_step" --models=gpt-tiny --batch=1 --seq-len=1 --parts=none \
  --benchmark_list_tests=true 2>/dev/null | sed -n 's|.*/gemm:\([a-z]*\).*|\1|p')
((${#LIBS[@]} > 0)) || { echo "gemm-rate: bench_step lists no GEMM library" >&2; exit 2; }
: > "$OUT"
run() {  # MODEL ROUND LIB,LIB,...
  local load
  load=$(cut -d' ' -f1 /proc/loadavg)
  "$BUILD/bin/bench_step" --models="$1" --batch="$BATCH" --seq-len="$SEQ" --threads=1 --gemm="$3" --parts=none \
    --benchmark_format=json 2>/dev/null |
    "$PY" -c '
import json, sys
for b in json.load(sys.stdin)["benchmarks"]:
    b.update(model=sys.argv[1], round=int(sys.argv[2]), load1_before=float(sys.argv[3]), cpu_model=sys.argv[4],
             gemm_library=b["name"].split("/gemm:")[1].split("/")[0])
    print(json.dumps(b))' "$1" "$2" "$load" "$CPU" >> "$OUT"
}
for ((r = 1; r <= ROUNDS; r++)); do
  # Round r starts at library r-1 of the list: each library goes first in turn.
  order=("${LIBS[@]:$(((r - 1) % ${#LIBS[@]}))}" "${LIBS[@]:0:$(((r - 1) % ${#LIBS[@]}))}")
  libs=$(IFS=,; echo "${order[*]}")
  if ((r % 2)); then models=(gpt-tiny "$MID"); else models=("$MID" gpt-tiny); fi
  for m in "${models[@]}"; do run "$m" "$r" "$libs"; done
done
"$PY" "$HERE/experiments/transformer/table.py" gemm-rate "$OUT"
