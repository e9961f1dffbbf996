#!/usr/bin/env python3
"""table.py — the tables of experiments/contention/run.sh from its runs directory.

Per condition (idle, busy1, busy2: busy loops beside the sweep) and the sweeps' nice value, per
mode: the runs, each rank's run delay as a share of the epochs' time (median, and the largest
over the runs), the run's share (the record's `run_delay_share`: its largest rank's), how many
runs the disturbance rule called disturbed (the sweep's verdict, `system.state.disturbed`), and
how many the machine-state rule it replaced would have (others_cpus > 0.25, or the probe more
than 30% below the median probe of every line here), with the load average and others' CPU.

    python3 experiments/contention/table.py RUNS_DIR
"""
import collections
import glob
import json
import os
import statistics
import sys

ORDER = {"idle": 0, "busy1": 1, "busy2": 2}
MODES = ["single", "naive", "interleaved", "bucketed"]


def lines(runs_dir):
    for path in sorted(glob.glob(os.path.join(runs_dir, "*.jsonl"))):
        cond, nice, _ = os.path.basename(path)[: -len(".jsonl")].split(".")  # COND.nNICE.rROUND
        for text in open(path):
            if text.strip():
                j = json.loads(text)
                j["_cond"], j["_nice"] = cond, int(nice[1:])
                yield j


def pct(v):
    return f"{100 * v:.1f}%"


def main():
    rows = [j for j in lines(sys.argv[1]) if j.get("status") == "ok"]
    probes = [p for j in rows for p in (j["system"]["state"]["probe_before_gflops"], j["system"]["state"]["probe_after_gflops"]) if p > 0]
    usual = statistics.median(probes) if probes else 0.0

    def old_rule(st):
        worst = min(st["probe_before_gflops"] or usual, st["probe_after_gflops"] or usual)
        return st["others_cpus"] > 0.25 or (usual > 0 and 1 - worst / usual > 0.30) or st["steal_pct"] > 5.0

    cells = collections.defaultdict(list)
    for j in rows:
        cells[(j["_cond"], j["_nice"], j["mode"])].append(j)
    print("| condition | nice | mode | runs | run delay per rank, median (max) | run's share: median (max) | "
          "disturbed: run delay rule | disturbed: machine-state rule | load (1 min) | others' CPU |")
    print("|---|---:|---|---:|---|---|---:|---:|---|---|")
    for cond, nice, mode in sorted(cells, key=lambda c: (ORDER.get(c[0], 9), -c[1], MODES.index(c[2]) if c[2] in MODES else 9)):
        rs = cells[(cond, nice, mode)]
        k = max(len(j.get("per_rank_run_delay_s") or []) for j in rs)
        per_rank = []
        for r in range(k):
            v = [j["per_rank_run_delay_s"][r] * len(j["epoch_times_s"]) / sum(j["epoch_times_s"])
                 for j in rs if len(j.get("per_rank_run_delay_s") or []) == k]
            per_rank.append(f"{pct(statistics.median(v))} ({pct(max(v))})")
        shares = [j["run_delay_share"] for j in rs if j.get("run_delay_share") is not None]
        new = sum(1 for j in rs if j["system"]["state"].get("disturbed"))
        old = sum(1 for j in rs if old_rule(j["system"]["state"]))
        loads = [max(j["system"]["state"]["load1_before"], j["system"]["state"]["load1_after"]) for j in rs]
        others = [j["system"]["state"]["others_cpus"] for j in rs]
        print(f"| {cond} | {nice} | {mode} | {len(rs)} | {' / '.join(per_rank) or '—'} | "
              f"{pct(statistics.median(shares)) + ' (' + pct(max(shares)) + ')' if shares else '—'} | {new} of {len(rs)} | "
              f"{old} of {len(rs)} | {min(loads):.1f}–{max(loads):.1f} | {statistics.median(others):.2f} |")
    print(f"\nusual probe (median of every line's): {usual:.1f} GFLOP/s; runs: {len(rows)} ok")


if __name__ == "__main__":
    main()
