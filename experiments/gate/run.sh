#!/usr/bin/env bash
# run.sh — measures the regression gate itself (experiments/gate/README.md): false alarms of an unchanged build beside busy neighbours, and the power to catch a
# known loss of scaling on an idle machine. Every comparison is a fresh sweep of CONFIG against
# the baseline BASE, judged by `dpscale compare` as CI judges it; one JSON line per comparison
# goes to OUT/comparisons.jsonl, the sweeps' files to OUT/runs/.
#
#   experiments/gate/run.sh BUILD OUT PHASE [N] [-- extra sweep options]
#     PHASE  baseline          the baseline: CONFIG with --repeats $BASE_ROUNDS (default 20) -> OUT/baseline.jsonl
#            idle              N comparisons, nothing else running
#            busy1 | busy2     N comparisons beside one or two busy loops (shell loops, nice 0)
#            slow3 | slow5 | slow10
#                              N comparisons with every data-parallel run slowed: rank 0 sleeps
#                              in each step's backward for that percent of naive's step time in
#                              the baseline (--inject-delay), single untouched
#            table             the table of OUT/comparisons.jsonl: per phase, how many
#                              comparisons the gate called a regression, undecided or same
#            rejudge           every comparison's final NEW file judged again at each minimum
#                              effect in $EFFECTS (default "3 5 10 15"), no rounds added:
#                              OUT/rejudged.jsonl, and a table per phase and effect (the
#                              sweeps' files come from OUT/runs/, unpacked first from
#                              OUT/runs.tar.xz when that is there: the committed experiment
#                              keeps them packed, `tar -C OUT -cJf OUT/runs.tar.xz runs/*.json*`)
#   Environment: CONFIG (default configs/ci.json), NICE (the sweeps' --nice, default -20 as
#   ci.json), MAX_REPEATS (compare --rerun with the phase's config up to this many rounds, as the
#   CI step does; default 10; 0: no reruns), COMPARE_ARGS (extra dpscale compare options).
set -euo pipefail
cd "$(dirname "$0")/../.."

BUILD=${1:?BUILD dir}
OUT=${2:?OUT dir}
PHASE=${3:?PHASE}
N=${4:-10}
shift $(( $# < 4 ? $# : 4 ))
[ "${1:-}" = "--" ] && shift
EXTRA=("$@")
CONFIG=${CONFIG:-configs/ci.json}
NICE=${NICE:--20}
MAX_REPEATS=${MAX_REPEATS:-10}
BASE_ROUNDS=${BASE_ROUNDS:-20}
DPSCALE="$BUILD/bin/dpscale"
BASE="$OUT/baseline.jsonl"

if [ "$PHASE" = baseline ]; then
  exec "$DPSCALE" sweep "$CONFIG" --out "$BASE" --repeats "$BASE_ROUNDS" --nice "$NICE" "${EXTRA[@]}"
fi
[ -f "$BASE" ] || { echo "gate-experiment: $BASE missing: run the baseline phase first" >&2; exit 2; }

if [ "$PHASE" = table ]; then
  exec /usr/bin/python3 - "$OUT/comparisons.jsonl" <<'EOF'
import collections, json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
order = ["idle", "busy1", "busy2", "slow3", "slow5", "slow10"]
phases = sorted({r["phase"] for r in rows}, key=lambda p: order.index(p) if p in order else 99)
print("| phase | comparisons | regression | undecided | same/improvement | naive: regression | interleaved: regression | bucketed: regression | median effect naive / interleaved / bucketed | median time |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---|---:|")
for ph in phases:
    rs = [r for r in rows if r["phase"] == ph]
    n = len(rs)
    reg = sum(r["exit"] == 1 for r in rs)
    und = sum(r["exit"] == 3 for r in rs)
    same = sum(r["exit"] == 0 for r in rs)
    per = collections.defaultdict(list)
    eff = collections.defaultdict(list)
    for r in rs:
        for p in r["points"]:
            mode = p["point"].split()[1]
            per[mode].append(p["verdict"])
            if p["effect_pct"] is not None:
                eff[mode].append(p["effect_pct"])
    cell = lambda m: f"{sum(v == 'regression' for v in per[m])}/{len(per[m])}"
    med = " / ".join(f"{statistics.median(eff[m]):+.1f}%" if eff[m] else "—" for m in ("naive", "interleaved", "bucketed"))
    t = statistics.median(r["sweep_s"] + r["compare_s"] for r in rs)
    print(f"| {ph} | {n} | {reg} | {und} | {same} | {cell('naive')} | {cell('interleaved')} | {cell('bucketed')} | {med} | {t:.0f} s |")
EOF
fi

if [ "$PHASE" = rejudge ]; then
  [ -f "$OUT/runs.tar.xz" ] && tar -C "$OUT" -xJf "$OUT/runs.tar.xz" --skip-old-files
  : >"$OUT/rejudged.jsonl"
  while read -r line; do
    phase=$(printf '%s' "$line" | /usr/bin/python3 -c 'import json,sys; print(json.loads(sys.stdin.read())["phase"])')
    file=$(printf '%s' "$line" | /usr/bin/python3 -c 'import json,sys; print(json.loads(sys.stdin.read())["file"])')
    for e in ${EFFECTS:-3 5 10 15}; do
      set +e
      "$DPSCALE" compare "$OUT/runs/$file" "$BASE" --min-effect "$e" --format json >"$OUT/rejudge.tmp" 2>/dev/null
      rc=$?
      set -e
      /usr/bin/python3 - "$OUT/rejudge.tmp" "$phase" "$file" "$e" "$rc" >>"$OUT/rejudged.jsonl" <<'EOF'
import json, sys
path, phase, file, e, rc = sys.argv[1:]
v = json.load(open(path))
print(json.dumps({"phase": phase, "file": file, "min_effect_pct": float(e), "exit": int(rc),
                  "verdicts": {p["key"]["mode"]: p["verdict"] for p in v["points"]}}))
EOF
    done
  done <"$OUT/comparisons.jsonl"
  rm -f "$OUT/rejudge.tmp"
  exec /usr/bin/python3 - "$OUT/rejudged.jsonl" <<'EOF'
import collections, json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
order = ["idle", "busy1", "busy2", "slow3", "slow5", "slow10"]
print("| min effect | phase | comparisons | any regression | undecided, none regressed | same | naive / interleaved / bucketed called regression |")
print("|---:|---|---:|---:|---:|---:|---|")
for e in sorted({r["min_effect_pct"] for r in rows}):
    for ph in sorted({r["phase"] for r in rows}, key=lambda p: order.index(p) if p in order else 99):
        rs = [r for r in rows if r["phase"] == ph and r["min_effect_pct"] == e]
        per = " / ".join(f"{sum(r['verdicts'].get(m) == 'regression' for r in rs)}" for m in ("naive", "interleaved", "bucketed"))
        print(f"| {e:g}% | {ph} | {len(rs)} | {sum(r['exit'] == 1 for r in rs)} | {sum(r['exit'] == 3 for r in rs)} | "
              f"{sum(r['exit'] == 0 for r in rs)} | {per} |")
EOF
fi

mkdir -p "$OUT/runs"  # after the table: printing it writes nothing

spinners=()
stop_spinners() { for p in "${spinners[@]}"; do kill "$p" 2>/dev/null || true; done; spinners=(); }
trap stop_spinners EXIT
start_spinners() {
  for _ in $(seq "$1"); do
    sh -c 'while :; do :; done' &
    spinners+=($!)
  done
}

config="$CONFIG"
case "$PHASE" in
  idle) ;;
  busy1) start_spinners 1 ;;
  busy2) start_spinners 2 ;;
  slow*)
    pct=${PHASE#slow}
    # naive's step in the baseline (median over its rounds), and the delay that adds pct% to it.
    ms=$(/usr/bin/python3 - "$BASE" "$pct" <<'EOF'
import json, statistics, sys
steps = [j["avg_epoch_s"] / j["steps_per_epoch"] for j in map(json.loads, open(sys.argv[1]))
         if j.get("status") == "ok" and j["point"]["mode"] == "naive"]
print(max(1, round(1000 * statistics.median(steps) * float(sys.argv[2]) / 100)))
EOF
)
    config="$OUT/runs/$PHASE.json"
    /usr/bin/python3 - "$CONFIG" "$config" "$ms" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["options"]["inject_delay"] = "0:" + sys.argv[3]
json.dump(c, open(sys.argv[2], "w"), indent=1)
EOF
    echo "gate-experiment: $PHASE: rank 0 sleeps $ms ms per step" >&2
    ;;
  *) echo "gate-experiment: unknown phase '$PHASE'" >&2; exit 2 ;;
