#!/usr/bin/env bash
# bench-allreduce-rounds.sh — one all-reduce size measured in interleaved rounds, for the claims
# in bench/README.md that need a median and a spread rather than one run: native (Open MPI's
# own choice), our ring, our star, and Open MPI's ring forced through its MCA parameters
# ("ompi_ring"), at K = 2, 3, 4. Every round runs every (K, algorithm) once, so slow spells of a
# shared machine fall on all of them alike.
#
#   scripts/bench-allreduce-rounds.sh BUILD_DIR OUT.jsonl [ROUNDS=9] [SIZE=64M]
#
# OUT.jsonl: one line per (round, K, algorithm): time per all-reduce (the slowest rank's, mean
# over bench_allreduce's iterations), busbw, and the load average when the round began. The
# medians and ranges are printed at the end.
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: $0 BUILD_DIR OUT.jsonl [ROUNDS] [SIZE]" >&2; exit 2; }
BUILD=$1 OUT=$2 ROUNDS=${3:-9} SIZE=${4:-64M}
BIN="$BUILD/bin/bench_allreduce"
[[ -x "$BIN" ]] || { echo "bench-allreduce-rounds: $BIN not built" >&2; exit 2; }
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || { echo "bench-allreduce-rounds: ROUNDS must be a positive integer, got '$ROUNDS'" >&2; exit 2; }
mpi=(mpirun --bind-to none)
mpirun --version 2>&1 | grep -q "Open MPI" && mpi+=(--allow-run-as-root --oversubscribe)
ompi_ring=(--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm 4)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: > "$tmp/out.jsonl"
for ((r = 0; r < ROUNDS; r++)); do
  load=$(cut -d' ' -f1 /proc/loadavg)
  for k in 2 3 4; do
    "${mpi[@]}" -np "$k" "$BIN" -b "$SIZE" -e "$SIZE" -c --algos native,ring,star --benchmark_format=json \
      > "$tmp/ours.json" 2>/dev/null
    "${mpi[@]}" "${ompi_ring[@]}" -np "$k" "$BIN" -b "$SIZE" -e "$SIZE" -c --algos native --benchmark_format=json \
      > "$tmp/ompi.json" 2>/dev/null
    python3 - "$r" "$k" "$load" "$tmp/ours.json" "$tmp/ompi.json" >> "$tmp/out.jsonl" <<'EOF'
import json, sys
r, k, load, ours, ompi = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4], sys.argv[5]
for path, rename in ((ours, None), (ompi, "ompi_ring")):
    for b in json.load(open(path))["benchmarks"]:
        if b["wrong"] != 0:
            sys.exit(f"bench-allreduce-rounds: {b['name']}: {int(b['wrong'])} wrong elements")
        algo = rename or b["name"].split("/")[1]
        print(json.dumps({"round": r, "world_size": k, "algo": algo, "bytes": int(b["bytes"]),
                          "time_ms": round(b["real_time"] / 1e3, 3), "busbw_GBps": round(b["busbw_GBps"], 4),
                          "load1": load}))
EOF
  done
done
mv "$tmp/out.jsonl" "$OUT"

python3 - "$OUT" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print(f"# {len(rows)} measurements, {len({r['round'] for r in rows})} rounds, load {min(r['load1'] for r in rows)}-{max(r['load1'] for r in rows)}")
print("# K  algo       busbw median (min-max) GB/s   time median ms")
for k in sorted({r["world_size"] for r in rows}):
    for a in ("native", "ompi_ring", "ring", "star"):
        xs = [r for r in rows if r["world_size"] == k and r["algo"] == a]
        if not xs:
            continue
        bw = [r["busbw_GBps"] for r in xs]
        print(f"  {k}  {a:9s}  {statistics.median(bw):5.2f} ({min(bw):.2f}-{max(bw):.2f})          "
              f"{statistics.median(r['time_ms'] for r in xs):7.1f}")
    by_round = {}
    for r in rows:
        if r["world_size"] == k:
            by_round.setdefault(r["round"], {})[r["algo"]] = r["busbw_GBps"]
    ratio = [d["ring"] / d["native"] for d in by_round.values() if "ring" in d and "native" in d]
    print(f"     ring/native busbw, same round: median {statistics.median(ratio):.2f}x ({min(ratio):.2f}-{max(ratio):.2f})")
EOF
