#!/usr/bin/env bash
# ci-history.sh — CI's history of its regression sweeps (.ci/run calls it after `make test`):
# adds every sweep the CI regression test kept (tests/harness/test_ci_regression.cpp copies them
# into SWEEP_DIR) to HISTORY at this checkout's commit, writes the change points and the page
# into OUT_DIR, and fails (exit 1) when it finds a new regression of at least 15% (the CI gate's
# minimum effect): `changes --record` marks each regression it fails on in HISTORY, so the run
# that finds a change fails and later runs judge that series from the change on; a known change
# is accepted ahead with `dpscale history accept --rev REV --db HISTORY` (docs/history.md, "What CI
# judges"). HISTORY is the file a CI system keeps between runs (docs/harness.md, "Keeping CI's
# history").
#
#   scripts/ci-history.sh BUILD_DIR SWEEP_DIR HISTORY OUT_DIR
set -euo pipefail
[[ $# -eq 4 ]] || { echo "usage: scripts/ci-history.sh BUILD_DIR SWEEP_DIR HISTORY OUT_DIR" >&2; exit 2; }
DPSCALE="$1/bin/dpscale"
sweeps=("$2"/*.jsonl)
history=$3
out=$4
mkdir -p "$out" "$(dirname "$history")"
if [[ ! -e "${sweeps[0]}" ]]; then
  echo "ci-history: the CI regression test kept no sweep in $2 (it did not run, or skipped before sweeping)" >&2
  exit 0
fi
mapfile -t rev < <("$(dirname "$0")/history-rev.sh")
"$DPSCALE" history add "${sweeps[@]}" "${rev[@]}" --db "$history"
"$DPSCALE" history html "$out/history" --db "$history"
status=0
"$DPSCALE" history changes --db "$history" --min-effect 15 --record | tee "$out/history-changes.md" || status=$?
echo "ci-history: $history holds this run's sweep; page in $out/history/index.html" >&2
if [[ $status -eq 1 ]]; then
  echo "ci-history: a new regression (above), recorded in $history: the next run judges its series from it on" >&2
fi
exit "$status"
