#!/usr/bin/env python3
"""contended_table.py — the label counts of experiments/straggler/contended.sh's runs.jsonl.

Per condition: how many runs named rank 1 contended (compute), a straggler on rank 1 (compute),
nobody, or anything else, how many said bottleneck `contended`; and, from the diagnosis line,
the named rank's compute excess and what was left of it once its extra run delay was taken off,
both as shares of the step (the rule: contended when what is left is under 5%), over the runs
that named one.

  python3 experiments/straggler/contended_table.py OUT/runs.jsonl
"""
import json
import re
import statistics
import sys

# The named rank's compute excess and run delay, whichever rank the line names.
EXCESS = re.compile(r"(?:contended \(compute|rank [0-9]+ \(compute\):) \+([0-9.]+) ms per step, run delay ([+-][0-9.]+) ms")
SHARE = re.compile(r"largest excess: compute ([0-9.]+)%")


def label(r):
    if r["status"] != "ok":
        return "failed"
    if r.get("contended_rank") == 1 and r.get("contended_cause") == "compute":
        return "contended"
    if r.get("straggler_rank") == 1 and r.get("straggler_cause") == "compute":
        return "straggler"
    if r.get("contended_rank") is None and r.get("straggler_rank") is None:
        return "none"
    return "other"


def shares(r):
    """(excess, left) as % of the step, or None where the line gives no run delay."""
    share = SHARE.search(r.get("diagnosis") or "")
    m = EXCESS.search(r.get("diagnosis") or "")
    if not share or not m or float(m.group(1)) == 0:
        return None
    excess_pct = float(share.group(1))
    step_ms = float(m.group(1)) / (excess_pct / 100.0)
    left_ms = float(m.group(1)) - float(m.group(2))
    return excess_pct, 100.0 * left_ms / step_ms


def span(values):
    if not values:
        return "—"
    return f"{statistics.median(values):.1f} ({min(values):.1f} to {max(values):.1f})"


def main(path):
    runs = [json.loads(line) for line in open(path)]
    order = []
    for r in runs:
        if r["condition"] not in order:
            order.append(r["condition"])
    print("| condition | runs | contended (rank 1) | straggler (rank 1, compute) | none | other | failed "
          "| bottleneck `contended` | compute excess, % of step: median (min to max) "
          "| left after run delay, %: median (min to max) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|---|")
    for cond in order:
        rs = [r for r in runs if r["condition"] == cond]
        counts = {k: 0 for k in ("contended", "straggler", "none", "other", "failed")}
        for r in rs:
            counts[label(r)] += 1
        bott = sum(1 for r in rs if r.get("bottleneck") == "contended")
        sh = [s for s in (shares(r) for r in rs if r["status"] == "ok") if s]
        print(f"| {cond} | {len(rs)} | {counts['contended']} | {counts['straggler']} | {counts['none']} "
              f"| {counts['other']} | {counts['failed']} | {bott} | {span([s[0] for s in sh])} "
              f"| {span([s[1] for s in sh])} |")
    loads = [r["load1_before"] for r in runs]
    print(f"\nload average (1 min) before a run: {min(loads):.2f}–{max(loads):.2f}; "
          f"versions: {', '.join(sorted({r.get('version') or '?' for r in runs}))}")


if __name__ == "__main__":
    main(sys.argv[1])
