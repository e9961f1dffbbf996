#!/usr/bin/env bash
# reproduce.sh — what `make reproduce` runs: measure what this machine can of the workshop's and
# the textbook's findings, predict the rest with `dpscale predict` (labelled predicted), and write
# docs/REPRODUCTION.md and docs/REPRODUCTION.html with the charts.
#
#   scripts/reproduce.sh [BUILD_DIR]            measure, predict, write (about 15 minutes on 2 cores)
#   scripts/reproduce.sh --render [BUILD_DIR]   only rewrite the report from docs/reproduction/raw
#
# On a CPU machine: configs/reproduce-cpu.json (the cpu config's emulated link at K = 2 and 4),
# configs/reproduce-buckets.json (the 0.5-8 MB bucket-cap curve), the ring and star all-reduce at
# K = 2, 3, 4 on an emulated 10 GbE link, and the textbook simulators. With GPUs that answer, the
# sweeps run configs/workshop.json on CUDA instead (world sizes capped at the GPU count).
# Raw results go to docs/reproduction/raw (small JSONL and JSON, committed with the report).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
render_only=0
if [[ "${1:-}" == "--render" ]]; then render_only=1; shift; fi
BUILD=${1:-build}
BIN=$(cd "$BUILD/bin" 2>/dev/null && pwd) || { echo "reproduce.sh: no $BUILD/bin: build first (make build)" >&2; exit 2; }
DPSCALE="$BIN/dpscale"
[[ -x "$DPSCALE" ]] || { echo "reproduce.sh: $DPSCALE not built" >&2; exit 2; }
cd "$ROOT"
RAW=docs/reproduction/raw
CHARTS=docs/reproduction/charts
MPIRUN=(mpirun --allow-run-as-root --oversubscribe --bind-to none)

if (( ! render_only )); then
  mkdir -p "$RAW" "$CHARTS"
  declare -A cmd
  sweep_cfg=configs/reproduce-cpu.json
  sweep_args=()
  n_gpus=$( (nvidia-smi -L 2>/dev/null || true) | grep -c '^GPU ' || true)
  if (( n_gpus > 0 )) && "$BIN/train_single_gpu" --backend cuda --model small --samples 1024 --epochs 1 --quiet >/dev/null 2>&1; then
    sweep_cfg=configs/workshop.json
    sweep_args=(--backend cuda --max-world-size "$n_gpus")
  fi

  # Each sweep starts from an empty file: a report mixes no runs of another day.
  rm -f "$RAW/runs.jsonl" "$RAW/buckets.jsonl"
  cmd[runs]="dpscale sweep $sweep_cfg --out $RAW/runs.jsonl ${sweep_args[*]}"
  "$DPSCALE" sweep "$sweep_cfg" --out "$RAW/runs.jsonl" "${sweep_args[@]}" || (( $? == 1 ))
  cmd[buckets]="dpscale sweep configs/reproduce-buckets.json --out $RAW/buckets.jsonl"
  "$DPSCALE" sweep configs/reproduce-buckets.json --out "$RAW/buckets.jsonl" || (( $? == 1 ))

  # Ring against star: rank 0's bytes counted in the sends, and the time on an emulated 10 GbE link.
  # Started from the bin dir, so the JSON's "executable" is the program's name, not this
  # machine's path.
  for k in 2 3 4; do
    (cd "$BIN" && "${MPIRUN[@]}" -np "$k" ./bench_allreduce --algos ring,star -b 64M -e 64M -n 3 -w 1 --link eth10 \
      --benchmark_format=json) > "$RAW/allreduce-K$k.json" 2>/dev/null
  done
  cmd[allreduce]="mpirun -np K bench_allreduce --algos ring,star -b 64M -e 64M -n 3 -w 1 --link eth10 --benchmark_format=json   (K = 2, 3, 4)"

  # The textbook's simulators, and the step model calibrated from the runs just measured.
  "$DPSCALE" predict --textbook 15.9.1 > "$RAW/textbook-15.9.1.txt"
  cmd[textbook_15_9_1]="dpscale predict --textbook 15.9.1"
  "$DPSCALE" predict --textbook 15.2.1 > "$RAW/textbook-15.2.1.txt"
  cmd[textbook_15_2_1]="dpscale predict --textbook 15.2.1"
  "$DPSCALE" predict --from "$RAW/runs.jsonl" --world-sizes 1,2,4,8,16,32,64,128,256 --format json > "$RAW/predict.json"
  cmd[predict]="dpscale predict --from $RAW/runs.jsonl --world-sizes 1,2,4,...,256 --format json"
  "$DPSCALE" predict --from "$RAW/buckets.jsonl" --recommend-cap --models medium --world-sizes 2 --format json \
    > "$RAW/predict-caps.json"
  cmd[caps_predicted]="dpscale predict --from $RAW/buckets.jsonl --recommend-cap --models medium --world-sizes 2 --format json"

  # The workshop's six charts (and 7, 8) from the main sweep; chart 7 from the bucket sweep.
  "$DPSCALE" plot "$RAW/runs.jsonl" --out "$CHARTS" --format png >/dev/null
  tmp=$(mktemp -d)
  "$DPSCALE" plot "$RAW/buckets.jsonl" --out "$tmp" --format png >/dev/null
  cp "$tmp/chart7_bucket_cap_sweep.png" "$CHARTS/"
  rm -rf "$tmp"

  machine="$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores"
  (( n_gpus > 0 )) && machine+=", $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1) × $n_gpus"
  {
    printf '{"machine": "%s", "date": "%s", "commands": {' "$machine" "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    sep=""
    for key in "${!cmd[@]}"; do printf '%s"%s": "%s"' "$sep" "$key" "${cmd[$key]}"; sep=", "; done
    printf '}}\n'
  } > "$RAW/manifest.json"
fi

for name in runs buckets; do
  [[ -s "$RAW/$name.jsonl" ]] && "$DPSCALE" report "$RAW/$name.jsonl" --format json > "$RAW/$name.report.json"
done
/usr/bin/python3 plots/reproduce.py --raw "$RAW" --out docs
echo "reproduce.sh: docs/REPRODUCTION.md and docs/REPRODUCTION.html written from $RAW" >&2
