#!/usr/bin/env bash
# sanitize.sh — builds dpscale with a sanitizer in a build directory of its own and runs the
# tests that fit it (CPU only; CI steps in .ci/run).
#   scripts/sanitize.sh asan   ASan + UBSan (build-asan/): the model library's tests (npy,
#                              safetensors, IDX readers, forward/backward, training)
#   scripts/sanitize.sh tsan   TSan (build-tsan/): MpiCommunicator's comm thread, tests/comm's
#                              communicator tests at 2 and 4 ranks, and the collective watchdog
#                              firing while two threads wait under it (comm.watchdog.fires)
#   SANITIZE_FULL=1 ...        also the MPI comm and harness tests (asan), and the interleaved and
#                              bucketed trainers under mpirun -np 2 (tsan): not yet run to the end
#                              here (the shared build machine did not finish building them), so
#                              not in CI until they have
# Left out always, for the CI budget: the trainers' multi-rank training tests (2-3x slower under
# ASan; their parsers are fuzzed), the benchmarks, the timing-based CI regression test (a
# sanitizer changes the timings it judges), and under TSan the all-reduce algorithm tests (one
# thread per rank; they ran past CTest's 120 s). Suppressions: scripts/sanitize/ (Open MPI and
# its libraries only, which are not instrumented; never our code). README: "Fuzzing and sanitizers".
set -euo pipefail
cd "$(dirname "$0")/.."

kind=${1:-}
case "$kind" in
  asan) flag=address ;;
  tsan) flag=thread ;;
  *) echo "sanitize.sh: say asan or tsan (got '${kind}')" >&2; exit 2 ;;
esac
full=${SANITIZE_FULL:-0}
BUILD=${SANITIZE_BUILD:-build-$kind}
supp="$PWD/scripts/sanitize"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$BUILD" -DDPSCALE_SANITIZE="$flag" -DDPSCALE_WITH_CUDA=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "${launcher[@]}" >/dev/null

if [ "$kind" = asan ]; then
  targets=(test_models)
  [ "$full" = 1 ] && targets+=(test_allreduce_mpi test_communicator_mpi test_harness_config test_harness_results
                               test_harness_report test_harness_compare test_harness_subprocess)
  export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1"
  export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
else
  targets=(test_communicator_mpi watchdog_fires)
  [ "$full" = 1 ] && targets+=(train_dp_interleaved train_ddp_bucketed)
  tsan_tests='^comm\.(communicator\.np[24]|watchdog\.fires)$'
  export TSAN_OPTIONS="suppressions=$supp/tsan.supp:halt_on_error=1:second_deadlock_stack=1:report_signal_unsafe=0"
fi
start=$(date +%s)
cmake --build "$BUILD" -j "$(nproc)" --target "${targets[@]}" >/dev/null
echo "sanitize $kind: built in $(( $(date +%s) - start )) s"

# Open MPI's memory hooks (the patcher) fight the sanitizers' allocator; TCP between local ranks
# is enough for these tests.
export OMPI_MCA_memory=^patcher OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=lo
start=$(date +%s)
if [ "$kind" = asan ]; then
  if [ "$full" = 1 ]; then
    # Everything those executables hold; the Python tests (plots, interop, kit) and GPU tests not.
    ctest --test-dir "$BUILD" --output-on-failure --no-tests=error -j "$(nproc)" -E '_NOT_BUILT|^plot_|^kit_|^interop|CudaVsCpu|Nccl' -LE gpu
  else
    "$BUILD/bin/test_models" --gtest_filter='-*CudaVsCpu*' >"$BUILD/test_models.log" 2>&1 ||
      { tail -60 "$BUILD/test_models.log" >&2; exit 1; }
  fi
else
  # --no-tests=error: a pattern that matches nothing (a renamed test) fails the step instead of
  # passing it with zero tests run; the count check catches a pattern that lost one of the three.
  ctest --test-dir "$BUILD" --output-on-failure --no-tests=error -R "$tsan_tests" | tee "$BUILD/ctest.log"
  ran=$(sed -n 's/.*tests passed, [0-9]* tests failed out of \([0-9]*\)$/\1/p' "$BUILD/ctest.log")
  if [ "${ran:-0}" -ne 3 ]; then
    echo "sanitize tsan: expected 3 tests to match '$tsan_tests', ctest ran ${ran:-none}" >&2
    exit 1
  fi
  if [ "$full" = 1 ]; then
    # The trainers whose backward pass hands tensors to the comm thread: a short run of each.
    mpi=(mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2)
    common=(--backend cpu --model 784,128,64,10 --samples 2048 --batch-size 256 --epochs 2 --quiet)
    for run in "train_dp_interleaved" "train_ddp_bucketed --bucket-cap-mb 0.05"; do
      read -r exe extra <<<"$run"
      if ! "${mpi[@]}" "$BUILD/bin/$exe" "${common[@]}" $extra >"$BUILD/$exe.log" 2>&1; then
        echo "sanitize tsan: $exe failed; its output:" >&2
        grep -v '^RESULTS_JSON' "$BUILD/$exe.log" | head -60 >&2
        exit 1
      fi
      echo "sanitize tsan: $exe -np 2 ran clean"
    done
  fi
fi
echo "sanitize $kind: tests passed in $(( $(date +%s) - start )) s"