esac

for i in $(seq "$N"); do
  new="$OUT/runs/$PHASE-$(date -u +%Y%m%dT%H%M%S)-$i.jsonl"
  t0=$(date +%s.%N)
  "$DPSCALE" sweep "$config" --out "$new" --nice "$NICE" "${EXTRA[@]}" >/dev/null 2>"$new.log" || true
  t1=$(date +%s.%N)
  set +e
  rerun=()
  [ "$MAX_REPEATS" -gt 0 ] && rerun=(--rerun "$config" --max-repeats "$MAX_REPEATS")
  # shellcheck disable=SC2086
  "$DPSCALE" compare "$new" "$BASE" --format json "${rerun[@]}" ${COMPARE_ARGS:-} >"$new.verdict.json" 2>>"$new.log"
  rc=$?
  set -e
  t2=$(date +%s.%N)
  /usr/bin/python3 - "$new.verdict.json" "$PHASE" "$i" "$rc" "$t0" "$t1" "$t2" "$new" >>"$OUT/comparisons.jsonl" <<'EOF'
import json, sys
path, phase, i, rc, t0, t1, t2, new = sys.argv[1:]
try:
    v = json.load(open(path))
    points = [{"point": p["describe"], "verdict": p["verdict"], "effect_pct": p.get("effect_pct"),
               "ci_pct": p.get("ci_pct"), "p_holm": p.get("p_holm"), "n_now": p.get("n_now"),
               "why": p.get("why", [])} for p in v["points"]]
except (OSError, ValueError, KeyError):
    points = []
rounds = 1 + max((json.loads(l)["point"]["repeat"] for l in open(new) if l.strip()), default=-1)
print(json.dumps({"phase": phase, "i": int(i), "exit": int(rc), "rounds": rounds, "sweep_s": round(float(t1) - float(t0), 1),
                  "compare_s": round(float(t2) - float(t1), 1), "file": new.split("/")[-1], "points": points}))
EOF
  tail -1 "$OUT/comparisons.jsonl" | /usr/bin/python3 -c 'import json,sys; j=json.loads(sys.stdin.read()); print(j["phase"], j["i"], "exit", j["exit"], [(p["point"].split()[1], p["verdict"], None if p["effect_pct"] is None else round(p["effect_pct"], 1)) for p in j["points"]])' >&2
done
