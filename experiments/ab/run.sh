#!/usr/bin/env bash
# run.sh — how often `dpscale ab` calls a regression that is there, and one that is not
# (experiments/ab/README.md).
#
#   experiments/ab/run.sh BUILD OUT [N]      build the variants, then N sessions per condition
#   experiments/ab/run.sh rejudge BUILD OUT  every session's files judged again by BUILD's
#                                            dpscale (`ab --judge`) into OUT/rejudged.jsonl
#   experiments/ab/run.sh table OUT [FILE]   the table of OUT/sessions.jsonl (or OUT/FILE)
#
# The builds, in OUT/builds/, of this checkout's trainers (CPU only, as CI's baseline): `base`,
# `base-copy` (a copy of base's bin/: an A/A session compares two copies of one build), and three
# real changes made with the CMake option DPSCALE_BUILD_SLOWDOWN (trainers/diagnosis/build_slowdown.h):
# `dp5` and `dp10` (the data-parallel trainers' steps 5% and 10% slower, every rank spinning in
# backward) and `all5` (every trainer 5% slower, the single one included).
#
# The conditions (CONDITIONS, default all six), taken in turn session by session so that the
# machine's drift touches each alike:
#   idle    base against base-copy                 busy1  the same beside one busy loop
#   busy2   the same beside two busy loops         dp5    base against dp5
#   dp10    base against dp10                      all5   base against all5, and `dpscale compare`
#                                                          on the same two files (speedups only)
# A busy loop is `sh -c 'while :; do :; done'` at nice 0, started before the session and stopped
# after it. Each session is `BUILD/bin/dpscale ab CONFIG --a base/bin --b X/bin --min-effect
# MIN_EFFECT --max-rounds MAX_ROUNDS --format json` (CONFIG default configs/ci.json, MIN_EFFECT 5
# and MAX_ROUNDS 8 as CI runs it); it appends one line to OUT/sessions.jsonl: the condition, its
# exit status, its wall time, the load average before it and each curve's verdict. DEADLINE_S
# (seconds from the start of the sessions) stops starting new rounds of conditions after it.
set -euo pipefail
cd "$(dirname "$0")/../.."

if [ "${1:-}" = "table" ]; then
  exec /usr/bin/python3 experiments/ab/table.py "${2:?OUT dir}/${3:-sessions.jsonl}"
fi
CONFIG=${CONFIG:-configs/ci.json}
MIN_EFFECT=${MIN_EFFECT:-5}

if [ "${1:-}" = "rejudge" ]; then
  # The rule may have changed since a session ran: its files judged as they stand, by this
  # build's dpscale, the session's own line kept but for its verdicts (the rounds it ran stay
  # what the rule of its day asked for).
  BUILD=${2:?BUILD dir}
  OUT=${3:?OUT dir}
  : >"$OUT/rejudged.jsonl"
  while IFS= read -r row; do
    name=$(printf '%s' "$row" | /usr/bin/python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["condition"] + "-" + str(r["iteration"]))')
    set +e
    "$BUILD/bin/dpscale" ab "$CONFIG" --a "$OUT/builds/base/bin" --b "$OUT/builds/base-copy/bin" \
      --min-effect "$MIN_EFFECT" --judge "$OUT/sessions/$name" --format json >"$OUT/sessions/$name.rejudged.json"
    rc=$?
    set -e
    printf '%s' "$row" | /usr/bin/python3 -c '
import json, sys
row = json.load(sys.stdin)
v = json.load(open(sys.argv[1]))
row["exit_as_run"] = row["exit"]
row["exit"] = int(sys.argv[2])
row["curves"] = [{"curve": c["curve"], "verdict": c["verdict"], "effect_pct": c.get("effect_pct"),
                  "ci_pct": c.get("ci_pct"), "p_holm": c.get("p_holm")} for c in v.get("curves", [])]
print(json.dumps(row))' "$OUT/sessions/$name.rejudged.json" "$rc" >>"$OUT/rejudged.jsonl"
  done <"$OUT/sessions.jsonl"
  exit 0
fi

