#!/usr/bin/env bash
# run.sh — which half of the heap policy (comm/heap_policy.cpp) cures the native
# all-reduce's large-message collapse: glibc's environment variables on the unchanged binary, with
# dpscale's own policy switched off (DPSCALE_HEAP_POLICY=off), against the policy itself. Rounds
# interleave the variants so a slow spell of a shared machine falls on all of them alike.
#
#   experiments/heap-policy/run.sh BUILD_DIR OUT.jsonl [ROUNDS=5]             bench_allreduce, native
#   experiments/heap-policy/run.sh --trainer BUILD_DIR OUT.jsonl [ROUNDS=3]   train_dp_naive's comm_s
#   python3 experiments/heap-policy/table.py OUT.jsonl                        the medians again
#
# Variants: defaults (glibc's), mmap_max_0 (MALLOC_MMAP_MAX_=0 alone), trim_2g
# (MALLOC_TRIM_THRESHOLD_=2 GiB alone), both, policy_on (dpscale's mallopt, no variables).
# OUT.jsonl: one line per (round, variant, size) with native busbw at K = 2; medians printed.
# --trainer: train_dp_naive --model large at K = 2 (4096 samples, one epoch, one warm-up step),
# whose comm thread allocates from a glibc thread arena: variants defaults, both, both_arena1
# (MALLOC_ARENA_MAX=1 too), policy_on, and our ring with the policy off and on; one line per
# (round, variant) holding the run's record; medians of comm_s printed (table.py).
set -euo pipefail
TRAINER=0
if [[ "${1:-}" == --trainer ]]; then TRAINER=1; shift; fi
[[ $# -ge 2 ]] || { echo "usage: $0 [--trainer] BUILD_DIR OUT.jsonl [ROUNDS]" >&2; exit 2; }
BUILD=$1 OUT=$2 ROUNDS=${3:-$((TRAINER ? 3 : 5))}
BIN="$BUILD/bin/bench_allreduce"
[[ "$TRAINER" == 1 ]] && BIN="$BUILD/bin/train_dp_naive"
[[ -x "$BIN" ]] || { echo "heap-ablation: $BIN not built" >&2; exit 2; }
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || { echo "heap-ablation: ROUNDS must be a positive integer, got '$ROUNDS'" >&2; exit 2; }
mpi=(mpirun --bind-to none -np 2)
mpirun --version 2>&1 | grep -q "Open MPI" && mpi+=(--allow-run-as-root --oversubscribe)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: > "$tmp/out.jsonl"

# The one table of variants: glibc's environment for each (the ring_ ones: the same, with our
# ring instead of the library's all-reduce).
off=(-x DPSCALE_HEAP_POLICY=off)
both=(-x MALLOC_MMAP_MAX_=0 -x MALLOC_TRIM_THRESHOLD_=2147483648)
set_env() {
  case ${1#ring_} in
    defaults)    env=("${off[@]}") ;;
    mmap_max_0)  env=("${off[@]}" -x MALLOC_MMAP_MAX_=0) ;;
    trim_2g)     env=("${off[@]}" -x MALLOC_TRIM_THRESHOLD_=2147483648) ;;
    both)        env=("${off[@]}" "${both[@]}") ;;
    both_arena1) env=("${off[@]}" "${both[@]}" -x MALLOC_ARENA_MAX=1) ;;
    policy_on)   env=() ;;
  esac
}
if [[ "$TRAINER" == 1 ]]; then
  variants=(defaults both both_arena1 policy_on ring_defaults ring_policy_on)
else
  variants=(defaults mmap_max_0 trim_2g both policy_on)
fi

for ((r = 0; r < ROUNDS; r++)); do
  for v in "${variants[@]}"; do
    set_env "$v"
    if [[ "$TRAINER" == 1 ]]; then
      algo=native
      [[ "$v" == ring_* ]] && algo=ring
      "${mpi[@]}" "${env[@]}" "$BIN" --backend cpu --model large --samples 4096 --epochs 1 --warmup-steps 1 \
        --allreduce "$algo" --quiet > "$tmp/run.txt" 2> "$tmp/err.txt" ||
        { echo "heap-ablation: round $r, $v failed:" >&2; cat "$tmp/err.txt" >&2; exit 1; }
    else
      "${mpi[@]}" "${env[@]}" "$BIN" -b 4M -e 64M -f 4 --algos native --benchmark_format=json > "$tmp/run.txt" 2>/dev/null
    fi
    # One line per trainer run (its record), or per size of a bench_allreduce run.
    python3 - "$TRAINER" "$r" "$v" "$tmp/run.txt" >> "$tmp/out.jsonl" <<'EOF'
import json, sys
trainer, r, v, path = sys.argv[1] == "1", int(sys.argv[2]), sys.argv[3], sys.argv[4]
load1 = float(open("/proc/loadavg").read().split()[0])
if trainer:
    line = next(l for l in open(path) if l.startswith("RESULTS_JSON: "))
    print(json.dumps({"round": r, "variant": v, "load1": load1, "record": json.loads(line[len("RESULTS_JSON: "):])}))
else:
    for b in json.load(open(path))["benchmarks"]:
        print(json.dumps({"round": r, "variant": v, "bytes": int(b["bytes"]), "busbw_GBps": round(b["busbw_GBps"], 4),
                          "load1": load1}))
EOF
  done
done
mv "$tmp/out.jsonl" "$OUT"
python3 "$(dirname "$0")/table.py" "$OUT"
