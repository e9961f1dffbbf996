#!/usr/bin/env bash
# ci-ab.sh — CI's A/B step: the accepted baseline revision against this checkout, in one session.
#
#   scripts/ci-ab.sh [BUILD]     (BUILD: this checkout's build directory, default build)
#
# Builds the revision named in .ci/baseline/ci-rev (its first line that is not a comment) in
# a git worktree of its own, build-ci-base/src, with a build directory of its own,
# build-ci-base/build, and only the four trainers (the harness that runs and judges is this
# checkout's); then runs
#   dpscale ab configs/ci.json --a build-ci-base/build/bin --b BUILD/bin --min-effect 5 --max-rounds 8
# (8 rounds at most, not the default 12: the step must fit in CI's budget on a busy machine)
# (docs/ab.md). Exit 0: the same or better, or undecided after the last round (a line says so:
# the machine could not tell, which is not a verdict); 1: a regression, with a line naming each
# curve that regressed and its effect; 2: bad input (no such revision, a build that failed).
# Accepting a new baseline is the one-line commit of .ci/baseline/ci-rev.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
rev=$(grep -v '^[[:space:]]*#' .ci/baseline/ci-rev | grep -m1 -o '[0-9a-f]\{7,40\}' || true)
# A tree without its history (an export, a shallow clone) cannot build the baseline: said, not judged.
if ! git rev-parse --git-dir >/dev/null 2>&1 || [[ $(git rev-parse --is-shallow-repository) == true ]]; then
  echo "ci-ab: this checkout has no full git history, so the baseline ${rev:-?} cannot be built: A/B not run"
  exit 0
fi
if [[ -z $rev ]] || ! git cat-file -e "$rev^{commit}" 2>/dev/null; then
  echo "ci-ab: .ci/baseline/ci-rev names no commit of this repository ('$rev')" >&2
  exit 2
fi
base=build-ci-base
t0=$SECONDS
git worktree prune
if [[ $(git -C "$base/src" rev-parse HEAD 2>/dev/null || true) != $(git rev-parse "$rev^{commit}") ]]; then
  [[ -e $base/src ]] && git worktree remove --force "$base/src"
  mkdir -p "$base"
  git worktree add --quiet --detach "$base/src" "$rev"
fi
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
# CPU only: configs/ci.json runs the CPU backend, whose code a CUDA build compiles alike; nvcc
# would only add minutes to the step.
cmake -S "$base/src" -B "$base/build" -DCMAKE_BUILD_TYPE=Release -DDPSCALE_WITH_CUDA=OFF "${launcher[@]}" >/dev/null
cmake --build "$base/build" -j "$(nproc 2>/dev/null || echo 2)" \
  --target train_single_gpu train_dp_naive train_dp_interleaved train_ddp_bucketed >/dev/null
echo "ci-ab: baseline ${rev:0:12} built in $((SECONDS - t0))s"

out="$base/ab-$(date -u +%Y%m%d-%H%M%S)"
verdicts="$out.md"
t1=$SECONDS
set +e
"$build/bin/dpscale" ab configs/ci.json --a "$base/build/bin" --b "$build/bin" --min-effect 5 --max-rounds 8 --out "$out" >"$verdicts"
rc=$?
set -e
cat "$verdicts"
echo "ci-ab: the session took $((SECONDS - t1))s (results in $out)"
# CI's history (DPSCALE_CI_AB_HISTORY, .ci/run sets it): the session's runs and pairs, A at the
# baseline revision, B at this checkout, so the history's anchored series ("throughput vs
# BASE") follow B against the same baseline from one CI run to the next (docs/history.md). A
# failure here is said and never changes this step's verdict.
if [[ -n ${DPSCALE_CI_AB_HISTORY:-} && -f $out/a.jsonl && -f $out/b.jsonl ]]; then
  mapfile -t brev < <(scripts/history-rev.sh | sed 's/^--rev$/--rev-b/; s/^--rev-time$/--rev-b-time/')
  "$build/bin/dpscale" history add "$out" --rev-a "$rev" "${brev[@]}" --db "$DPSCALE_CI_AB_HISTORY" ||
    echo "ci-ab: warning: the session was not added to $DPSCALE_CI_AB_HISTORY (the verdict stands)" >&2
fi
case $rc in
  0) echo "ci-ab: the same as or better than ${rev:0:12}" ;;
  1) grep '^# curve .*: regression' "$verdicts" | sed 's/^# /ci-ab: REGRESSION against '"${rev:0:12}"': /' >&2 || true
     exit 1 ;;
  3) echo "ci-ab: undecided after the last round: the machine could not tell B from ${rev:0:12}; passes, not judged" ;;
  *) echo "ci-ab: dpscale ab failed (exit $rc)" >&2
     exit "$rc" ;;
esac
