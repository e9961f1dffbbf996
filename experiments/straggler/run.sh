#!/usr/bin/env bash
# run.sh — how often the straggler rule (trainers/diagnosis/straggler.h) names the slow
# rank and its cause, and how often it names one where none was injected (experiments/straggler/README.md).
#
#   experiments/straggler/run.sh BUILD OUT [N] [N_SMALL]
#
# Per world size K in $KS (default "2 4"): N runs (default 20) of each of clean, compute 10%,
# loader 10% and link 10% (--inject-delay RANK:10%:CAUSE: 10% of the slow rank's own step), and
# N_SMALL runs (default 10) of compute at each percent in $SMALL (default "5 7"), interleaved
# round by round so that the machine's load drifts over every condition alike. The slow rank
# turns with the round (round i: rank i mod K). One short bucketed run each: a 0.5 M-parameter
# MLP, 30 timed steps (the rule must answer within the first 50), the eth10 emulated link. Each
# run appends one line to OUT/runs.jsonl: the condition, the load average before it, and the
# record's straggler fields, its contended rank and run delay (CAUSES="link" CLEAN=0 runs only
# those; BUSY=N runs N busy loops `sh -c 'while :; do :; done'` at nice 0 beside every run). `table` prints the detection table of
# OUT/runs.jsonl:
#
#   experiments/straggler/run.sh table OUT
set -euo pipefail
cd "$(dirname "$0")/../.."

if [ "${1:-}" = "table" ]; then
  exec python3 experiments/straggler/table.py "${2:?OUT dir}/runs.jsonl"
fi

BUILD=${1:?BUILD dir}
OUT=${2:?OUT dir}
N=${3:-20}
N_SMALL=${4:-10}
KS=${KS:-2 4}
SMALL=${SMALL:-5 7}
mkdir -p "$OUT"
spinners=()
stop_spinners() { for p in "${spinners[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap stop_spinners EXIT
for _ in $(seq "${BUSY:-0}"); do
  nice -n 0 sh -c 'while :; do :; done' &
  spinners+=($!)
done
MPIRUN=(mpirun --oversubscribe --bind-to none)
[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
ARGS=(--backend cpu --model 784,512,256,10 --samples 32768 --batch-size 1024 --epochs 1 --max-steps 30
      --warmup-steps 3 --threads 1 --quiet --link eth10 --bucket-cap-mb 0.5)

run_one() {  # K CONDITION PCT CAUSE ROUND
  local k=$1 cond=$2 pct=$3 cause=$4 round=$5 inject=() rank=null load line
  if [ "$cond" != clean ]; then
    rank=$(( round % k ))
    inject=(--inject-delay "$rank:$pct%:$cause")
  fi
  load=$(cut -d' ' -f1 /proc/loadavg)
  line=$("${MPIRUN[@]}" -np "$k" "$BUILD/bin/train_ddp_bucketed" "${ARGS[@]}" "${inject[@]}" 2>&1 |
         sed -n 's/^RESULTS_JSON: //p') || true
  COND=$cond K=$k PCT=$pct CAUSE=$cause RANK=$rank LOAD=$load ROUND=$round LINE=$line BUSY=${BUSY:-0} \
    python3 - >>"$OUT/runs.jsonl" <<'PY'
import json, os
e = os.environ
out = {"condition": e["COND"], "world_size": int(e["K"]), "round": int(e["ROUND"]), "busy_loops": int(e["BUSY"]),
       "injected_rank": None if e["RANK"] == "null" else int(e["RANK"]),
       "injected_cause": None if e["COND"] == "clean" else e["CAUSE"],
       "injected_pct": None if e["COND"] == "clean" else float(e["PCT"]),
       "load1_before": float(e["LOAD"])}
try:
    r = json.loads(e["LINE"])
    out.update({k: r[k] for k in ("straggler_rank", "straggler_cause", "bottleneck", "diagnosis", "steps",
                                  "avg_epoch_s", "per_rank_compute_s", "per_rank_wait_s", "inject_delay",
                                  "version", "timestamp")})
    out.update({k: r.get(k) for k in ("contended_rank", "contended_cause", "run_delay_share",
                                      "per_rank_step_run_delay_s")})
    out["status"] = "ok"
except Exception as err:  # a run that printed no record: kept, counted as failed
    out["status"] = "failed"
    out["reason"] = str(err)[:200]
print(json.dumps(out))
PY
}

for ((round = 0; round < N; round++)); do
  for k in $KS; do
    [ "${CLEAN:-1}" = 1 ] && run_one "$k" clean 0 none "$round"
    for cause in ${CAUSES:-compute loader link}; do run_one "$k" "$cause-10" 10 "$cause" "$round"; done
    if ((round < N_SMALL)); then
      for pct in $SMALL; do run_one "$k" "compute-$pct" "$pct" compute "$round"; done
    fi
  done
  echo "round $((round + 1))/$N done $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
done
python3 experiments/straggler/table.py "$OUT/runs.jsonl"
