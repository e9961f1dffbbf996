#!/usr/bin/env bash
# run.sh — how far a run's overlap % (--triad, trainers/diagnosis/triad.h) scatters
# from one run to the next on this machine, for two builds side by side: A's and B's
# train_dp_interleaved alternate (A B, then B A, ...) on test_dp_diagnosis's overlap set-up
# (784,16,256,256,256,256,10 at K = 2 under mpirun, --link 0:100 --link-dilation auto:100, where
# communication is about 60 % of compute), each run's record one line appended to OUT/runs.jsonl with
# "build": "A" | "B". `table` prints, per build, the overlap's median, quartiles and range, how
# many runs fell below 30 % (the test's bound), and the median phase times. Each line keeps the
# record's triad fields, its version, mode, K, dilation, epoch time and run delay.
#
#   experiments/triad/run.sh A_BIN B_BIN OUT [ROUNDS [N]]   (ROUNDS pairs of runs, default 15; --triad N, default 15)
#   experiments/triad/run.sh table OUT
set -euo pipefail
cd "$(dirname "$0")/../.."

if [ "${1:-}" = "table" ]; then
  [[ $# -eq 2 && -f $2/runs.jsonl ]] || { echo "triad-experiment.sh: table OUT: no OUT/runs.jsonl" >&2; exit 2; }
  exec /usr/bin/python3 - "$2/runs.jsonl" <<'EOF'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
def q(v, p):  # the p-quantile by rank (nearest, no interpolation)
    v = sorted(v); return v[min(len(v) - 1, int(p * len(v)))]
print("| build | version | runs | overlap median | quartiles | range | runs < 30 % | full (ms) | compute-only (ms) | comm-only (ms) |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for b in ("A", "B"):
    rs = [r for r in runs if r["build"] == b]
    if not rs:
        continue
    o = [r["record"]["overlap_pct"] for r in rs]
    ms = lambda k: 1e3 * statistics.median(r["record"][k] for r in rs)
    print(f"| {b} | {rs[0]['record'].get('version', '?')} | {len(rs)} | {statistics.median(o):.1f} % | "
          f"{q(o, 0.25):.1f}–{q(o, 0.75):.1f} % | {min(o):.1f}–{max(o):.1f} % | {sum(x < 30 for x in o)} | "
          f"{ms('triad_step_s'):.2f} | {ms('compute_only_step_s'):.2f} | {ms('comm_only_step_s'):.2f} |")
EOF
fi

die() { echo "triad-experiment.sh: $*" >&2; exit 2; }
(( $# >= 3 && $# <= 5 )) || die "usage: experiments/triad/run.sh A_BIN B_BIN OUT [ROUNDS [N]] | table OUT"
for d in "$1" "$2"; do [[ -x $d/train_dp_interleaved ]] || die "no train_dp_interleaved in '$d' (a build's bin/)"; done
A=$(cd "$1" && pwd) B=$(cd "$2" && pwd)
OUT=$3
ROUNDS=${4:-15} N=${5:-15}
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive whole number (got '$ROUNDS')"
[[ $N =~ ^[1-9][0-9]*$ ]] || die "N (--triad) must be a positive whole number (got '$N')"
mkdir -p "$OUT"
args=(--backend cpu --model 784,16,256,256,256,256,10 --samples 8192 --batch-size 2048 --epochs 1
      --warmup-steps 1 --quiet --link 0:100 --link-dilation auto:100 --triad "$N")
for (( r = 0; r < ROUNDS; ++r )); do
  if (( r % 2 == 0 )); then order=(A B); else order=(B A); fi
  for b in "${order[@]}"; do
    bin=$A; [[ $b == B ]] && bin=$B
    rec=$(mpirun --allow-run-as-root --oversubscribe -np 2 "$bin/train_dp_interleaved" "${args[@]}" < /dev/null |
          sed -n 's/^RESULTS_JSON: //p' | head -1)
    [[ -n $rec ]] || { echo "triad-experiment.sh: build $b's run $r failed" >&2; exit 1; }
    # The record's fields this experiment reads, and what says which run it was (a whole record is
    # 3 KB; a hundred of them would not be a small file to commit).
    printf '%s' "$rec" | /usr/bin/python3 -c '
import json, sys
r = json.load(sys.stdin)
keep = ["version", "mode", "world_size", "triad_steps", "overlap_pct", "triad_step_s", "compute_only_step_s",
        "comm_only_step_s", "exposed_comm_step_s", "link_dilation", "avg_epoch_s", "run_delay_share"]
print(json.dumps({"build": sys.argv[1], "round": int(sys.argv[2]), "record": {k: r.get(k) for k in keep}}))
' "$b" "$r" >> "$OUT/runs.jsonl"
    echo "round $r build $b: overlap $(tail -1 "$OUT/runs.jsonl" | /usr/bin/python3 -c 'import json,sys; print(round(json.load(sys.stdin)["record"]["overlap_pct"], 1))') %" >&2
  done
done
