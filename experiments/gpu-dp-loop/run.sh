#!/bin/bash
# run.sh — where the data-parallel loop's own cost at K = 1 goes on a GPU: large and
# xlarge at TF32, single and the three DP modes at K = 1, each run with --trace over 64 timed
# steps (the step and compute tracks are the GPU's own times, from events on the compute stream;
# the comm track the comm stream's). Two controls beside them: `singlempi`, train_single_gpu
# launched by mpirun as the DP trainers are (what the launcher alone costs), and `naivefused`,
# naive with --fused (one all-reduce a step instead of one per tensor). DPSCALE_PROBE_ROUNDS
# rounds (default 2), the modes interleaved, their order turned one place each round (round 1
# starts with the first mode, round 2 with the second, ...): no mode always runs first.
# DPSCALE_PROBE_MODES picks the modes (default: the six above). Three more ask why a process
# holding an NCCL communicator ran backward's last layers slower than singlempi: naivefused with
# NCCL_CUMEM_ENABLE=0 (`fusednocumem`: NCCL's buffers from cudaMalloc, not the cuMem API),
# NCCL_NVLS_ENABLE=0 (`fusednonvls`: no NVLink SHARP resources) or CUDA_DEVICE_MAX_CONNECTIONS=1
# (`fusedoneconn`: every stream through one hardware queue), e.g.
#   DPSCALE_PROBE_MODES="singlempi naivefused fusednocumem fusednonvls fusedoneconn" DPSCALE_PROBE_ROUNDS=3
# --trace keeps the communicator's call log on every step (call_log_sampling.h), so naive's calls
# here each have an end event of their own, as on the untraced runs' one logged step in eight;
# bench_dp_loop times the untraced mix (`naive`) against every step logged (`naive_logged`).
# Runs on the GPU machine from a kit
# (scripts/gpu-kit.sh KIT BUILD), as the kit's run.sh does, without its steps; only the kit's own trainers:
#
#   experiments/gpu-dp-loop/run.sh KIT OUT
#   python3 experiments/gpu-dp-loop/gaps.py OUT      # per run: step span, gap between steps, their parts
#
# OUT gets one trace per run (REV-PRECISION-MODEL-MODE-rROUND.json.gz, REV the kit's revision) and
# runs.jsonl (each run's record, one line each, with rev, model, mode and round).
set -u
declare -A EXE=([single]=train_single_gpu [singlempi]=train_single_gpu [naive]=train_dp_naive
                [naivefused]=train_dp_naive [interleaved]=train_dp_interleaved [bucketed]=train_ddp_bucketed
                [fusednocumem]=train_dp_naive [fusednonvls]=train_dp_naive [fusedoneconn]=train_dp_naive)
# The setting each control changes, passed to the rank by mpirun (-x).
declare -A SETTING=([fusednocumem]=NCCL_CUMEM_ENABLE=0 [fusednonvls]=NCCL_NVLS_ENABLE=0
                    [fusedoneconn]=CUDA_DEVICE_MAX_CONNECTIONS=1)
read -r -a MODES <<< "${DPSCALE_PROBE_MODES:-single singlempi naive naivefused interleaved bucketed}"
for mode in "${MODES[@]}"; do
  [[ -n ${EXE[$mode]:-} ]] || { echo "gpu-dp-loop/run.sh: unknown mode '$mode' in DPSCALE_PROBE_MODES (${!EXE[*]})" >&2; exit 2; }
done
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
for (( round = 1; round <= ${DPSCALE_PROBE_ROUNDS:-2}; ++round )); do
  turned=("${MODES[@]:$(( (round - 1) % ${#MODES[@]} ))}" "${MODES[@]:0:$(( (round - 1) % ${#MODES[@]} ))}")
  for model in large xlarge; do
    for mode in "${turned[@]}"; do
      name=$rev-tf32-$model-$mode-r$round
      argv=("$ROOT/bin/${EXE[$mode]}" --backend cuda --model "$model" --samples 32768 --batch-size 1024
            --epochs 3 --lr 0.01 --tf32 --quiet --trace "$OUT/$name.json" --trace-steps 33:96)
      [[ $mode == naivefused || $mode == fused* ]] && argv+=(--fused)
      setting=()
      [[ -n ${SETTING[$mode]:-} ]] && setting=(-x "${SETTING[$mode]}")
      [[ $mode != single ]] && argv=("$ROOT/bin/mpirun" --allow-run-as-root --bind-to none "${setting[@]}" -np 1 "${argv[@]}")
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
