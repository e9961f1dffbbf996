#!/usr/bin/env bash
# run.sh — the measured sweeps behind `dpscale predict`'s calibration, held-out validation and
# cap advice (experiments/predict/README.md, docs/predict/README.md). Each config's sweep goes to
# OUT/<config>.jsonl; an interrupted sweep resumes where it stopped.
#
#   experiments/predict/run.sh BUILD [OUT] [CONFIG...]
#     BUILD   the build directory (its bin/ is copied to OUT/bin first, so rebuilding BUILD
#             during a long sweep cannot swap the programs under it)
#     OUT     default experiments/predict/data
#     CONFIG  default: predict-validate predict-caps predict-caps-50-300 predict-caps-large
#   Environment: NICE (the sweeps' --nice, default -10: the runs win the CPU over a neighbour
#   at the default priority; the machine's state is recorded either way).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:?BUILD dir}
OUT=${2:-experiments/predict/data}
shift $(( $# >= 2 ? 2 : 1 ))
CONFIGS=("$@")
[ ${#CONFIGS[@]} -gt 0 ] || CONFIGS=(predict-validate predict-caps predict-caps-50-300 predict-caps-large)
mkdir -p "$OUT"
BIN=$(mktemp -d)
trap 'rm -rf "$BIN"' EXIT
cp -a "$BUILD"/bin/. "$BIN"/
for c in "${CONFIGS[@]}"; do
  resume=()
  [ -s "$OUT/$c.jsonl" ] && resume=(--resume)
  "$BIN"/dpscale sweep "experiments/predict/$c.json" --out "$OUT/$c.jsonl" "${resume[@]}" --nice "${NICE:--10}" --bin-dir "$BIN"
done
