#!/usr/bin/env python3
"""summarize.py — the micro-benchmarks' headline numbers from their JSON (Google Benchmark's
--benchmark_out files that scripts/bench-micro.sh writes into BUILD/bench-micro/).

    python3 bench/summarize.py BUILD/bench-micro
    python3 bench/summarize.py BUILD/bench-micro --keep bench/results/micro

--keep DIR also writes a copy small enough to commit: every JSON file with only the median and
cv aggregates where a benchmark was repeated (the summary reads nothing else), one benchmark per
line, and the console log (console.txt) as it was. The summary of the copy is the summary of the
original.

Targets (the collective's, and the step's):
  GEMM       the largest training GEMM shapes reach >= 90% of the square-sgemm ceiling (each GEMM
             library against its own ceiling)
  kernels    element-wise passes on buffers larger than the LLC reach >= 70% of memcpy
  all-reduce ring busbw within 25% of the MPI library's (native) at 2 ranks, 64 MB
  step       gemm_time / step_time >= 0.85 (medium, batch 1024, one thread)
Where a benchmark ran with repetitions the median is used.
"""
import json
import os
import re
import sys


def load(path):
    """name -> row (the median aggregate when there are repetitions, else the single run)."""
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        data = json.load(f)
    rows = {}
    for b in data.get("benchmarks", []):
        # "gemm/.../m:1024/n:2048/k:784/manual_time" -> "gemm/.../m:1024/n:2048/k:784"; the
        # library also appends fixed settings ("/iterations:5", "/min_time:3.000"): drop them.
        name = re.sub(r"/(manual_time|real_time|iterations:\d+|min_time:[\d.]+)", "", b.get("run_name", b["name"]))
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "median":
                rows[name] = b
        elif name not in rows or rows[name].get("run_type") != "aggregate":
            rows[name] = b
    return rows


def verdict(ok):
    return "meets target" if ok else "MISSES target"


def main(out):
    print("# Summary (medians where repeated)")
    gemm = load(os.path.join(out, "gemm.json"))
    shapes = [(n, r) for n, r in gemm.items() if "pct_of_ceiling" in r]
    if shapes:
        def flops(name):
            m = re.search(r"m:(\d+)/n:(\d+)/k:(\d+)", name)
            return 2 * int(m[1]) * int(m[2]) * int(m[3]) if m else 0
        biggest = max(flops(n) for n, _ in shapes)
        top = [(n, r) for n, r in shapes if flops(n) == biggest]
        for n, r in gemm.items():
            if "/ceiling/" in n:
                print(f"GEMM ceiling (square sgemm), {n.split('/')[1]}: {r['GFLOPS']:.1f} GFLOP/s")
        worst = min(r["pct_of_ceiling"] for _, r in top)
        for n, r in top:
            print(f"  {n}: {r['GFLOPS']:.1f} GFLOP/s = {r['pct_of_ceiling']:.1f}% of ceiling")
        print(f"GEMM, largest training shapes: >= {worst:.1f}% of ceiling (target 90%): {verdict(worst >= 90)}")

    kernels = load(os.path.join(out, "kernels.json"))
    dram = [(n, r) for n, r in kernels.items() if "/dram/" in n and "pct_of_memcpy" in r]
    if dram:
        print("Element-wise passes, buffers larger than the LLC (vs memcpy of the same bytes, target 70%):")
        for n, r in sorted(dram):
            print(f"  {n.split('/')[1]:<14} {r['GBps']:7.2f} GB/s = {r['pct_of_memcpy']:6.1f}% of memcpy: "
                  f"{verdict(r['pct_of_memcpy'] >= 70)}")

    step = load(os.path.join(out, "step.json"))
    for n, r in step.items():
        print(f"Step {n}: step {r['step_ms']:.1f} ms, GEMMs alone {r['gemm_ms']:.1f} ms, "
              f"gemm/step = {r['gemm_over_step']:.3f} (target 0.85): {verdict(r['gemm_over_step'] >= 0.85)}")

    loop = load(os.path.join(out, "dp_loop.json"))
    for n, r in loop.items():
        ratios = "  ".join(f"{v} {r[v + '_speedup']:.3f}" for v in
                           ("naive", "naive_per_call", "naive_fused", "interleaved", "bucketed", "single_events")
                           if v + "_speedup" in r)
        print(f"DP loop at K = 1, {n}: single {r['single_ms']:.2f} ms/step; speedup against it: {ratios}")

    size = 64 << 20
    busbw = {}
    for k in (2, 3, 4):
        for n, r in load(os.path.join(out, f"allreduce_np{k}.json")).items():
            m = re.match(r"allreduce/(\w+)/np:(\d+)/bytes:(\d+)$", n)
            if m and int(m[3]) == size and "busbw_GBps" in r:
                busbw[(m[1], k)] = r["busbw_GBps"]
    if busbw:
        print("All-reduce busbw at 64 MB (GB/s):")
        for k in (2, 3, 4):
            line = "  ".join(f"{a} {busbw[(a, k)]:.2f}" for a in ("native", "ring", "star", "nccl") if (a, k) in busbw)
            if line:
                print(f"  K={k}: {line}")
        star_t = {k: size / (busbw[("star", k)] * k / (2 * (k - 1))) / 1e6 for k in (2, 3, 4) if ("star", k) in busbw}
        ring_t = {k: size / (busbw[("ring", k)] * k / (2 * (k - 1))) / 1e6 for k in (2, 3, 4) if ("ring", k) in busbw}
        if star_t:
            print("  time at 64 MB (ms): " + "  ".join(
                f"K={k}: ring {ring_t.get(k, float('nan')):.1f} star {star_t[k]:.1f}" for k in sorted(star_t)))
        if ("ring", 2) in busbw and ("native", 2) in busbw:
            ratio = busbw[("ring", 2)] / busbw[("native", 2)]
            print(f"Ring vs native busbw at K=2, 64 MB: {ratio:.2f}x (target >= 0.75x): {verdict(ratio >= 0.75)}")


