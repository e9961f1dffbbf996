#!/usr/bin/env bash
# contended.sh — how often the straggler rule calls a rank that shares its CPU with busy loops
# `contended`, and a rank that also does more work a straggler, where compute is a clock's
# interval (two BLAS threads: the wait for a CPU is inside it) (experiments/straggler/README.md,
# "Two BLAS threads beside busy loops").
#
#   experiments/straggler/contended.sh BUILD OUT [N]
#
# K = 2, rank 0 bound to the first CPU this shell may use and rank 1 to the second, --threads 2.
# Per round, interleaved: clean (no loop), then for L = 1 and 2 busy loops pinned to rank 1's CPU
# (`sh -c 'while :; do :; done'`, nice 0) the loops alone (`busy<L>`: the machine's) and the loops
# with --inject-delay 1:100 (`busy<L>-compute100`: rank 1 also computes 100 ms more per step, its
# own). N rounds (default 20). The run is tests/trainers/test_dp_contended.cpp's: a 0.5 M-parameter
# MLP, 12 timed steps, eth10, OpenBLAS. Each run appends one line to OUT/runs.jsonl; `table`
# prints the label counts:
#
#   experiments/straggler/contended.sh table OUT
set -euo pipefail
cd "$(dirname "$0")/../.."

if [ "${1:-}" = "table" ]; then
  exec python3 experiments/straggler/contended_table.py "${2:?OUT dir}/runs.jsonl"
fi

BUILD=${1:?BUILD dir}
OUT=${2:?OUT dir}
N=${3:-20}
mkdir -p "$OUT"
read -r CPU0 CPU1 < <(python3 -c 'import os; c = sorted(os.sched_getaffinity(0)); print(c[0], c[1])')
spinners=()
stop_spinners() { for p in "${spinners[@]}"; do kill "$p" 2>/dev/null || true; done; spinners=(); }
trap stop_spinners EXIT
MPIRUN=(mpirun -np 2 --cpu-list "$CPU0,$CPU1" --bind-to cpu-list:ordered)
[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
ARGS=(--backend cpu --model 784,512,256,10 --samples 16384 --batch-size 1024 --epochs 1 --max-steps 12
      --warmup-steps 2 --quiet --link eth10 --bucket-cap-mb 0.5 --gemm openblas --threads 2)

run_one() {  # CONDITION LOOPS ROUND [trainer options...]
  local cond=$1 loops=$2 round=$3 load line
  shift 3
  for _ in $(seq "$loops"); do
    taskset -c "$CPU1" nice -n 0 sh -c 'while :; do :; done' &
    spinners+=($!)
  done
  load=$(cut -d' ' -f1 /proc/loadavg)
  line=$("${MPIRUN[@]}" "$BUILD/bin/train_ddp_bucketed" "${ARGS[@]}" "$@" 2>&1 | sed -n 's/^RESULTS_JSON: //p') || true
  stop_spinners
  COND=$cond LOOPS=$loops LOAD=$load ROUND=$round LINE=$line python3 - >>"$OUT/runs.jsonl" <<'PY'
import json, os
e = os.environ
out = {"condition": e["COND"], "busy_loops": int(e["LOOPS"]), "round": int(e["ROUND"]),
       "load1_before": float(e["LOAD"])}
try:
    r = json.loads(e["LINE"])
    out.update({k: r.get(k) for k in ("bottleneck", "straggler_rank", "straggler_cause", "contended_rank",
                                      "contended_cause", "diagnosis", "avg_epoch_s", "steps",
                                      "per_rank_compute_s", "per_rank_step_run_delay_s", "inject_delay",
                                      "version", "timestamp")})
    out["status"] = "ok"
except Exception as err:  # a run that printed no record: kept, counted as failed
    out["status"] = "failed"
    out["reason"] = str(err)[:200]
print(json.dumps(out))
PY
}

for ((round = 0; round < N; round++)); do
  run_one clean 0 "$round"
  for loops in 1 2; do
    run_one "busy$loops" "$loops" "$round"
    run_one "busy$loops-compute100" "$loops" "$round" --inject-delay 1:100
  done
  echo "round $((round + 1))/$N done $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
done
python3 experiments/straggler/contended_table.py "$OUT/runs.jsonl"
