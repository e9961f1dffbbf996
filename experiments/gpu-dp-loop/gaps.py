#!/usr/bin/env python3
"""gaps.py — where a step's time goes, from the traces of experiments/gpu-dp-loop/run.sh.

For each traced run (OUT/REV-PRECISION-MODEL-MODE-rROUND.json[.gz]) the medians over its traced
steps of: the cycle (one step's start to the next's), the step span (batch fetch to optimizer
end, on the device's clock), the gap between a step's end and the next one's start (the device
waiting for the host), and the step's parts on the compute track: forward + loss, backward (every
tensor's span), the wait in finish() (the exposed all-reduce) and the optimizer. The other rows
add their difference from the single run of the same model and round (+us).

    python3 experiments/gpu-dp-loop/gaps.py OUT [OUT...]    # one table, every run of every folder
    python3 experiments/gpu-dp-loop/gaps.py --calls OUT [OUT...]
        # per run: the comm track's calls a step, the median duration of a call after the first
        # and the median gap from one call's end to the next one's start, over every traced step
    python3 experiments/gpu-dp-loop/gaps.py --spans OUT [OUT...]
        # per revision, model and round: each compute-track span (forward + loss, every tensor's
        # backward, the optimizer), single's median and each other mode's difference from it
"""
import glob
import gzip
import json
import os
import re
import statistics
import sys

NAME = re.compile(r"^(?P<rev>[a-z0-9]+)-(?P<prec>fp32|tf32)-(?P<model>[a-z0-9]+)-(?P<mode>[a-z]+)-r(?P<round>\d+)\.json(\.gz)?$")
# The probe's modes in its order (run.sh): the fused* ones are naivefused with one of
# NCCL's or CUDA's settings changed.
MODES = ["single", "singlempi", "naive", "naivefused", "interleaved", "bucketed", "fusednocumem", "fusednonvls",
         "fusedoneconn"]
PARTS = ("cycle", "step", "gap", "forward", "backward", "finish", "optimizer")


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)["traceEvents"]


def parts_of(events):
    """Median microseconds of each part over the traced steps of rank 0."""
    steps = {}
    for e in events:
        if e.get("ph") != "X" or e.get("pid") != 0:
            continue
        n = e.get("args", {}).get("step")
        if n is None:
            continue
        s = steps.setdefault(n, {"forward": 0.0, "backward": 0.0, "finish": 0.0, "optimizer": 0.0})
        name, dur = e["name"], e["dur"]
        if e["tid"] == 0:
            s["start"], s["end"] = e["ts"], e["ts"] + dur
        elif name.startswith("forward"):
            s["forward"] += dur
        elif name.startswith("backward"):
            s["backward"] += dur
        elif name.startswith("wait in finish"):
            s["finish"] += dur
        elif name.startswith("optimizer"):
            s["optimizer"] += dur
    order = sorted(n for n in steps if "start" in steps[n])
    rows = []
    for a, b in zip(order, order[1:]):
        if b != a + 1:
            continue
        s, t = steps[a], steps[b]
        rows.append({"cycle": t["start"] - s["start"], "step": s["end"] - s["start"], "gap": t["start"] - s["end"],
                     **{k: s[k] for k in ("forward", "backward", "finish", "optimizer")}})
    if not rows:
        return None
    return {k: statistics.median(r[k] for r in rows) for k in PARTS} | {"n": len(rows)}


def spans_of(events):
    """Median microseconds of each compute-track span of rank 0 over the traced steps, in trace order."""
    durs = {}
    for e in events:
        if e.get("ph") == "X" and e.get("pid") == 0 and e.get("tid") == 1 and not e["name"].startswith("wait in finish"):
            durs.setdefault(e["name"], []).append(e["dur"])
    return {name: statistics.median(d) for name, d in durs.items()}


def print_spans(traces):
    """One table per revision, model and round: a row per span, single's median, the others' differences."""
    groups = {}
    for (rev, prec, model, rnd, mode), events in traces.items():
        groups.setdefault((rev, prec, model, rnd), {})[mode] = spans_of(events)
    for (rev, prec, model, rnd), modes in sorted(groups.items()):
        if "single" not in modes:
            continue
        others = [m for m in MODES if m in modes and m != "single"]
        print(f"{rev}, {prec}, {model}, round {rnd}: each span's median (us), single's and the others' difference")
        print()
        print("| span | single | " + " | ".join(others) + " |")
        print("|---|---:|" + "---:|" * len(others))
        for name, us in modes["single"].items():
            cells = [f"{modes[m][name] - us:+.1f}" if name in modes[m] else "—" for m in others]
            print(f"| {name} | {us:.1f} | " + " | ".join(cells) + " |")
        print()


def print_calls(traces):
    """Per run with all-reduces: calls a step, and the medians of a later call's span and of the gap before it."""
    print("| rev | model | round | mode | calls a step | later call (us) | gap before it (us) |")
    print("|---|---|---|---|---:|---:|---:|")
    for (rev, prec, model, rnd, mode), events in sorted(traces.items()):
        steps = {}
        for e in events:
            if e.get("ph") == "X" and e.get("pid") == 0 and e.get("tid") == 2:
                steps.setdefault(e["args"]["step"], []).append(e)
        durs, gaps = [], []
        for calls in steps.values():
            calls.sort(key=lambda e: e["args"]["call"])
            for a, b in zip(calls, calls[1:]):
                durs.append(b["dur"])
                gaps.append(b["ts"] - (a["ts"] + a["dur"]))
        if durs:
            n = statistics.median(len(c) for c in steps.values())
            print(f"| {rev} | {model} | {rnd} | {mode} | {n:g} | {statistics.median(durs):.3f} | {statistics.median(gaps):.3f} |")


def main(argv):
    args = argv[1:]
    view = args[0] if args and args[0] in ("--spans", "--calls") else ""
    dirs = args[1:] if view else args
    if not dirs or not all(os.path.isdir(d) for d in dirs):
        print("usage: gaps.py [--spans | --calls] OUT [OUT...] (folders of experiments/gpu-dp-loop/run.sh traces)",
              file=sys.stderr)
        return 2
    runs, traces = {}, {}
    for path in sorted(p for d in dirs for p in glob.glob(os.path.join(d, "*.json*"))):
        m = NAME.match(os.path.basename(path))
        if not m:
            continue
        key = (m["rev"], m["prec"], m["model"], m["round"], m["mode"])
        traces[key] = load(path)
        p = parts_of(traces[key])
        if p:
            runs[key] = p
    if not runs:
        print(f"gaps.py: no traces in {', '.join(dirs)}", file=sys.stderr)
        return 2
    if view == "--spans":
        print_spans(traces)
        return 0
    if view == "--calls":
        print_calls(traces)
        return 0
    print("| rev | model | round | mode | steps | " + " | ".join(f"{k} (us)" for k in PARTS) + " |")
    print("|---|---|---|---|---:|" + "---:|" * len(PARTS))
    for key in sorted(runs, key=lambda k: (k[0], k[1], k[2], k[3], MODES.index(k[4]) if k[4] in MODES else len(MODES))):
        p = runs[key]
        base = runs.get(key[:4] + ("single",))
        cells = []
        for k in PARTS:
            cell = f"{p[k]:.1f}"
            if base is not None and key[4] != "single":
                cell += f" ({p[k] - base[k]:+.1f})"
            cells.append(cell)
        print(f"| {key[0]} | {key[2]} | {key[3]} | {key[4]} | {p['n']} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
