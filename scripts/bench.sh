#!/usr/bin/env bash
# bench.sh — what `make bench` runs: pick the sweep for this machine, run it into
# results/<config>-<UTC time>.jsonl, print the report, draw the charts into plots/out/, and add
# the sweep to the local history, results/history.sqlite (`dpscale history show|changes|html`;
# docs/history.md), at this tree's commit (scripts/history-rev.sh). DPSCALE_HISTORY=PATH keeps
# it elsewhere.
#
#   scripts/bench.sh [BUILD_DIR]          (default: build; `make bench` passes $(BUILD))
#
# The choice: a GPU that nvidia-smi lists and that the build's CUDA backend can use
# -> configs/workshop.json on CUDA + NCCL, world sizes capped at the GPU count (ranks sharing a
# GPU would measure nothing useful); otherwise configs/cpu.json on the CPU backend with link
# emulation (about 5 minutes on 2 cores, build included). DPSCALE_BENCH_CONFIG=configs/x.json picks another.
# Extra arguments for `dpscale sweep` (e.g. --repeats 3) can be given in DPSCALE_SWEEP_ARGS.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-build}
BIN=$(cd "$BUILD/bin" 2>/dev/null && pwd) || { echo "bench.sh: no $BUILD/bin: build first (make build)" >&2; exit 2; }
DPSCALE="$BIN/dpscale"
[[ -x "$DPSCALE" ]] || { echo "bench.sh: $DPSCALE not built" >&2; exit 2; }
cd "$ROOT"

sweep_args=()
n_gpus=$( (nvidia-smi -L 2>/dev/null || true) | grep -c '^GPU ' || true)
config=${DPSCALE_BENCH_CONFIG:-}
if [[ -z "$config" ]]; then
  config=configs/cpu.json
  if (( n_gpus > 0 )); then
    # A GPU is there; is the CUDA backend built? One tiny run answers both questions.
    if "$BIN/train_single_gpu" --backend cuda --model small --samples 1024 --epochs 1 --quiet >/dev/null 2>&1; then
      config=configs/workshop.json
      sweep_args+=(--backend cuda --max-world-size "$n_gpus")
      (( n_gpus < 4 )) && echo "bench.sh: $n_gpus GPU(s): the workshop's runs with more ranks are left out" >&2
    else
      echo "bench.sh: $n_gpus GPU(s) found but this build has no working CUDA backend: running $config on the CPU" >&2
    fi
  fi
fi
name=$(basename "$config" .json)
out="results/${name}-$(date -u +%Y%m%d-%H%M%S).jsonl"
echo "bench.sh: $config -> $out" >&2

status=0
# shellcheck disable=SC2206  # DPSCALE_SWEEP_ARGS is a list of words by design
extra=(${DPSCALE_SWEEP_ARGS:-})
"$DPSCALE" sweep "$config" --out "$out" "${sweep_args[@]}" "${extra[@]}" || status=$?
# 1 = some runs failed: their lines are in the file and the report lists them; go on.
if (( status != 0 && status != 1 )); then exit "$status"; fi
[[ -s "$out" ]] || { echo "bench.sh: the sweep recorded nothing" >&2; exit 1; }

echo
"$DPSCALE" report "$out"
echo
if "$DPSCALE" plot "$out" --out plots/out; then
  echo "bench.sh: charts in plots/out/, results in $out" >&2
else
  echo "bench.sh: plotting failed; the results are in $out" >&2
  status=1
fi
history=${DPSCALE_HISTORY:-results/history.sqlite}
mapfile -t rev < <(scripts/history-rev.sh)
if "$DPSCALE" history add "$out" "${rev[@]}" --db "$history"; then
  echo "bench.sh: added this sweep to the history $history as ${rev[1]} (dpscale history show|changes|html --db $history)" >&2
else
  echo "bench.sh: could not add this sweep to the history $history" >&2
  status=1
fi
exit "$status"
