#!/usr/bin/env python3
"""table.py — the medians of experiments/heap-policy/run.sh's OUT.jsonl, per variant.

    python3 experiments/heap-policy/table.py OUT.jsonl

A bench_allreduce file (one line per round, variant and size): native busbw at K = 2 per size,
median (min-max) over the rounds. A trainer file (one line per round and variant, holding the
run's record): train_dp_naive's comm_s per epoch, median (min-max). A file of single runs
labelled by `heap_policy` (the runs under load, one per policy and algorithm): each run's
comm_s. Bad input (no file, a line that is not one of these): one line, exit 2, nothing on
stdout.
"""
import json
import statistics
import sys


def lines(rows):
    if all("heap_policy" in r and "record" in r for r in rows):
        out = ["# train_dp_naive, one run each: comm_s per epoch by heap policy and all-reduce"]
        for r in rows:
            out.append(f"  policy {r['heap_policy']:<4} {r['record']['allreduce']:<7} {r['record']['comm_s']:.2f} s")
        return out
    if all("record" in r for r in rows):
        out = ["# train_dp_naive --model large, K = 2: comm_s per epoch, median (min-max) over rounds"]
        for v in dict.fromkeys(r["variant"] for r in rows):
            xs = [r["record"]["comm_s"] for r in rows if r["variant"] == v]
            out.append(f"  {v:<15} {statistics.median(xs):.2f} s ({min(xs):.2f}-{max(xs):.2f})")
        return out
    sizes = sorted({r["bytes"] for r in rows})
    out = ["# native busbw at K = 2, GB/s: median (min-max) over rounds",
           "# variant     " + "  ".join(f"{s >> 20:>3} MiB          " for s in sizes)]
    for v in dict.fromkeys(r["variant"] for r in rows):
        cells = []
        for s in sizes:
            xs = [r["busbw_GBps"] for r in rows if r["variant"] == v and r["bytes"] == s]
            cells.append(f"{statistics.median(xs):.2f} ({min(xs):.2f}-{max(xs):.2f})")
        out.append(f"  {v:<11} " + "  ".join(f"{c:<19}" for c in cells))
    return out


def main(argv):
    if len(argv) != 1:
        print("usage: table.py OUT.jsonl", file=sys.stderr)
        return 2
    try:
        with open(argv[0], encoding="utf-8") as f:
            rows = [json.loads(l) for l in f if l.strip()]
        out = lines(rows)
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"table.py: {argv[0]}: not a heap-policy run's file ({e})", file=sys.stderr)
        return 2
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
