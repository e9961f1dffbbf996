#!/usr/bin/env python3
"""table.py — the two-node runs of experiments/two-nodes/data/, one row per run: the all-reduce
algorithm, the nodes, the blocking all-reduce time per epoch (comm_s) and the epoch.

    python3 experiments/two-nodes/table.py experiments/two-nodes/data/naive-small-k4-2x2-200mbit.jsonl

Bad input (a missing file, a line that is no record): one line, exit 2, nothing on stdout.
"""
import json
import sys


def main(argv):
    if len(argv) != 1:
        print("usage: table.py RESULTS.jsonl", file=sys.stderr)
        return 2
    rows = []
    try:
        with open(argv[0], encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                r = json.loads(line)
                rows.append(f"| {r['allreduce']} | {r['world_size']} | {r['n_nodes']} | {r['comm_s']:.2f} s | "
                            f"{r['avg_epoch_s']:.2f} s |")
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"table.py: {argv[0]}: {e}", file=sys.stderr)
        return 2
    print("| all-reduce | K | nodes | comm per epoch | epoch |")
    print("|---|---:|---:|---:|---:|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
