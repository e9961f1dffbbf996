#!/usr/bin/env python3
"""table.py — the detection table of a straggler experiment's runs.jsonl.

Per condition and world size: runs, how many named the injected rank with the injected cause
(detected), the right rank with another cause, labelled a rank contended (its excess matched by
its run delay: not a straggler), another or no rank; for clean runs, how many named a straggler
(false positives) and how many labelled a rank contended. Then the largest excess share of each
cause over the runs (the noise floor the rule's 5% threshold sits above), the run delay share
(records that carry it) and the load average the runs saw.
"""
import json
import re
import sys
from collections import defaultdict

SHARES = re.compile(r"compute ([0-9.]+)%, loader ([0-9.]+)%, link ([0-9.]+)%")


def main(path):
    runs = [json.loads(l) for l in open(path) if l.strip()]
    groups = defaultdict(list)
    for r in runs:
        groups[(r["condition"], r["world_size"])].append(r)
    order = sorted(groups, key=lambda g: (g[0] != "clean", g[0], g[1]))
    print("| condition | K | runs | detected (rank + cause) | right rank, other cause | labelled contended | missed / wrong rank | failed |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for cond, k in order:
        rs = groups[(cond, k)]
        ok = [r for r in rs if r["status"] == "ok"]
        failed = len(rs) - len(ok)
        contended = sum(r.get("contended_rank") is not None for r in ok)
        if cond == "clean":
            fp = sum(r["straggler_rank"] is not None for r in ok)
            print(f"| clean (false positives) | {k} | {len(ok)} | — | — | {contended} | {fp} named a straggler | {failed} |")
            continue
        hit = sum(r["straggler_rank"] == r["injected_rank"] and r["straggler_cause"] == r["injected_cause"] for r in ok)
        other = sum(r["straggler_rank"] == r["injected_rank"] and r["straggler_cause"] != r["injected_cause"] for r in ok)
        miss = len(ok) - hit - other - contended
        print(f"| {cond}% | {k} | {len(ok)} | {hit} ({100 * hit / max(1, len(ok)):.0f}%) | {other} | {contended} | {miss} | {failed} |")
    print()
    print("| condition | K | largest compute / loader / link excess, % of the step (max over runs) | run delay share: median (max) | load average (1 min) before a run: min–max |")
    print("|---|---:|---|---|---|")
    for cond, k in order:
        ok = [r for r in groups[(cond, k)] if r["status"] == "ok"]
        if not ok:
            continue
        shares = [tuple(float(x) for x in SHARES.search(r["diagnosis"]).groups()) for r in ok]
        top = [max(s[i] for s in shares) for i in range(3)]
        low = [min(s[i] for s in shares) for i in range(3)]
        loads = [r["load1_before"] for r in ok]
        delay = sorted(r["run_delay_share"] for r in ok if r.get("run_delay_share") is not None)
        delay_text = f"{100 * delay[len(delay) // 2]:.0f}% ({100 * delay[-1]:.0f}%)" if delay else "—"
        name = "clean" if cond == "clean" else cond + "%"
        print(f"| {name} | {k} | max {top[0]:.1f} / {top[1]:.1f} / {top[2]:.1f} (min {low[0]:.1f} / {low[1]:.1f} / {low[2]:.1f}) "
              f"| {delay_text} | {min(loads):.1f}–{max(loads):.1f} |")


if __name__ == "__main__":
    main(sys.argv[1])
