# shellcheck shell=bash
# steps.sh — the GPU kit's steps, sourced by run.sh. Each step writes its record into $OUT,
# its chatter into run.log (fd 3), and one line into $WORK/steps.tsv:
#   name <TAB> ok|failed|timed out|skipped <TAB> seconds <TAB> what it wrote / why
# Globals from run.sh: BIN (programs), ROOT (unpacked payload), OUT, WORK, SELF (1 = CPU
# self-test), BACKEND (cuda | cpu), and step_cap/elapsed/log.

# run_step NAME CAP_S FILE COMMAND...: COMMAND under `timeout`, stdout to $OUT/FILE (or to the
# log when FILE is -), stderr to the log; one steps.tsv line whatever happens.
run_step() {
  local name=$1 cap=$2 file=$3; shift 3
  cap=$(step_cap "$cap")
  if (( cap < 10 )); then
    printf '%s\tskipped\t0\tno time left in the budget\n' "$name" >> "$WORK/steps.tsv"
    log "$name: skipped, no time left"
    return 0
  fi
  log "$name: $* (limit ${cap}s)"
  local t0 rc=0 dest=/dev/fd/3
  [[ $file != - ]] && dest=$OUT/$file
  t0=$(date +%s.%N)
  timeout --kill-after=10 "$cap" "$@" >> "$dest" 2>&3 || rc=$?
  local secs
  secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
  local status=ok note=${file/#-/run.log}
  if (( rc == 124 || rc == 137 )); then status="timed out"; note="stopped after ${cap}s"
  elif (( rc != 0 )); then status=failed; note="exit status $rc (see run.log)"; fi
  printf '%s\t%s\t%s\t%s\n' "$name" "$status" "$secs" "$note" >> "$WORK/steps.tsv"
  log "$name: $status in ${secs}s"
  return 0
}

# 1. The GPU-gated tests (they skip, naming why, without a GPU) and the CPU-pinned data-parallel
# tests a GPU node must still pass. Each binary writes gtest JSON for summary.py; the tests
# find the programs and mpirun through DPSCALE_BIN_DIR and DPSCALE_MPIEXEC (run.sh sets them).
step_tests() {
  local filters=(
    "test_models:ModelsCudaVsCpu.*:ModelsLossSum.*"
    "test_dp_nccl:*"
    "test_single_gpu:SingleBadOption.*"
  )
  if (( SELF )); then
    filters+=("test_dp_exactness:DpExactnessK1.*")
  else
    filters+=("test_dp_exactness:DpExactnessK1.*:Modes/DpExactness.*_K2:DpExactnessControls.*")
  fi
  local f exe filter
  for f in "${filters[@]}"; do
    exe=${f%%:*}; filter=${f#*:}
    {
      echo "===== $exe --gtest_filter=$filter"
    } >> "$OUT/tests.log"
    run_step "tests:$exe" "$( ((SELF)) && echo 120 || echo 150)" tests.log \
      "$BIN/$exe" --gtest_filter="$filter" --gtest_output="json:$WORK/gtest-$exe.json" --gtest_color=no
  done
}

# A sweep config (configs/README.md) for the harness, written into $WORK.
write_config() {  # write_config FILE NAME MODELS_JSON MODES_JSON OPTIONS_JSON
  cat > "$1" <<EOF
{"name": "$2", "description": "GPU kit (scripts/gpu-kit.sh): K = 1 on one device",
 "models": $3, "modes": $4, "world_sizes": [1], "bucket_caps_mb": [25], "link": "none",
 "backend": "$BACKEND", "timeout_s": $( ((SELF)) && echo 60 || echo 120), "options": $5}
EOF
}

# 2. train_single_gpu for each model, then one data-parallel trainer of each mode at K = 1 (the
# largest model: where the all-reduce is largest), through `dpscale sweep` so every line carries
# the harness's system description; --tf32 off, then on, each into its own results file. A run
# the machine disturbed is marked in its line, not rerun: the kit's time is budgeted, one line
# per run keeps the files as the summary reads them.
step_train() {
  local precision=$1 tf32=false
  [[ $precision == tf32 ]] && tf32=true
  local singles dp options
  if (( SELF )); then
    singles='["784,32,10", "784,64,32,10"]'; dp='["784,64,32,10"]'
    options='{"samples": 2048, "batch_size": 256, "epochs": 2, "warmup_steps": 1, "lr": 0.01, "tf32": '$tf32'}'
  else
    # The workshop's single-GPU rows: 32768 samples, batch 1024, lr 0.01, 5 epochs.
    singles='["small", "medium", "large", "xlarge"]'; dp='["large"]'
    options='{"samples": 32768, "batch_size": 1024, "epochs": 5, "lr": 0.01, "tf32": '$tf32'}'
  fi
  write_config "$WORK/single-$precision.json" "gpu-$precision" "$singles" '["single"]' "$options"
  write_config "$WORK/dp-$precision.json" "gpu-$precision" "$dp" '["naive", "interleaved", "bucketed"]' "$options"
  local file=train-$precision.jsonl cap=150
  (( SELF )) && cap=120
  for part in single dp; do
    run_step "train:$precision:$part" "$cap" - "$BIN/dpscale" sweep "$WORK/$part-$precision.json" \
      --out "$OUT/$file" --resume --disturbed-reruns 0 --mpirun "$ROOT/bin/mpirun" --bin-dir "$BIN"
  done
  "$BIN/dpscale" report "$OUT/$file" > "$WORK/report-$precision.md" 2>&3 || log "report $file failed"
}

# 3a. cuBLAS on every GEMM shape of a step, against the square sgemm and the GPU's fp32 peak
# (the self-test: the CPU rows of the small preset at batch 64).
step_gemm() {
  local args
  if (( SELF )); then args=(--models=small --batch=64 --ceiling=256 --benchmark_filter=^gemm/cpu/ --benchmark_min_time=0.02)
  else args=(--benchmark_filter=^gemm/cuda/ --benchmark_min_time=0.2); fi
  run_step gemm 120 - "$BIN/bench_gemm" "${args[@]}" --benchmark_out="$OUT/bench_gemm.json" --benchmark_out_format=json
}

# 3b. The all-reduce at K = 1, nccl-tests style (the self-test: MPI's own, no NCCL on a CPU).
step_allreduce() {
  local algos=nccl max=256M
  (( SELF )) && { algos=native; max=16M; }
  run_step allreduce 60 bench_allreduce.txt "$ROOT/bin/mpirun" --allow-run-as-root --oversubscribe --bind-to none \
    -np 1 "$BIN/bench_allreduce" --algos "$algos" -b 8 -e "$max" -c 1 --benchmark_color=false
}
