#!/bin/bash
# install_tree.sh SOURCE BUILD — an installed tree works without the source and build trees:
# `cmake --install BUILD --prefix P`, P copied elsewhere, then, in a private mount namespace where
# SOURCE and BUILD are empty (a tmpfs over each), the copy's dpscale runs report, compare (the
# gate's Python), plot (the plotter), history add and a sweep's dry run on a committed results
# file and config. Negative control: the same copy without its share/ (the Python side) must
# fail compare and plot, so the first half cannot pass through the source tree.
# Exit 77 (skipped) where no private mount namespace can be made (not root, no unshare).
set -u
src=$1 build=$2
command -v unshare >/dev/null && [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null || { echo "skip: needs root and unshare -m"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/inst" >/dev/null || { echo "FAIL: cmake --install"; exit 1; }
cp -a "$work/inst" "$work/moved"
cp -a "$work/inst" "$work/noshare" && rm -rf "$work/noshare/share"
cp "$src/.ci/baseline/ci-cpu.jsonl" "$work/ci.jsonl"
cp "$src/configs/ci.json" "$work/ci-config.json"

# Everything run with SOURCE and BUILD hidden is in this one string (a script read from SOURCE
# could not be read on once it is hidden).
inner='
set -u
# BUILD inside SOURCE is gone with it.
mount -t tmpfs none "$1" && { [ ! -d "$2" ] || mount -t tmpfs none "$2"; } || { echo "FAIL: cannot hide the trees"; exit 1; }
[ -z "$(ls -A "$1")" ] || { echo "FAIL: the source tree is still there"; exit 1; }
w=$3 fails=0
check() { local want=$1; shift; "$@" >"$w/out" 2>"$w/err"; local rc=$?
  if [ "$rc" != "$want" ]; then echo "FAIL: $* exited $rc, not $want: $(head -c 300 "$w/err")"; fails=1; fi; }
B=$w/moved/bin/dpscale
check 0 "$B" report "$w/ci.jsonl"
check 3 "$B" compare "$w/ci.jsonl" "$w/ci.jsonl"   # a file against itself: undecided, judged by gate.py
check 0 "$B" plot "$w/ci.jsonl" --out "$w/plots"
[ -s "$w/plots/chart2_speedup.png" ] || { echo "FAIL: no chart"; fails=1; }
check 0 "$B" history add "$w/ci.jsonl" --rev x --rev-time 2026-01-01T00:00:00Z --db "$w/h.sqlite"
check 0 "$B" sweep "$w/ci-config.json" --dry-run --out "$w/s.jsonl"
grep -q "$w/moved/bin/train_dp_naive" "$w/out" || { echo "FAIL: the dry run does not name the copy'"'"'s trainers"; fails=1; }
N=$w/noshare/bin/dpscale
check 2 "$N" compare "$w/ci.jsonl" "$w/ci.jsonl"
check 2 "$N" plot "$w/ci.jsonl" --out "$w/plots2"
exit $fails
'
real_src=$(cd "$src" && pwd -P) real_build=$(cd "$build" && pwd -P)
unshare -m bash -c "$inner" inner "$real_src" "$real_build" "$work" && echo "installed tree works without the source and build trees"
