#!/usr/bin/env bash
# real.sh — a real history (experiments/history/README.md): configs/ci.json measured on a sequence of
# builds of one commit, some with a known slowdown compiled in, each build's sweep added to a
# history as a revision of its own, then its change points and its page.
#
#   experiments/history/real.sh OUT [PLAN...]
#     OUT   where it all goes: OUT/sweeps/*.jsonl (one sweep per revision), OUT/history.sqlite,
#           OUT/changes.md, OUT/page/index.html, OUT/plan.txt (what each revision was)
#     PLAN  the builds in order, each `clean` or `slowN` (naive's gradient sync sleeps N% of
#           naive's step in the committed CI baseline, on every rank, every step: a naive step N%
#           longer; interleaved and bucketed untouched). Default: 5 clean, 5 slow10, 4 clean,
#           8 slow50 (naive 10% slower at revision 6, fixed at 11, 50% slower from 15), the
#           history data/real/ holds.
#   Environment: WORK (the builds' worktrees, default build/history-real: beside the sources, so
#   ccache's CCACHE_BASEDIR finds the objects of the main build), NICE (the
#   sweeps' --nice; default the config's -20 when root, else 0), SWEEP_ARGS (more sweep options).
#
# The builds are worktrees of one commit (HEAD, or COMMIT) with trainers/sync_naive.cpp patched
# (slowN) or not (clean),
# each built with only the targets a sweep needs, on the CPU backend. Revisions are labelled
# "<commit>-<n>-clean" / "<commit>-<n>-slow10" and timed by their sweep's first run, so commit
# order is the order they were measured in.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
OUT=${1:?OUT dir}
shift
PLAN=("$@")
[[ ${#PLAN[@]} -gt 0 ]] || PLAN=(clean clean clean clean clean slow10 slow10 slow10 slow10 slow10 clean clean clean clean
                                 slow50 slow50 slow50 slow50 slow50 slow50 slow50 slow50)
WORK=${WORK:-$ROOT/build/history-real}
if [[ -z "${NICE:-}" ]]; then NICE=$([[ $(id -u) -eq 0 ]] && echo -20 || echo 0); fi
mkdir -p "$OUT/sweeps" "$WORK"
OUT=$(cd "$OUT" && pwd)
# The commit every build is made from: COMMIT, else the one the builds already in WORK were made
# from (so a longer plan run later extends the same history), else HEAD.
if [[ -z "${COMMIT:-}" ]]; then
  COMMIT=$(git -C "$WORK/clean" rev-parse HEAD 2>/dev/null || git rev-parse HEAD)
fi
commit=$(git rev-parse --short=8 "$COMMIT")

# naive's step in the committed CI baseline, in microseconds
step_us=$(/usr/bin/python3 - <<'PY'
import json, statistics
steps = [j["avg_epoch_s"] / j["steps_per_epoch"] for j in map(json.loads, open(".ci/baseline/ci-cpu.jsonl"))
         if j["status"] == "ok" and j["point"]["mode"] == "naive"]
print(round(1e6 * statistics.median(steps)))
PY
)

build() {  # build VARIANT: a worktree of HEAD with the variant's patch, built; prints its bin dir
  local variant=$1 dir="$WORK/$1"
  if [[ ! -x "$dir/build/bin/dpscale" ]]; then
    git worktree remove --force "$dir" 2>/dev/null || rm -rf "$dir"
    git worktree add --detach "$dir" "$COMMIT" >&2
    if [[ $variant == slow* ]]; then
      local pct=${variant#slow} us=$(( step_us * ${variant#slow} / 100 ))
      /usr/bin/python3 - "$dir/trainers/sync_naive.cpp" "$us" "$pct" <<'PY'
import sys
path, us, pct = sys.argv[1], sys.argv[2], sys.argv[3]
s = open(path).read()
s = s.replace('#include "sync_strategies.h"\n', '#include <chrono>\n#include <thread>\n\n#include "sync_strategies.h"\n', 1)
s = s.replace("  void complete() override {\n",
              "  void complete() override {\n"
              f"    // history-real.sh: a known slowdown, {pct}% of naive's step\n"
              f"    std::this_thread::sleep_for(std::chrono::microseconds({us}));\n", 1)
open(path, "w").write(s)
PY
      grep -q "sleep_for" "$dir/trainers/sync_naive.cpp" || { echo "history-real: the patch did not apply" >&2; exit 1; }
    fi
    CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(dirname "$ROOT")} cmake -S "$dir" -B "$dir/build" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache -DDPSCALE_WITH_CUDA=OFF >/dev/null
    cmake --build "$dir/build" -j2 --target dpscale train_single_gpu train_dp_naive train_dp_interleaved \
      train_ddp_bucketed >&2
  fi
  echo "$dir/build/bin"
}

: > "$OUT/plan.txt"
for i in "${!PLAN[@]}"; do
  variant=${PLAN[$i]}
  n=$((i + 1))
  label="$commit-$(printf %02d "$n")-$variant"
  bin=$(build "$variant")
  file="$OUT/sweeps/$label.jsonl"
  if [[ ! -s "$file" ]]; then
    echo "history-real: revision $n of ${#PLAN[@]}: $label" >&2
    # shellcheck disable=SC2086  # SWEEP_ARGS is a list of words
    "$bin/dpscale" sweep configs/ci.json --out "$file" --bin-dir "$bin" --nice "$NICE" ${SWEEP_ARGS:-} || true
  fi
  when=$(/usr/bin/python3 -c 'import json, sys; print(json.loads(open(sys.argv[1]).readline())["run"]["start_time"])' "$file")
  "$ROOT/build/bin/dpscale" history add "$(realpath --relative-to="$ROOT" "$file")" --rev "$label" --rev-time "$when" \
    --db "$OUT/history.sqlite"
  built=$(git -C "$WORK/$variant" rev-parse --short=8 HEAD)
  echo "$label  $when  $variant, built from $built$([[ $variant == slow* ]] && echo ": naive's sync sleeps $(( step_us * ${variant#slow} / 100 )) us a step")" >> "$OUT/plan.txt"
done
"$ROOT/build/bin/dpscale" history changes --db "$OUT/history.sqlite" --min-effect 5 | tee "$OUT/changes.md" || true
"$ROOT/build/bin/dpscale" history html "$OUT/page" --db "$OUT/history.sqlite"
echo "history-real: $OUT (worktrees in $WORK: git worktree remove them when done)" >&2
