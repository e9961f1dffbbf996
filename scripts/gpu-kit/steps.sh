# shellcheck shell=bash
# steps.sh — the GPU kit's steps, sourced by run.sh. Each step writes its record into $OUT,
# its chatter into run.log (fd 3), and one line into $WORK/steps.tsv:
#   name <TAB> ok|failed|timed out|skipped <TAB> seconds <TAB> what it wrote / why
# Globals from run.sh: BIN (programs), BASE_BIN (the base revision's trainers, or empty), ROOT
# (unpacked payload), KIT, OUT, WORK, SELF (1 = CPU self-test), BACKEND (cuda | cpu), and
# step_cap/elapsed/log.

# shown ARGS...: the arguments as one line, with the kit's working folder, the output folder and
# the kit written WORK/, OUT/ and KIT/: run.log travels back from the GPU machine, and its paths
# mean nothing on the machine it is read on.
shown() { local line="$*"; line=${line//"$OUT"/OUT}; line=${line//"$WORK"/WORK}; printf '%s' "${line//"$KIT"/KIT}"; }

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
  log "$name: $(shown "$@") (limit ${cap}s)"
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

# The steps in order of value, so that a run its budget cuts short still brings back the most
# important evidence first: the ordering tests on the GPU (a wrong answer makes every timing
# moot), NCCL summing across K = 2 and 4 ranks (on the GPUs there are, shared with --share-gpu
# where fewer), the finite check's CUDA test; then what the issue's goals are read from, in the
# order the summary needs them: the DP loop at K = 1 in one process, cuBLAS per GEMM shape (the
# card's fp32 peak), the new code against the base revision's on this card (when the kit carries
# one: ab.sh; the finite check's share and single's share of the peak); then the rest, which a
# GPU session's budget may cut (docs/gpu/README.md: what each step took). One line per step:
# NAME CAP_S FUNCTION ARGS... (a test filter has no spaces). DPSCALE_KIT_ONLY=REGEX keeps the
# steps whose name matches (a rerun of some).
kit_plan() {
  local t=150 tr=150
  (( SELF )) && { t=120; tr=120; }
  local exact="DpExactnessK1.*:Modes/DpExactness.*_K2:DpExactnessControls.*"
  (( SELF )) && exact="DpExactnessK1.*"
  {
    echo "tests:test_nccl_order 90 step_test test_nccl_order *"
    echo "tests:test_dp_nccl_multi 180 step_test test_dp_nccl_multi *"
    echo "tests:test_single_gpu 60 step_test test_single_gpu SingleBadOption.*:SingleFiniteStep.*"
    echo "tests:test_models 60 step_test test_models ModelsCudaVsCpu.*:ModelsLossSum.*"
    echo "bench:dp_loop 120 step_dp_loop"
    echo "gemm 90 step_gemm"
    if [[ -n ${BASE_BIN:-} ]]; then echo "ab 240 step_ab"; fi
    echo "tests:test_dp_nccl $t step_test test_dp_nccl *"
    echo "bench:step 90 step_parts"
    echo "train:fp32:single $tr step_train fp32 single"
    echo "train:tf32:single $tr step_train tf32 single"
    echo "bench:kernels 60 step_kernels"
    echo "tests:test_dp_exactness $t step_test test_dp_exactness $exact"
    # The base comparison runs every DP mode at K = 1 on large and xlarge, new code included.
    if [[ -z ${BASE_BIN:-} ]]; then
      echo "train:fp32:dp $tr step_train fp32 dp"
      echo "train:tf32:dp $tr step_train tf32 dp"
    fi
    echo "allreduce 60 step_allreduce"
  } | awk -v only="${DPSCALE_KIT_ONLY:-}" 'only == "" || $1 ~ only'
}

# Prints the plan before anything runs: each step's cap against the budget, and where the caps
# add up past it (a step then gets what is left; one left under 10 s is skipped).
print_plan() {
  local total=$(( BUDGET - RESERVE )) sum=0 name cap rest past
  log "plan: $(kit_plan | wc -l) steps in order, ${total}s for them (budget ${BUDGET}s less ${RESERVE}s for the summary)"
  while read -r name cap rest; do
    sum=$(( sum + cap ))
    past=""
    (( sum > total )) && past="  (past the budget if the steps before use their caps)"
    log "$(printf '  %-24s cap %4ss  caps so far %5ss of %ss%s' "$name" "$cap" "$sum" "$total" "$past")"
  done < <(kit_plan)
}

# Runs the plan's steps in order: FUNCTION NAME CAP ARGS... The plan is read whole first: a
# step's programs (mpirun forwards its stdin to rank 0) must not eat the lines still to come.
run_plan() {
  local -a lines step
  local line
  mapfile -t lines < <(kit_plan)
  for line in "${lines[@]}"; do
    read -r -a step <<< "$line"
    "${step[2]}" "${step[0]}" "${step[1]}" "${step[@]:3}" < /dev/null
  done
}

# A GPU-gated test program (its tests skip, naming why, without a GPU) or a CPU-pinned one a GPU
# node must still pass, under a gtest filter. Each writes gtest JSON for summary.py; the tests
# find the programs and mpirun through DPSCALE_BIN_DIR and DPSCALE_MPIEXEC (run.sh sets them).
step_test() {  # step_test NAME CAP EXE FILTER
  local name=$1 cap=$2 exe=$3 filter=$4
  echo "===== $exe --gtest_filter=$filter" >> "$OUT/tests.log"
  run_step "$name" "$cap" tests.log \
    "$BIN/$exe" --gtest_filter="$filter" --gtest_output="json:$WORK/gtest-$exe.json" --gtest_color=no
}

# A sweep config (configs/README.md) for the harness, written into $WORK.
write_config() {  # write_config FILE NAME MODELS_JSON MODES_JSON OPTIONS_JSON
  cat > "$1" <<EOF
{"name": "$2", "description": "GPU kit (scripts/gpu-kit.sh): K = 1 on one device",
 "models": $3, "modes": $4, "world_sizes": [1], "bucket_caps_mb": [25], "link": "none",
 "backend": "$BACKEND", "timeout_s": $( ((SELF)) && echo 60 || echo 120), "options": $5}
EOF
}

# Training through `dpscale sweep`, so every line carries the harness's system description:
# `single` is train_single_gpu on each model (on a GPU the four presets at the workshop's
# single-GPU settings), `dp` one data-parallel trainer of each mode at K = 1 on the largest model
# (where the all-reduce is largest); --tf32 off (fp32) or on, each precision into its own results
# file. A run the machine disturbed is marked in its line, not rerun: the kit's time is budgeted,
# one line per run keeps the files as the summary reads them.
step_train() {  # step_train NAME CAP PRECISION single|dp
  local name=$1 cap=$2 precision=$3 part=$4 tf32=false
  [[ $precision == tf32 ]] && tf32=true
  local models modes options
  if (( SELF )); then
    models='["784,32,10", "784,64,32,10"]'
    [[ $part == dp ]] && models='["784,64,32,10"]'
    options='{"samples": 2048, "batch_size": 256, "epochs": 2, "warmup_steps": 1, "lr": 0.01, "tf32": '$tf32'}'
  else
    # The workshop's single-GPU rows: 32768 samples, batch 1024, lr 0.01, 5 epochs.
    models='["small", "medium", "large", "xlarge"]'
    [[ $part == dp ]] && models='["large"]'
    options='{"samples": 32768, "batch_size": 1024, "epochs": 5, "lr": 0.01, "tf32": '$tf32'}'
  fi
  modes='["single"]'
  [[ $part == dp ]] && modes='["naive", "interleaved", "bucketed"]'
  write_config "$WORK/$part-$precision.json" "gpu-$precision" "$models" "$modes" "$options"
  local file=train-$precision.jsonl
  run_step "$name" "$cap" - "$BIN/dpscale" sweep "$WORK/$part-$precision.json" \
    --out "$OUT/$file" --resume --disturbed-reruns 0 --mpirun "$ROOT/bin/mpirun" --bin-dir "$BIN"
  # From OUT, so the report's heading names the file as the summary's reader has it.
  (cd "$OUT" && "$BIN/dpscale" report "$file") > "$WORK/report-$precision.md" 2>&3 || log "report $file failed"
}

# The new code against the base revision's, point by point (ab.sh), into ab.jsonl.
step_ab() {  # step_ab NAME CAP
  run_step "$1" "$2" - "$KIT/kit/ab.sh" "$BASE_BIN" "$BIN" "$OUT/ab.jsonl" "$ROOT/bin/mpirun" "$SELF"
}

# The DP loop's own cost at K = 1 in one process (bench_dp_loop): single and each DP variant, block
# after block, interleaved — what trainer runs against single cannot show under their
# process-to-process spread. fp32 and TF32 on large and xlarge (the self-test: the CPU, the small
# preset at batch 64, fp32 only). --benchmark_min_time=1: with the library's trial runs single's
# blocks take about 2.2 s a model and the eight variants about 18 s, so both models fit the half
# of the cap each precision gets (at 2 s they would not).
step_dp_loop() {  # step_dp_loop NAME CAP
  local mpirun=("$ROOT/bin/mpirun" --allow-run-as-root --oversubscribe --bind-to none -np 1)
  if (( SELF )); then
    run_step "$1" "$2" - "${mpirun[@]}" "$BIN/bench_dp_loop" --backends=cpu --models=small --batch=64 --steps=4 \
      --benchmark_min_time=0.05 --benchmark_out="$OUT/bench_dp_loop-fp32.json" --benchmark_out_format=json
    return 0
  fi
  local precision extra
  for precision in fp32 tf32; do
    extra=()
    [[ $precision == tf32 ]] && extra=(--tf32)
    run_step "$1:$precision" "$(( $2 / 2 ))" - "${mpirun[@]}" "$BIN/bench_dp_loop" --backends=cuda --models=large,xlarge \
      "${extra[@]}" --steps=8 --benchmark_min_time=1 --benchmark_out="$OUT/bench_dp_loop-$precision.json" \
      --benchmark_out_format=json
  done
}

# The step's parts (bench_step parts/...): GEMMs, element-wise passes, the optimizer with its check,
# the loss read, events, against the whole step — fp32 and TF32 on large and xlarge (the self-test:
# the CPU on the small preset at batch 64).
step_parts() {  # step_parts NAME CAP
  if (( SELF )); then
    run_step "$1" "$2" - "$BIN/bench_step" --parts=cpu --models=small --batch=64 --benchmark_filter=^parts/ \
      --benchmark_min_time=0.05 --benchmark_out="$OUT/bench_step-fp32.json" --benchmark_out_format=json
    return 0
  fi
  local precision extra
  for precision in fp32 tf32; do
    extra=()
    [[ $precision == tf32 ]] && extra=(--tf32)
    run_step "$1:$precision" "$(( $2 / 2 ))" - "$BIN/bench_step" --parts=cuda --models=large,xlarge "${extra[@]}" \
      --benchmark_filter=^parts/ --benchmark_min_time=0.5 --benchmark_out="$OUT/bench_step-$precision.json" \
      --benchmark_out_format=json
  done
}

# The element-wise passes and the optimizer with its finite check (old passes against fused) at
# the presets' parameter counts, on the GPU (the self-test: the CPU, the small preset, in cache).
step_kernels() {  # step_kernels NAME CAP
  local args=(--backends=cuda --benchmark_min_time=0.05)
  (( SELF )) && args=(--backends=cpu --models=small "--benchmark_filter=/in_cache/|^optimizer/" --benchmark_min_time=0.02)
  run_step "$1" "$2" - "$BIN/bench_kernels" "${args[@]}" --benchmark_out="$OUT/bench_kernels.json" \
    --benchmark_out_format=json
}

# cuBLAS on every GEMM shape of a step, against the square sgemm and the GPU's fp32 peak, in
# CUBLAS_PEDANTIC_MATH (the trainers' exact fp32: gemm/cuda/...) and CUBLAS_DEFAULT_MATH
# (gemm/cuda-default/...), shape by shape on the same GPU (the self-test: the CPU rows of the
# small preset at batch 64).
step_gemm() {  # step_gemm NAME CAP
  local args
  if (( SELF )); then args=(--models=small --batch=64 --ceiling=256 --gemm=openblas --benchmark_filter=^gemm/cpu- --benchmark_min_time=0.02)
  else args=("--cublas-math=pedantic,default" --benchmark_filter=^gemm/cuda --benchmark_min_time=0.1); fi
  run_step "$1" "$2" - "$BIN/bench_gemm" "${args[@]}" --benchmark_out="$OUT/bench_gemm.json" --benchmark_out_format=json
}

# The all-reduce at K = 1, nccl-tests style (the self-test: MPI's own, no NCCL on a CPU).
step_allreduce() {  # step_allreduce NAME CAP
  local algos=nccl max=256M
  (( SELF )) && { algos=native; max=16M; }
  run_step "$1" "$2" bench_allreduce.txt "$ROOT/bin/mpirun" --allow-run-as-root --oversubscribe --bind-to none \
    -np 1 "$BIN/bench_allreduce" --algos "$algos" -b 8 -e "$max" -c 1 --benchmark_color=false
}
