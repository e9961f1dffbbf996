#!/usr/bin/env bash
# run.sh — does `dpscale bisect` name a known regressing commit? A scratch
# repository made from this checkout's HEAD (git archive: one root commit, GOOD), then ten
# commits: nine harmless edits of a text file and, at POSITION (1-10, default 6), the regressing
# one, which sets DPSCALE_BUILD_SLOWDOWN's default to dp:10 in trainers/CMakeLists.txt (the
# data-parallel trainers' steps 10% slower, trainers/diagnosis/build_slowdown.h). Then
#
#   dpscale bisect GOOD BAD configs/bisect.json --repo OUT/repo --work OUT/work
#
# with this checkout's dpscale and config, and a check that the commit it names is the
# regressing one. Prints the bisect's output, its time and PASS or FAIL; keeps everything in OUT.
#
#   experiments/bisect/run.sh [OUT] [POSITION] [BUILD]
#     OUT       default build-bisect-experiment (git ignores /build*/). Keep it inside the
#               directory ccache's base_dir covers, beside this checkout, so each revision's
#               build reuses the compiled files no commit changed.
#     BUILD     this checkout's build directory (default build), which holds bin/dpscale.
#   Extra dpscale bisect options: BISECT_ARGS="--max-rounds 8".
# Exit status: 0 the regressing commit named; 1 another or none; 2 bad input.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-build-bisect-experiment}
position=${2:-6}
build=${3:-build}
dpscale="$build/bin/dpscale"
[[ -x $dpscale ]] || { echo "bisect-experiment: no $dpscale (build the dpscale target)" >&2; exit 2; }
[[ $position =~ ^([1-9]|10)$ ]] || { echo "bisect-experiment: POSITION must be 1..10 (got '$position')" >&2; exit 2; }
[[ -e $out ]] && { echo "bisect-experiment: $out exists: choose another OUT or remove it" >&2; exit 2; }

repo="$out/repo"
mkdir -p "$repo"
out=$(cd "$out" && pwd)
repo="$out/repo"
git_c=(git -C "$repo" -c user.name=bisect-experiment -c user.email=bisect-experiment@example.com)
git archive --format=tar HEAD | tar -x -C "$repo"
git -C "$repo" init --quiet
"${git_c[@]}" add -A
"${git_c[@]}" commit --quiet -m "base: this checkout's $(git rev-parse --short=12 HEAD)"
good=$(git -C "$repo" rev-parse HEAD)
regressing=""
for i in $(seq 1 10); do
  if [[ $i == "$position" ]]; then
    sed -i 's/^set(DPSCALE_BUILD_SLOWDOWN "" CACHE/set(DPSCALE_BUILD_SLOWDOWN "dp:10" CACHE/' "$repo/trainers/CMakeLists.txt"
    grep -q 'DPSCALE_BUILD_SLOWDOWN "dp:10" CACHE' "$repo/trainers/CMakeLists.txt" ||
      { echo "bisect-experiment: trainers/CMakeLists.txt has no DPSCALE_BUILD_SLOWDOWN default to change" >&2; exit 2; }
    "${git_c[@]}" commit --quiet -am "trainers: data-parallel steps 10% slower (DPSCALE_BUILD_SLOWDOWN dp:10)"
    regressing=$(git -C "$repo" rev-parse HEAD)
  else
    echo "harmless edit $i" >>"$repo/docs/bisect-experiment-notes.txt"
    "${git_c[@]}" add docs/bisect-experiment-notes.txt
    "${git_c[@]}" commit --quiet -m "notes: harmless edit $i"
  fi
done
bad=$(git -C "$repo" rev-parse HEAD)
echo "bisect-experiment: GOOD ${good:0:12}, BAD ${bad:0:12}, the regressing commit ${regressing:0:12} (position $position of 10)"
git -C "$repo" log --oneline --reverse

t0=$SECONDS
set +e
# shellcheck disable=SC2086  # BISECT_ARGS: words on purpose
"$dpscale" bisect "$good" "$bad" configs/bisect.json --repo "$repo" --work "$out/work" ${BISECT_ARGS:-} | tee "$out/bisect.md"
rc=${PIPESTATUS[0]}
set -e
echo "bisect-experiment: dpscale bisect exit $rc in $((SECONDS - t0)) s"
named=$(grep -o '^first revision whose curve moved: [0-9a-f]*' "$out/bisect.md" | awk '{print $NF}' || true)
if [[ -n $named && $named == "$regressing" ]]; then
  echo "bisect-experiment: PASS: named the regressing commit ${regressing:0:12}"
  exit 0
fi
echo "bisect-experiment: FAIL: named '${named:-nothing}', the regressing commit is ${regressing:0:12}"
exit 1
