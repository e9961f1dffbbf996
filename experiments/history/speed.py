#!/usr/bin/python3
"""speed.py — how fast `dpscale history` is on this machine: adding a 1,000-run results
file, and `changes` over 200 revisions x 50 series. A benchmark to run and report (the numbers go
to experiments/history/data/bench.txt with the machine's load beside them), not a timed test.

  /usr/bin/python3 experiments/history/speed.py [--bin build/bin/dpscale] [--out experiments/history/data]

The results files are sweep lines made from the committed CI baseline's (one line per mode,
.ci/baseline/ci-cpu.jsonl) with their repeat, run id and throughput set, so every row goes
through the C++ side as a real sweep's would: 1,000 runs are 250 rounds of single, naive,
interleaved and bucketed; the 200 revisions are one results file each, 17 sample counts
(`--samples` in each run's argv: 17 points per mode, so 51 data-parallel series) x 4 modes, each
data-parallel speedup 1.0-1.5 with 5% noise, and a 10% loss from revision 120 in 10 of them.
"""
import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BASELINE = ROOT / ".ci" / "baseline" / "ci-cpu.jsonl"
MODES = ("single", "naive", "interleaved", "bucketed")


def templates():
    out = {}
    for line in BASELINE.read_text().splitlines():
        j = json.loads(line)
        if j["status"] == "ok" and not j["system"]["state"].get("disturbed"):
            out.setdefault(j["mode"], j)
    return out


def line(t, repeat, samples, throughput, tag):
    j = json.loads(json.dumps(t))
    j["point"]["repeat"] = repeat
    argv = j["run"]["argv"]
    argv[argv.index("--samples") + 1] = str(samples)
    j["run"]["run_id"] = f"bench/{tag}/{j['mode']}-s{samples}-r{repeat}"
    j["throughput_samples_per_s"] = throughput
    j["avg_epoch_s"] = samples / throughput
    return json.dumps(j) + "\n"


def timed(cmd, **kw):
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    dt = time.perf_counter() - t0
    if r.returncode not in (0, 1):
        sys.exit(f"history_bench: {' '.join(map(str, cmd))}: {r.stderr.strip()}")
    return dt, r


def load():
    return open("/proc/loadavg").read().split()[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=str(ROOT / "build" / "bin" / "dpscale"))
    ap.add_argument("--out", default=str(ROOT / "experiments" / "history" / "data"))
    a = ap.parse_args()
    t = templates()
    rng = random.Random(1)
    report = [f"# dpscale history benchmark ({os.cpu_count()} CPUs; the load average is printed beside each step)", ""]
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        # 1. A 1,000-run file into a fresh store, five times.
        big = d / "runs-1000.jsonl"
        with open(big, "w") as f:
            for r in range(250):
                for mode in MODES:
                    f.write(line(t[mode], r, 8192, 8000.0 * (1.0 if mode == "single" else 1.3 * rng.uniform(0.95, 1.05)),
                                 "big"))
        times = []
        for i in range(5):
            db = d / f"fresh{i}.sqlite"
            dt, r = timed([a.bin, "history", "add", str(big), "--rev", "bench", "--rev-time", "2026-01-01T00:00:00Z",
                           "--db", str(db)])
            assert "1000 run(s) added" in r.stderr, r.stderr
            times.append(dt)
        report.append(f"add of a 1,000-run file to a fresh store: median {statistics.median(times):.2f} s of 5 "
                      f"(min {min(times):.2f}, max {max(times):.2f}; load {load()})")
        # 2. 200 revisions x 51 series.
        db = d / "h.sqlite"
        changed = set(rng.sample(range(17 * 3), 10))
        levels = {k: rng.uniform(1.0, 1.5) for k in range(17 * 3)}
        t0 = time.perf_counter()
        for rev in range(200):
            p = d / f"rev{rev}.jsonl"
            with open(p, "w") as f:
                for s in range(17):
                    samples = 1024 * (s + 1)
                    f.write(line(t["single"], 0, samples, 8000.0, f"r{rev}"))
                    for m, mode in enumerate(MODES[1:]):
                        k = 3 * s + m
                        speedup = levels[k] * math.exp(rng.gauss(0, 0.05)) * (0.9 if k in changed and rev >= 120 else 1)
                        f.write(line(t[mode], 0, samples, 8000.0 * speedup, f"r{rev}"))
            timed([a.bin, "history", "add", str(p), "--rev", f"rev{rev:03d}",
                   "--rev-time", f"2026-01-{1 + rev // 24:02d}T{rev % 24:02d}:00:00Z", "--db", str(db)])
        fill = time.perf_counter() - t0
        report.append(f"200 adds of 68 runs each (13,600 runs): {fill:.1f} s in all")
        dt, r = timed([a.bin, "history", "add", str(big), "--rev", "bench", "--rev-time", "2026-02-01T00:00:00Z", "--db", str(db)])
        report.append(f"add of the 1,000-run file to that store (13,600 runs held): {dt:.2f} s (load {load()})")
        times = []
        for _ in range(3):
            dt, r = timed([a.bin, "history", "changes", "--db", str(db), "--format", "json", "--min-effect", "5"])
            times.append(dt)
        out = json.loads(r.stdout)
        found = {c["point_key"] for c in out["changes"] if c["revision"] in ("rev119", "rev120", "rev121")}
        report.append(f"changes over 200 revisions x {out['series']} series (51 data-parallel with a speedup): "
                      f"median {statistics.median(times):.2f} s of 3 (min {min(times):.2f}, max {max(times):.2f}; "
                      f"load {load()}); {len(out['changes'])} change point(s), {len(found)} of the 10 injected "
                      "10% losses found at revision 120 ± 1")
        dt, r = timed([a.bin, "history", "html", str(d / "page"), "--db", str(db)])
        report.append(f"html of the same: {dt:.1f} s")
    text = "\n".join(report) + "\n"
    Path(a.out).mkdir(parents=True, exist_ok=True)
    (Path(a.out) / "bench.txt").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
