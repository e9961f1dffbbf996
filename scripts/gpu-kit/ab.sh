#!/usr/bin/env bash
# ab.sh — the GPU kit's side-by-side step: the kit's trainers (new) against the base revision's
# (base/bin, carried when the kit was made with a BASE_BUILD_DIR: scripts/gpu-session.sh), on the
# same card, one point after the other and the two revisions back to back at each point (which
# one goes first alternates, so a drift of the machine hits both alike).
#
#   kit/ab.sh BASE_BIN NEW_BIN OUT_JSONL MPIRUN SELF(0|1)
#
# Points, most valuable first (a run its cap cuts short keeps what it finished):
#   large TF32: single, the three DP modes at K = 1, single again; single and bucketed again
#     with --finite-check-every 0 (what the per-step finite check costs: with it against without)
#   xlarge TF32, large fp32, xlarge fp32: single, the three DP modes at K = 1, single again
# Single opens and closes each group of DP modes, so the summary sets each DP run against the
# single runs on both sides of it: a machine that drifts within a group (warming up, a neighbour
# starting) moves the reference with it rather than into the DP modes' ratios.
# at the workshop's single-GPU settings (32768 samples, batch 1024, lr 0.01, 5 epochs). The
# self-test (SELF=1) runs the same points on the CPU with two tiny models.
# DPSCALE_AB_ONLY=REGEX keeps the points whose line ("tf32 large single 0") matches;
# DPSCALE_AB_ROUNDS=N runs the points N times over (default 1), round after round.
# Exit status 1 when any run failed (each one's line says why), 2 for bad arguments, else 0.
# One JSON line per run, appended to OUT_JSONL as it ends:
#   {"rev": "base"|"new", "precision": "fp32"|"tf32", "model": ..., "mode": ..., "finite_check_every": N,
#    "record": {the trainer's RESULTS_JSON}}      or ..., "status": "failed", "reason": "..."}
set -uo pipefail
BASE_BIN=$1 NEW_BIN=$2 OUT=$3 MPIRUN=$4 SELF=$5

backend=cuda
declare -A MODEL=([large]=large [xlarge]=xlarge)
common=(--samples 32768 --batch-size 1024 --epochs 5 --lr 0.01 --quiet)
if (( SELF )); then
  backend=cpu
  MODEL=([large]=784,64,32,10 [xlarge]=784,96,48,10)
  common=(--samples 2048 --batch-size 256 --epochs 2 --warmup-steps 1 --lr 0.01 --quiet)
fi
declare -A EXE=([single]=train_single_gpu [naive]=train_dp_naive [interleaved]=train_dp_interleaved
                [bucketed]=train_ddp_bucketed)

# points: PRECISION MODEL MODE CHECK_EVERY
points() {
  for p in "tf32 large" "tf32 xlarge" "fp32 large" "fp32 xlarge"; do
    for mode in single naive interleaved bucketed single; do echo "$p $mode 1"; done
    if [[ $p == "tf32 large" ]]; then echo "$p single 0"; echo "$p bucketed 0"; fi
  done
}

# run REV PRECISION MODEL MODE CHECK: one trainer run, one line.
run() {
  local rev=$1 precision=$2 model=$3 mode=$4 check=$5
  local bin=$NEW_BIN
  [[ $rev == base ]] && bin=$BASE_BIN
  local args=(--backend "$backend" --model "${MODEL[$model]}" "${common[@]}")
  [[ $precision == tf32 ]] && args+=(--tf32)
  [[ $check != 1 ]] && args+=(--finite-check-every "$check")
  local argv=("$bin/${EXE[$mode]}" "${args[@]}")
  [[ $mode != single ]] && argv=("$MPIRUN" --allow-run-as-root --oversubscribe --bind-to none -np 1 "${argv[@]}")
  local out err rc=0
  err=$(mktemp)
  out=$("${argv[@]}" < /dev/null 2> "$err") || rc=$?
  local head
  head=$(printf '{"rev": "%s", "precision": "%s", "model": "%s", "mode": "%s", "finite_check_every": %s' \
    "$rev" "$precision" "$model" "$mode" "$check")
  local record
  record=$(printf '%s\n' "$out" | sed -n 's/^RESULTS_JSON: //p' | head -1)
  if (( rc == 0 )) && [[ -n $record ]]; then
    printf '%s, "record": %s}\n' "$head" "$record" >> "$OUT"
  else
    local why
    why=$(grep -av '^#' "$err" | tail -1 | tr -d '"\\' | tr -c '[:print:]' ' ' | cut -c1-300)
    printf '%s, "status": "failed", "reason": "exit %s: %s"}\n' "$head" "$rc" "$why" >> "$OUT"
    failed=$((failed + 1))
  fi
  echo "ab: $rev $precision $model $mode check=$check: exit $rc" >&2
  rm -f "$err"
}

[[ -x $BASE_BIN/train_single_gpu ]] || { echo "ab.sh: no base trainers in $BASE_BIN" >&2; exit 2; }
n=0 failed=0
for (( round = 0; round < ${DPSCALE_AB_ROUNDS:-1}; ++round )); do
  while read -r precision model mode check; do
    if (( n++ % 2 == 0 )); then order=(base new); else order=(new base); fi
    for rev in "${order[@]}"; do run "$rev" "$precision" "$model" "$mode" "$check"; done
  done < <(points | grep -E "${DPSCALE_AB_ONLY:-.}")
done
# A run that failed fails the step (its line in OUT_JSONL says why), after every point has run.
(( failed == 0 )) || { echo "ab.sh: $failed run(s) failed (OUT_JSONL has each reason)" >&2; exit 1; }
