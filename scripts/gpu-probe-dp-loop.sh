#!/bin/bash
# gpu-probe-dp-loop.sh — where the data-parallel loop's own cost at K = 1 goes on a GPU: large and
# xlarge at TF32, single and the three DP modes at K = 1, each run with --trace over 64 timed
# steps (the step and compute tracks are the GPU's own times, from events on the compute stream;
# the comm track the comm stream's). Two controls beside them: `singlempi`, train_single_gpu
# launched by mpirun as the DP trainers are (what the launcher alone costs), and `naivefused`,
# naive with --fused (one all-reduce a step instead of one per tensor). DPSCALE_PROBE_ROUNDS
# rounds (default 2), the modes interleaved, their order turned one place each round (round 1
# starts with single, round 2 with singlempi, ...): no mode always runs first. Runs on the GPU machine from a kit
# (scripts/gpu-kit.sh KIT BUILD), as run.sh does, without its steps; only the kit's own trainers:
#
#   scripts/gpu-probe-dp-loop.sh KIT OUT
#   python3 scripts/dp_loop_gaps.py OUT      # per run: step span, gap between steps, their parts
#
# OUT gets one trace per run (REV-PRECISION-MODEL-MODE-rROUND.json.gz, REV the kit's revision) and
# runs.jsonl (each run's record, one line each, with rev, model, mode and round).
set -u
KIT=$(cd "${1:?KIT dir}" && pwd)
OUT=${2:?OUT dir}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
ROOT=$(mktemp -d); tar -xJf "$KIT/payload.tar.xz" -C "$ROOT"
. "$KIT/kit/env.sh"
dirs=""
while read -r name dir; do [[ $dir == - ]] && continue; [[ ":$dirs:" == *":$dir:"* ]] || dirs=${dirs:+$dirs:}$dir; done < <("$KIT/kit/cuda-libs.sh" $(sed -n 's/^cuda_needs: //p' "$KIT/MANIFEST.txt"))
kit_env "$ROOT" "$dirs" ""
rev=$(sed -n 's/^version: //p' "$KIT/MANIFEST.txt")  # the kit's revision names its runs
rev=${rev:-new}
declare -A EXE=([single]=train_single_gpu [singlempi]=train_single_gpu [naive]=train_dp_naive
                [naivefused]=train_dp_naive [interleaved]=train_dp_interleaved [bucketed]=train_ddp_bucketed)
MODES=(single singlempi naive naivefused interleaved bucketed)
for (( round = 1; round <= ${DPSCALE_PROBE_ROUNDS:-2}; ++round )); do
  turned=("${MODES[@]:$(( (round - 1) % ${#MODES[@]} ))}" "${MODES[@]:0:$(( (round - 1) % ${#MODES[@]} ))}")
  for model in large xlarge; do
    for mode in "${turned[@]}"; do
      name=$rev-tf32-$model-$mode-r$round
      argv=("$ROOT/bin/${EXE[$mode]}" --backend cuda --model "$model" --samples 32768 --batch-size 1024
            --epochs 3 --lr 0.01 --tf32 --quiet --trace "$OUT/$name.json" --trace-steps 33:96)
      [[ $mode == naivefused ]] && argv+=(--fused)
      [[ $mode != single ]] && argv=("$ROOT/bin/mpirun" --allow-run-as-root --bind-to none -np 1 "${argv[@]}")
      rec=$("${argv[@]}" < /dev/null 2> "$OUT/$name.err" | sed -n 's/^RESULTS_JSON: //p' | head -1)
      if [[ -n $rec ]]; then
        printf '{"rev": "%s", "model": "%s", "mode": "%s", "round": %d, "record": %s}\n' "$rev" "$model" "$mode" "$round" "$rec" >> "$OUT/runs.jsonl"
        rm -f "$OUT/$name.err"
        echo "dp-loop: $name ok" >&2
      else
        echo "dp-loop: $name FAILED ($OUT/$name.err)" >&2
      fi
    done
  done
done
gzip -f "$OUT"/*.json
