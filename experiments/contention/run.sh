#!/usr/bin/env bash
# run.sh — what a run's ranks lose to a busy neighbour (their run delay:
# trainers/diagnosis/contention.h) and how the disturbance rule (harness/results/machine_state.h)
# classifies the runs: idle against one and two busy loops (`sh -c 'while :; do :; done'`, nice 0)
# beside the sweep, at the sweeps' nice values in $NICES (default "-20 0": CI's and the default).
#
#   experiments/contention/run.sh BUILD OUT [ROUNDS]
#   experiments/contention/run.sh table OUT
#
# Per round, every (condition, nice) cell runs one `dpscale sweep CONFIG --repeats 1
# --disturbed-reruns 0` (default configs/ci.json: single, then naive, interleaved and bucketed at
# K = 2) into OUT/runs/COND.nNICE.rROUND.jsonl, cells in turn so that the machine's drift falls on
# every condition alike (the sweeps' logs: OUT/logs/, not kept). The sweep records each run's verdict (`system.state.disturbed`); `table`
# prints, per cell and mode, the run delay share per rank, the run's share, and how many runs
# the rule called disturbed, beside the machine-state rule it replaced (recomputed from the same
# lines: others > 0.25 CPU or the probe 30% below the median probe of all lines).
# Environment: CONFIG, CONDITIONS (default "idle busy1 busy2"), NICES.
set -euo pipefail
cd "$(dirname "$0")/../.."

if [ "${1:-}" = "table" ]; then
  exec /usr/bin/python3 experiments/contention/table.py "${2:?OUT dir}/runs"
fi

BUILD=${1:?BUILD dir}
OUT=${2:?OUT dir}
ROUNDS=${3:-3}
CONFIG=${CONFIG:-configs/ci.json}
CONDITIONS=${CONDITIONS:-idle busy1 busy2}
NICES=${NICES:--20 0}
mkdir -p "$OUT/runs" "$OUT/logs"  # logs: the sweeps' stderr, not kept

spinners=()
stop_spinners() { for p in "${spinners[@]}"; do kill "$p" 2>/dev/null || true; done; spinners=(); }
trap stop_spinners EXIT
start_spinners() {
  for _ in $(seq "$1"); do
    nice -n 0 sh -c 'while :; do :; done' &
    spinners+=($!)
  done
}

for ((round = 1; round <= ROUNDS; round++)); do
  for cond in $CONDITIONS; do
    for nice in $NICES; do
      case "$cond" in
        idle) ;;
        busy1) start_spinners 1 ;;
        busy2) start_spinners 2 ;;
        *) echo "contention-experiment: unknown condition '$cond'" >&2; exit 2 ;;
      esac
      out="$OUT/runs/$cond.n$nice.r$round.jsonl"
      rm -f "$out"
      "$BUILD/bin/dpscale" sweep "$CONFIG" --out "$out" --repeats 1 --nice "$nice" --disturbed-reruns 0 \
        --bin-dir "$BUILD/bin" >/dev/null 2>"$OUT/logs/$cond.n$nice.r$round.log" || true
      stop_spinners
      echo "round $round/$ROUNDS $cond nice $nice: $(grep -c '"ok"' "$out" 2>/dev/null || echo 0) ok, load $(cut -d' ' -f1 /proc/loadavg)" >&2
    done
  done
done
/usr/bin/python3 experiments/contention/table.py "$OUT/runs"
