#!/usr/bin/env python3
"""host_probe.py — does a GEMM probe low on both sides of a run mark a run slower than its pair?

    python3 experiments/ab/host_probe.py RUNS.tar.xz [RUNS.tar.xz ...]

The measurement behind the disturbance rule's host clause (harness/results/machine_state.h,
DisturbanceLimits::host_probe_drop): a run is left out when the better of the probes before and
after it fell more than a limit below the usual probe while no other process was busy (others_cpus
<= 0.25). Each RUNS.tar.xz holds sessions/<name>/{a,b}.jsonl as `dpscale ab` leaves them. The usual
probe is the session's median probe over both builds' runs, as `dpscale ab` takes it. A run's
deviation is how much slower it ran than its pair (the other build's run of the point in the same
round), beyond the session's median ratio for its mode: 0 for a typical pair, -33% for a run a
third slower than its pair usually is. For each limit the table gives how many runs the clause
would leave out, and their deviations; then the runs off their pair by more than 10% and what
their probes read.
"""
import argparse
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pair_noise import sessions  # noqa: E402

OTHERS_LIMIT = 0.25


def runs(paths):
    """(session, mode, round, build, better probe / usual, others_cpus, deviation, tarball) per run."""
    out = []
    for path in paths:
        for name, sess in sorted(sessions(path).items()):
            probes = [p for h in "ab" for r in sess.get(h, [])
                      for p in (r["system"]["state"]["probe_before_gflops"], r["system"]["state"]["probe_after_gflops"])
                      if p > 0]
            if not probes:
                continue
            usual = statistics.median(probes)

            def key(r):
                return (r["point"]["mode"], r["point"]["world_size"], r["point"]["repeat"])
            a = {key(r): r for r in sess.get("a", [])}
            b = {key(r): r for r in sess.get("b", [])}
            both = sorted(set(a) & set(b))
            logs = {k: math.log(b[k]["throughput_samples_per_s"] / a[k]["throughput_samples_per_s"]) for k in both}
            med = {}
            for k in both:
                med.setdefault(k[0], []).append(logs[k])
            med = {m: statistics.median(v) for m, v in med.items()}
            for k in both:
                x = logs[k] - med[k[0]]  # > 0: B ran faster than its usual ratio to A
                for build, r, dev in (("A", a[k], -x), ("B", b[k], x)):
                    st = r["system"]["state"]
                    better = max(st["probe_before_gflops"], st["probe_after_gflops"]) / usual
                    out.append((name, k[0], k[2] + 1, build, better, st["others_cpus"], math.exp(dev) - 1, path))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tarballs", nargs="+")
    a = ap.parse_args()
    rs = runs(a.tarballs)
    if not rs:
        sys.exit("host_probe: no paired runs in " + ", ".join(a.tarballs))
    print(f"{len(rs)} runs in {len({(r[7], r[0]) for r in rs})} sessions\n")
    print("| better probe below the usual by more than | runs left out | their deviation from their pair |")
    print("|---:|---:|---|")
    for limit in (0.10, 0.15, 0.20, 0.25, 0.30):
        hit = [r for r in rs if r[4] < 1 - limit and r[5] <= OTHERS_LIMIT]
        devs = ", ".join(f"{100 * r[6]:+.1f}%" for r in sorted(hit, key=lambda r: r[6])) or "—"
        print(f"| {100 * limit:.0f}% | {len(hit)} | {devs} |")
    far = sorted((r for r in rs if r[6] < -0.10), key=lambda r: r[6])
    print("\n| run slower than its pair by > 10% | deviation | better probe / usual | others CPU |")
    print("|---|---:|---:|---:|")
    for r in far:
        print(f"| {r[0]} {r[1]} round {r[2]} {r[3]} | {100 * r[6]:+.1f}% | {r[4]:.2f} | {r[5]:.2f} |")


if __name__ == "__main__":
    main()
