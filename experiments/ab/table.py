#!/usr/bin/env python3
"""table.py — the table of experiments/ab/run.sh's OUT/sessions.jsonl (experiments/ab/README.md).

    python3 experiments/ab/table.py OUT/sessions.jsonl [--lines]

One row per condition: the sessions, how many ended in each verdict (a session's verdict is its
exit status: 1 a regression in some curve, 3 undecided, 0 same or better), the regressions by
metric (a throughput curve, a speedup curve), the median session time and the load average
before the sessions. For `all5` (every trainer 5% slower) a last column: what `dpscale compare`
said of the same two files, which judges speedups only. --lines adds a second table: the
sessions each decision line (the fraction of the minimum effect a significant estimate must
reach) would call a regression, with two rows of totals: every A/A session, and every session
whose B is 5% slower (dp5, all5).
"""
import json
import statistics
import sys

ORDER = ["idle", "busy1", "busy2", "dp5", "dp10", "all5"]
WHAT = {
    "idle": "A/A, idle",
    "busy1": "A/A, one busy loop",
    "busy2": "A/A, two busy loops",
    "dp5": "B's data-parallel steps 5% slower",
    "dp10": "B's data-parallel steps 10% slower",
    "all5": "B 5% slower everywhere (single too)",
}
GROUPS = [("every A/A session", ("idle", "busy1", "busy2")),
          ("every 5% change", ("dp5", "all5"))]


def regressed(row, metric):
    return any(c["verdict"] == "regression" and c["curve"].startswith(metric) for c in row["curves"])


def lines_table(rows, conds, min_effect=5.0, alpha=0.05, fractions=(0.5, 0.75, 1.0)):
    """How many sessions of each condition some curve would call a regression if the estimate
    had to reach each fraction of the minimum effect (the p values as judged)."""
    head = "| condition | sessions | " + " | ".join(
        f"regression at {f:g} × min effect ({f * min_effect:g}%)" for f in fractions) + " |"
    print(head)
    print("|" + "---|" * (2 + len(fractions)))
    def row(name, rs):
        cells = []
        for f in fractions:
            n = sum(any(x.get("p_holm") is not None and x["p_holm"] < alpha and x.get("effect_pct") is not None
                        and x["effect_pct"] <= -f * min_effect for x in r["curves"]) for r in rs)
            cells.append(str(n))
        print(f"| {name} | {len(rs)} | " + " | ".join(cells) + " |")

    for c in conds:
        row(WHAT[c], [r for r in rows if r["condition"] == c])
    # The totals the choice of the line is argued from (README.md), summed here so no prose
    # has to add the rows up by hand.
    for name, group in GROUPS:
        rs = [r for r in rows if r["condition"] in group]
        if rs:
            row(f"**{name}**", rs)


def main(path, lines=False):
    rows = [json.loads(line) for line in open(path) if line.strip()]
    conds = [c for c in ORDER if any(r["condition"] == c for r in rows)]
    head = ("| condition | sessions | regression | undecided | same | throughput curve regressed | "
            "speedup curve regressed | median time (s) | load average before | `dpscale compare` on the same files |")
    print(head)
    print("|" + "---|" * head.count(" | ") + "---|")
    for c in conds:
        rs = [r for r in rows if r["condition"] == c]
        n = len(rs)
        reg = sum(r["exit"] == 1 for r in rs)
        und = sum(r["exit"] == 3 for r in rs)
        same = sum(r["exit"] == 0 for r in rs)
        other = n - reg - und - same
        thr = sum(regressed(r, "throughput") for r in rs)
        spd = sum(regressed(r, "speedup") for r in rs)
        t = statistics.median(r["seconds"] for r in rs)
        loads = [r["load1_before"] for r in rs]
        comp = "—"
        if c == "all5":
            cs = [r["compare"] for r in rs if "compare" in r]
            cs_same = sum(x["exit"] == 0 for x in cs)
            cs_reg = sum(x["exit"] == 1 for x in cs)
            cs_und = sum(x["exit"] == 3 for x in cs)
            comp = f"{cs_same} same, {cs_reg} regression, {cs_und} undecided"
        failed = f" ({other} failed)" if other else ""
        print(f"| {WHAT[c]} | {n}{failed} | {reg} | {und} | {same} | {thr} | {spd} | {t:.0f} | "
              f"{min(loads):.1f}–{max(loads):.1f} | {comp} |")
    if lines:
        print()
        lines_table(rows, conds)


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--lines"]
    main(args[0] if args else "sessions.jsonl", "--lines" in sys.argv[1:])