BUILD=${1:?BUILD dir}
OUT=${2:?OUT dir}
N=${3:-20}
MAX_ROUNDS=${MAX_ROUNDS:-8}
CONDITIONS=${CONDITIONS:-idle busy1 dp5 all5 dp10 busy2}
DEADLINE_S=${DEADLINE_S:-0}
DPSCALE=$BUILD/bin/dpscale
[ -x "$DPSCALE" ] || { echo "ab-experiment: no dpscale in $BUILD/bin" >&2; exit 2; }
mkdir -p "$OUT/builds" "$OUT/sessions"

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
build_variant() {  # NAME SLOWDOWN
  local dir=$OUT/builds/$1
  [ -x "$dir/bin/train_ddp_bucketed" ] && return 0
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DDPSCALE_WITH_CUDA=OFF "-DDPSCALE_BUILD_SLOWDOWN=$2" \
    "${launcher[@]}" >/dev/null
  cmake --build "$dir" -j "$(nproc)" --target train_single_gpu train_dp_naive train_dp_interleaved \
    train_ddp_bucketed >/dev/null
}
build_variant base ""
build_variant dp5 dp:5
build_variant dp10 dp:10
build_variant all5 all:5
if [ ! -x "$OUT/builds/base-copy/bin/train_ddp_bucketed" ]; then
  mkdir -p "$OUT/builds/base-copy"
  cp -r "$OUT/builds/base/bin" "$OUT/builds/base-copy/bin"
fi

spinners=()
stop_spinners() { for p in "${spinners[@]}"; do kill "$p" 2>/dev/null || true; done; spinners=(); }
trap stop_spinners EXIT

session() {  # CONDITION ITERATION
  local cond=$1 i=$2 b busy=0
  case $cond in
    idle) b=base-copy ;;
    busy1) b=base-copy; busy=1 ;;
    busy2) b=base-copy; busy=2 ;;
    dp5 | dp10 | all5) b=$cond ;;
    *) echo "ab-experiment: unknown condition $cond" >&2; exit 2 ;;
  esac
  local name="$cond-$i" load t0 rc crc=null
  load=$(cut -d' ' -f1 /proc/loadavg)
  for _ in $(seq "$busy"); do
    nice -n 0 sh -c 'while :; do :; done' &
    spinners+=($!)
  done
  t0=$(date +%s.%N)
  set +e
  "$DPSCALE" ab "$CONFIG" --a "$OUT/builds/base/bin" --b "$OUT/builds/$b/bin" --min-effect "$MIN_EFFECT" \
    --max-rounds "$MAX_ROUNDS" --format json --out "$OUT/sessions/$name" >"$OUT/sessions/$name.json" \
    2>"$OUT/sessions/$name.err"
  rc=$?
  set -e
  local secs
  secs=$(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN { printf "%.1f", a - b }')
  stop_spinners
  if [ "$cond" = all5 ]; then
    set +e
    "$DPSCALE" compare "$OUT/sessions/$name/b.jsonl" "$OUT/sessions/$name/a.jsonl" --min-effect "$MIN_EFFECT" \
      --format json >"$OUT/sessions/$name.compare.json" 2>"$OUT/sessions/$name.compare.err"
    crc=$?
    set -e
  fi
  /usr/bin/python3 - "$OUT/sessions/$name.json" "$cond" "$i" "$rc" "$secs" "$load" "$crc" >>"$OUT/sessions.jsonl" <<'PY'
import json, sys
path, cond, i, rc, secs, load, crc = sys.argv[1:]
try:
    v = json.load(open(path))
    curves = [{"curve": c["curve"], "verdict": c["verdict"], "effect_pct": c.get("effect_pct"),
               "ci_pct": c.get("ci_pct"), "p_holm": c.get("p_holm")} for c in v.get("curves", [])]
except (OSError, ValueError):
    curves = []
row = {"condition": cond, "iteration": int(i), "exit": int(rc), "seconds": round(float(secs), 1),
       "load1_before": float(load), "curves": curves}
if crc != "null":
    try:
        c = json.load(open(path.replace(".json", ".compare.json")))
        row["compare"] = {"exit": int(crc), "curves": [{"curve": x["curve"], "verdict": x["verdict"],
                          "effect_pct": x.get("effect_pct")} for x in c.get("curves", [])]}
    except (OSError, ValueError):
        row["compare"] = {"exit": int(crc), "curves": []}
print(json.dumps(row))
PY
  echo "ab-experiment: $name exit $rc in ${secs%.*}s (load $load before)"
}

start=$SECONDS
for i in $(seq "$N"); do
  if [ "$DEADLINE_S" -gt 0 ] && [ $((SECONDS - start)) -ge "$DEADLINE_S" ]; then
    echo "ab-experiment: deadline reached after $((i - 1)) iteration(s)"
    break
  fi
  for cond in $CONDITIONS; do
    [ -e "$OUT/sessions/$cond-$i.json" ] && [ -s "$OUT/sessions/$cond-$i.json" ] && continue
    rm -rf "$OUT/sessions/$cond-$i"
    session "$cond" "$i"
  done
done
