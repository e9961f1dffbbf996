#!/usr/bin/env python3
"""table.py — the table of the CPU GEMM libraries side by side (experiments/gemm-libraries/README.md),
from bench_gemm's Google Benchmark JSON (medians where repeated; bench/summarize.py's reading of
the file).

    python3 experiments/gemm-libraries/table.py experiments/gemm-libraries/data/gemm-libraries.json

Per model and K (the local batch batch/K of a K-rank run), each library's rate on the whole step:
the step's GEMM FLOPs over the time of its GEMMs, every distinct shape counted as often as the
step runs it (layers named together, "L1+L2", count twice) — the rate --gemm auto compares. Then
each library's square-sgemm ceiling. The fastest library of a row is marked.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
from summarize import load  # noqa: E402

NAME = re.compile(r"gemm/cpu-(\w+)/([^/]+)/K:(\d+)/([L0-9+]+)/\w+/[NT]{2}/m:(\d+)/n:(\d+)/k:(\d+)$")
CEILING = re.compile(r"gemm/cpu-(\w+)/ceiling/square/m:(\d+)/n:\d+/k:\d+$")


def ms(row):
    """The row's time per GEMM in milliseconds."""
    scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[row.get("time_unit", "ns")]
    return row["real_time"] * scale


def table(path):
    rows = load(path)
    flops, time, ceiling, libs, points = {}, {}, {}, [], []
    for name, r in rows.items():
        m = NAME.match(name)
        if m:
            lib, model, k = m[1], m[2], int(m[3])
            times = len(m[4].split("+"))
            f = 2.0 * int(m[5]) * int(m[6]) * int(m[7])
            key = (model, k, lib)
            flops[key] = flops.get(key, 0.0) + times * f
            time[key] = time.get(key, 0.0) + times * ms(r) / 1e3
            if lib not in libs:
                libs.append(lib)
            if (model, k) not in points:
                points.append((model, k))
            continue
        c = CEILING.match(name)
        if c:
            ceiling[c[1]] = r["GFLOPS"]
            if c[1] not in libs:
                libs.append(c[1])
    with open(path) as f:
        ctx = json.load(f).get("context", {})
    out = ["| model | K | local batch | " + " | ".join(f"{lib} (GFLOP/s)" for lib in libs) + " | fastest | over the next |",
           "|---|---:|---:|" + "---:|" * len(libs) + "---|---:|"]
    batch = int(ctx.get("batch", 1024))
    for model, k in points:
        rate = {lib: flops[(model, k, lib)] / time[(model, k, lib)] / 1e9 for lib in libs if (model, k, lib) in time}
        order = sorted(rate, key=rate.get, reverse=True)
        cells = [f"**{rate[lib]:.1f}**" if lib == order[0] else f"{rate[lib]:.1f}" if lib in rate else "—" for lib in libs]
        lead = f"{rate[order[0]] / rate[order[1]]:.2f}×" if len(order) > 1 else "—"
        out.append(f"| {model} | {k} | {batch // k} | " + " | ".join(cells) + f" | {order[0]} | {lead} |")
    out.append("| square sgemm (ceiling) | | | " + " | ".join(f"{ceiling[lib]:.1f}" if lib in ceiling else "—" for lib in libs)
               + " | | |")
    kernels = [f"{lib}: {ctx['gemm_' + lib]}" for lib in libs if "gemm_" + lib in ctx]
    return "\n".join(out) + ("\n\nKernels: " + "; ".join(kernels) + "." if kernels else "")


if __name__ == "__main__":
    if len(sys.argv) != 2 or not os.path.isfile(sys.argv[1]):
        print("usage: table.py BENCH_GEMM.json", file=sys.stderr)
        sys.exit(2)
    print(table(sys.argv[1]))
