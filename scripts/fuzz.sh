#!/usr/bin/env bash
# fuzz.sh — builds the libFuzzer targets of fuzz/ (clang, ASan + UBSan, in build-fuzz/) and runs
# each for SECONDS (default 10), starting from its committed corpus fuzz/corpus/<target>/.
#   scripts/fuzz.sh            CI: 10 s per target
#   scripts/fuzz.sh 600        ten minutes per target
#   FUZZ_TARGETS="npy idx" scripts/fuzz.sh 3600
# New inputs libFuzzer finds go to build-fuzz/fuzz/work/<target>/ (never into the committed
# corpus); a crash, leak, sanitizer report, hang (>30 s: not less, a loaded machine can stall
# ASan's allocator for seconds) or allocation over 1 GiB saves its input in
# build-fuzz/fuzz/crashes/<target>/ and makes the script exit 1 after the other targets ran. Reproduce with
#   build-fuzz/fuzz/fuzz_<target> build-fuzz/fuzz/crashes/<target>/crash-...
set -euo pipefail
cd "$(dirname "$0")/.."

SECS=${1:-10}
if ! [[ "$SECS" =~ ^[1-9][0-9]{0,5}$ ]]; then
  echo "fuzz.sh: SECONDS must be a whole number from 1 to 999999 (got '$SECS')" >&2
  exit 2
fi
BUILD=${FUZZ_BUILD:-build-fuzz}
TARGETS=${FUZZ_TARGETS:-"width_list link_spec npy idx safetensors sweep_config results_line gpt_spec token_data"}
if ! command -v clang++ >/dev/null; then
  echo "fuzz.sh: clang++ not found (scripts/install-deps.sh installs clang and libclang-rt-dev)" >&2
  exit 2
fi

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$BUILD" -DDPSCALE_FUZZ=ON -DDPSCALE_WITH_CUDA=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ "${launcher[@]}" >/dev/null
build_targets=()
for t in $TARGETS; do build_targets+=("fuzz_$t"); done
cmake --build "$BUILD" --target "${build_targets[@]}" -j "$(nproc)" >/dev/null

# Every target runs, whatever an earlier one did: a crash (a committed seed's included) is
# reported with its input, its sanitizer lines and the log's tail, and the script exits 1 at
# the end naming every target that failed. Nothing that reads a log may end the script (pipefail
# would, on a grep that finds nothing), hence the "|| true" on each.
failed=()
for t in $TARGETS; do
  work="$BUILD/fuzz/work/$t" crashes="$BUILD/fuzz/crashes/$t" log="$BUILD/fuzz/$t.log"
  mkdir -p "$work" "$crashes"
  start=$(date +%s)
  set +e
  "$BUILD/fuzz/fuzz_$t" "$work" "fuzz/corpus/$t" -max_total_time="$SECS" -timeout=30 -rss_limit_mb=2048 \
    -malloc_limit_mb=1024 -artifact_prefix="$crashes/" -print_final_stats=1 >"$log" 2>&1
  rc=$?
  set -e
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1 || true)
  cov=$( (grep -o 'cov: [0-9]*' "$log" || true) | tail -1 | cut -d' ' -f2)
  if [ "$rc" -eq 0 ]; then
    echo "fuzz $t: ok, $((  $(date +%s) - start )) s, ${runs:-?} inputs, coverage ${cov:-?} edges"
    continue
  fi
  failed+=("$t")
  # libFuzzer names the input it saved ("Test unit written to PATH"); a crash while it read the
  # corpus happens before any new input, so the input is one of the seeds it was reading.
  input=$( (grep -o 'Test unit written to [^ ]*' "$log" || true) | tail -1 | sed 's/^Test unit written to //')
  if ! grep -q "INITED" "$log"; then
    where="while reading the corpus (a committed seed in fuzz/corpus/$t/ or a saved input in $work/)"
  else
    where="after ${runs:-?} inputs"
  fi
  echo "fuzz $t: FAILED (exit $rc) $where; input ${input:-not saved}; log $log:"
  excerpt=$( (grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error|.*terminate called|.*what\(\)|.*deadly signal|.*ALARM|.*out-of-memory)' "$log" || true) | head -8)
  [ -n "$excerpt" ] || excerpt=$(tail -15 "$log")
  printf '%s\n' "$excerpt" | sed 's/^/    /'
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: FAILED: ${failed[*]} (of: $TARGETS)"
  exit 1
fi
