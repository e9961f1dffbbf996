#!/usr/bin/env bash
# run.sh — the CPU GEMM libraries side by side on every GEMM of a training step
# (forward, weight gradient, input gradient per layer) of small, medium and large at the local
# batch of K = 1, 2 and 4 ranks (batch 1024), one thread: bench_gemm's Google Benchmark JSON, cut to
# the medians of REPS repetitions and the fields table.py reads, then the table
# experiments/gemm-libraries/README.md shows.
#
#   experiments/gemm-libraries/run.sh BUILD_DIR OUT.json [REPS=3]
#   python3 experiments/gemm-libraries/table.py OUT.json
#
# The environment is left as it is (OPENBLAS_CORETYPE included: the JSON's context names each
# library's kernels and any pin).
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: $0 BUILD_DIR OUT.json [REPS]" >&2; exit 2; }
BUILD=$1 OUT=$2 REPS=${3:-3}
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
[[ -x "$BUILD/bin/bench_gemm" ]] || { echo "bench-gemm-libraries: $BUILD/bin/bench_gemm not built" >&2; exit 2; }
[[ "$REPS" =~ ^[1-9][0-9]*$ ]] || { echo "bench-gemm-libraries: REPS must be a positive integer, got '$REPS'" >&2; exit 2; }
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
echo "# bench-gemm-libraries: load $(cut -d' ' -f1-3 /proc/loadavg) at the start" >&2
OMP_NUM_THREADS=1 "$BUILD/bin/bench_gemm" --models=small,medium,large --ks=1,2,4 --threads=1 --ceiling=2048 \
  --benchmark_min_time=0.1 --benchmark_repetitions="$REPS" --benchmark_report_aggregates_only=true \
  --benchmark_format=json --benchmark_out="$tmp" --benchmark_out_format=json > /dev/null
python3 - "$tmp" "$OUT" "$(cut -d' ' -f1-3 /proc/loadavg)" <<'PYEOF'
import json, sys
src, dest, load = sys.argv[1:]
data = json.load(open(src))
keep = ("name", "run_name", "run_type", "aggregate_name", "real_time", "time_unit", "GFLOPS", "pct_of_ceiling")
rows = [{k: b[k] for k in keep if k in b} for b in data["benchmarks"]
        if b.get("run_type") != "aggregate" or b.get("aggregate_name") == "median"]
ctx = data["context"]
ctx["load_at_end"] = load
with open(dest, "w") as f:
    f.write('{"context": ' + json.dumps(ctx) + ',\n "benchmarks": [\n' + ",\n".join(json.dumps(r) for r in rows) + "\n]}\n")
PYEOF
python3 "$HERE/experiments/gemm-libraries/table.py" "$OUT"
