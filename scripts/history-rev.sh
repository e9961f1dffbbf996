#!/usr/bin/env bash
# history-rev.sh — the `--rev` arguments of `dpscale history add` for the tree in the current
# directory, one per line: `--rev HEAD` for a clean checkout (git gives the commit and its time);
# for a tree with uncommitted changes, or no git, a label of its own and the time now, so a
# sweep of edited code is never filed under the commit it was edited from.
#
#   mapfile -t rev < <(scripts/history-rev.sh) && dpscale history add FILE "${rev[@]}"
set -euo pipefail
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
if head=$(git rev-parse --short=8 HEAD 2>/dev/null); then
  if git diff --quiet HEAD -- 2>/dev/null; then
    printf '%s\n' --rev HEAD
  else
    printf '%s\n' --rev "$head+edits-$now" --rev-time "$now"
  fi
else
  printf '%s\n' --rev "unversioned-$now" --rev-time "$now"
fi
