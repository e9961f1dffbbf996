#!/usr/bin/env bash
# bench-micro.sh — what `make bench-micro` runs: the Google Benchmark micro-benchmarks on the CPU
# (bench/README.md explains every number), then the issue's headline numbers.
#
#   scripts/bench-micro.sh [BUILD_DIR]          default build dir: build
#   QUICK=1 scripts/bench-micro.sh build        fewer shapes and sizes, one repetition (1m35s on the 2-core VM)
#   REPS=5  scripts/bench-micro.sh build        repetitions per benchmark (default 3; medians shown)
#
# Runs bench_gemm, bench_kernels, bench_step, bench_dp_loop (mpirun -np 1), then bench_allreduce
# under mpirun at K = 2, 3, 4 (real shared-memory times), and ring vs star again on an emulated
# 10 GbE link.
# JSON for every run lands in BUILD_DIR/bench-micro/ (the library's --benchmark_out), and
# bench/summarize.py prints the summary from it; `bench/summarize.py BUILD_DIR/bench-micro --keep
# bench/results/micro` makes the small copy that bench/README.md's tables are read from.
set -euo pipefail
BUILD=${1:-build}
BIN="$BUILD/bin"
OUT="$BUILD/bench-micro"
REPS=${REPS:-3}
QUICK=${QUICK:-0}
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mkdir -p "$OUT"
# Everything printed also goes to $OUT/console.txt (the nccl-tests-style tables are only there);
# `bench/summarize.py $OUT --keep DIR` copies it with the JSON.
exec > >(tee "$OUT/console.txt") 2>&1

for exe in bench_gemm bench_kernels bench_step bench_dp_loop bench_allreduce; do
  [[ -x "$BIN/$exe" ]] || { echo "bench-micro: $BIN/$exe not built (run: cmake --build $BUILD)" >&2; exit 2; }
done
command -v mpirun >/dev/null || { echo "bench-micro: mpirun not found (install openmpi-bin)" >&2; exit 2; }

# Medians of REPS repetitions; counters as table columns.
common=(--benchmark_repetitions="$REPS" --benchmark_report_aggregates_only=true --benchmark_counters_tabular=true)
[[ "$REPS" -le 1 ]] && common=(--benchmark_counters_tabular=true)
cores=$(nproc)
echo "# dpscale micro-benchmarks on $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $cores core(s)"
echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg) (other work on this machine shows up as noise)"

gemm_args=()
kernels_args=(--backends=cpu)
allreduce_args=()
if [[ "$QUICK" == 1 ]]; then
  gemm_args=(--models=medium --ceiling=2048)
  kernels_args+=(--models=medium)
  allreduce_args=(-b 1K -e 64M -f 4)
fi

echo; echo "## GEMM: every GEMM of a training step (batch 1024), CPU backend, 1 BLAS thread"
"$BIN/bench_gemm" "${gemm_args[@]}" "${common[@]}" --benchmark_out="$OUT/gemm.json" --benchmark_out_format=json

echo; echo "## Element-wise passes vs memcpy of the same bytes, and the update with its finite check, CpuDevice, 1 thread"
"$BIN/bench_kernels" "${kernels_args[@]}" "${common[@]}" --benchmark_out="$OUT/kernels.json" --benchmark_out_format=json

echo; echo "## Training step vs its GEMMs alone (medium, batch 1024, 1 thread)"
"$BIN/bench_step" "${common[@]}" --benchmark_out="$OUT/step.json" --benchmark_out_format=json

# Open MPI needs these to run as root and to start more ranks than cores; other MPIs do not
# know them.
mpi_flags=()
if mpirun --version 2>&1 | grep -q "Open MPI"; then
  mpi_flags=(--allow-run-as-root --oversubscribe)
fi

echo; echo "## The DP loop at K = 1 against single, in one process (small, batch 256, 1 thread)"
mpirun "${mpi_flags[@]}" -np 1 "$BIN/bench_dp_loop" --backends=cpu --models=small --batch=256 --steps=4 "${common[@]}" \
  --benchmark_out="$OUT/dp_loop.json" --benchmark_out_format=json
for k in 2 3 4; do
  echo
  echo "## All-reduce, K = $k ranks (mpirun -np $k), float32 sum"
  if (( k > cores )); then
    echo "# NOTE: $k ranks on $cores core(s): OVERSUBSCRIBED. Ranks time-slice the cores, so these"
    echo "# times include waiting for a core; they show the star's growing cost, not link speed."
  fi
  # JSON on stdout into the file; the nccl-tests-style table comes on stderr.
  mpirun "${mpi_flags[@]}" -np "$k" "$BIN/bench_allreduce" "${allreduce_args[@]}" -c \
    --benchmark_repetitions="$REPS" --benchmark_format=json > "$OUT/allreduce_np$k.json"
done

# On one machine the ranks share memory, not links, so the star's bottleneck (rank 0's link
# carries 2(K-1) whole buffers) cannot show in real times; the trainers' link emulation shows it.
for k in 2 3 4; do
  echo
  echo "## The workshop's naive (star) vs ring, K = $k, on an EMULATED 10 GbE link (--link eth10:"
  echo "## each all-reduce held until its own pattern's alpha-beta time; real data still moves)"
  mpirun "${mpi_flags[@]}" -np "$k" "$BIN/bench_allreduce" --algos ring,star -b 1M -e 64M -f 4 -c \
    --link eth10 --benchmark_format=json > "$OUT/allreduce_eth10_np$k.json"
done

echo
if command -v python3 >/dev/null; then
  python3 "$HERE/bench/summarize.py" "$OUT"
else
  echo "# (python3 not found: summary skipped; JSON is in $OUT)"
fi