def keep(out, dest):
    """The committed copy of a run (see the module's docstring)."""
    os.makedirs(dest, exist_ok=True)
    for name in sorted(os.listdir(out)):
        src = os.path.join(out, name)
        if name.endswith(".json"):
            with open(src) as f:
                data = json.load(f)
            rows = data.get("benchmarks", [])
            if any(b.get("run_type") == "aggregate" for b in rows):
                rows = [b for b in rows if b.get("run_type") == "aggregate" and b.get("aggregate_name") in ("median", "cv")]
            with open(os.path.join(dest, name), "w") as f:
                f.write('{"context": ' + json.dumps(data.get("context", {})) + ',\n "benchmarks": [\n')
                f.write(",\n".join(json.dumps(b) for b in rows))
                f.write("\n]}\n")
        elif name == "console.txt":
            with open(src) as f, open(os.path.join(dest, name), "w") as g:
                g.write(f.read())


def emulated(out):
    times = {}
    for k in (2, 3, 4):
        for n, r in load(os.path.join(out, f"allreduce_eth10_np{k}.json")).items():
            m = re.match(r"allreduce/(\w+)/np:(\d+)/bytes:(\d+)$", n)
            if m and int(m[3]) == 64 << 20:
                times[(m[1], k)] = r["real_time"] / 1e3 if r.get("time_unit") == "us" else r["real_time"]
    if times:
        print("Emulated 10 GbE link, 64 MB all-reduce time (ms):")
        for k in (2, 3, 4):
            if ("ring", k) in times and ("star", k) in times:
                print(f"  K={k}: ring {times[('ring', k)]:7.1f}  star {times[('star', k)]:7.1f}  "
                      f"(star/ring {times[('star', k)] / times[('ring', k)]:.2f}x)")


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) not in (1, 3) or (len(args) == 3 and args[1] != "--keep"):
        print("usage: summarize.py BUILD/bench-micro [--keep DIR]", file=sys.stderr)
        sys.exit(2)
    if not os.path.isdir(args[0]):
        print(f"summarize.py: {args[0]}: no such directory", file=sys.stderr)
        sys.exit(2)
    main(args[0])
    emulated(args[0])
    if len(args) == 3:
        keep(args[0], args[2])
