#!/usr/bin/env python3
"""pair_noise.py — how far apart the two halves of `dpscale ab`'s pairs are, per condition.

    python3 experiments/ab/pair_noise.py RUNS.tar.xz [RUNS.tar.xz ...] [--conditions idle,busy1] [--summed]

Each RUNS.tar.xz holds sessions/<condition>-<i>/{a,b}.jsonl as experiments/ab/run.sh leaves
them. A pair is build A's and build B's run of one point in one round. Per condition and mode it
prints the pairs, the robust spread of their log throughput ratios (1.4826 x the median absolute
deviation from each session's median, in percent: the noise a paired test has to see through),
the pairs more than 10% off their session's median ratio (the outliers), and for the
data-parallel modes how far the two runs' link dilations were apart: the pairs whose dilations
differ by more than 10%, and the correlation of the dilation ratio with the throughput ratio (a
run given a larger dilation models a slower link, so a strong negative correlation says the
dilation moved the pair), and for the data-parallel modes the contention factor c of
T = W / (1 - c*s): the slope, through 0, of the pairs' log(T_B / T_A) on their run delay shares'
difference s_B - s_A, ± its standard error (docs/ab.md, "A busy machine": the rule that judges pairs which waited
alike assumes c <= 1; in the conditions where B is slower on purpose the slope mixes in the change).
The share s is the record's run_delay_share (the largest rank's run delay over the epoch); with
--summed it is every rank's run delay summed over the epoch, the share that would bound c by 1.
"""
import argparse
import json
import math
import statistics
import sys
import tarfile
from collections import defaultdict


def sessions(path):
    """{session name: {"a": [records], "b": [records]}} from one tarball."""
    out = defaultdict(dict)
    with tarfile.open(path) as t:
        for m in t.getmembers():
            parts = m.name.split("/")
            if len(parts) < 2 or parts[-1] not in ("a.jsonl", "b.jsonl") or not m.isfile():
                continue
            lines = t.extractfile(m).read().decode().splitlines()
            recs = []
            for line in lines:
                try:
                    r = json.loads(line)
                except ValueError:
                    continue
                if r.get("status") == "ok":
                    recs.append(r)
            out[parts[-2]][parts[-1][0]] = recs
    return out


def share(r, summed):
    """The run's run delay share: the record's (largest rank), or summed over the ranks."""
    if not summed:
        return r.get("run_delay_share")
    delays, epoch = r.get("per_rank_run_delay_s"), r.get("avg_epoch_s")
    if not delays or not epoch:
        return None
    return sum(delays) / epoch


def pairs(sess, summed=False):
    """(mode, log throughput ratio, log dilation ratio, share difference) for every point and round
    both builds ran."""
    def key(r):
        return (r["point"]["mode"], r["point"]["world_size"], r["point"]["repeat"])
    a = {key(r): r for r in sess.get("a", [])}
    b = {key(r): r for r in sess.get("b", [])}
    for k in sorted(set(a) & set(b)):
        ra, rb = a[k], b[k]
        sa, sb = share(ra, summed), share(rb, summed)
        yield (k[0], math.log(rb["throughput_samples_per_s"] / ra["throughput_samples_per_s"]),
               math.log(rb["link_dilation"] / ra["link_dilation"]),
               None if sa is None or sb is None else sb - sa)


def contention_factor(ds, thrs):
    """c of T = W / (1 - c*s): the least-squares slope, through 0, of log(T_B / T_A) on s_B - s_A,
    and its standard error (large where the shares hardly differ: there the data cannot say)."""
    sxx = sum(d * d for d in ds)
    if len(ds) < 3 or sxx == 0:
        return None
    ys = [-t for t in thrs]
    c = sum(d * y for d, y in zip(ds, ys)) / sxx
    rss = sum((y - c * d) ** 2 for d, y in zip(ds, ys))
    return c, math.sqrt(rss / (len(ds) - 1) / sxx)


def corr(xs, ys):
    if len(xs) < 3 or statistics.pstdev(xs) == 0 or statistics.pstdev(ys) == 0:
        return None
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    cov = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / len(xs)
    return cov / (statistics.pstdev(xs) * statistics.pstdev(ys))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tarballs", nargs="+")
    ap.add_argument("--conditions", default="", help="comma-separated conditions to show (default all)")
    ap.add_argument("--summed", action="store_true", help="c from the ranks' run delay summed, not the largest rank's")
    a = ap.parse_args()
    want = set(filter(None, a.conditions.split(",")))
    rows = defaultdict(lambda: {"dev": [], "far": 0, "n": 0, "dil": [], "thr": [], "dil_far": 0,
                                "ds": [], "ds_thr": []})
    for path in a.tarballs:
        for name, sess in sessions(path).items():
            cond = name.rsplit("-", 1)[0]
            if want and cond not in want:
                continue
            per_mode = defaultdict(list)
            for mode, thr, dil, ds in pairs(sess, a.summed):
                per_mode[mode].append((thr, dil, ds))
            for mode, ps in per_mode.items():
                med = statistics.median(t for t, _, _ in ps)
                row = rows[(cond, mode)]
                for thr, dil, ds in ps:
                    if ds is not None and mode != "single":
                        row["ds"].append(ds)
                        row["ds_thr"].append(thr)
                    row["dev"].append(abs(thr - med))
                    row["n"] += 1
                    row["far"] += abs(thr - med) > math.log(1.10)
                    if mode != "single":
                        row["dil"].append(dil)
                        row["thr"].append(thr)
                        row["dil_far"] += abs(dil) > math.log(1.10)
    if not rows:
        sys.exit("pair_noise: no pairs in " + ", ".join(a.tarballs))
    print("| condition | mode | pairs | robust spread of B/A | pairs > 10% off the median | dilations > 10% apart | "
          "correlation, dilation ratio vs throughput ratio | contention factor c |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for (cond, mode), r in sorted(rows.items()):
        spread = 1.4826 * statistics.median(r["dev"]) * 100
        c = corr(r["dil"], r["thr"])
        dil_far = f'{r["dil_far"]} of {len(r["dil"])}' if mode != "single" else "—"
        cs = "—" if mode == "single" else ("none (one dilation)" if c is None else f"{c:+.2f}")
        c = contention_factor(r["ds"], r["ds_thr"]) if mode != "single" else None
        cf = "—" if c is None else f"{c[0]:.2f} ± {c[1]:.2f}"
        print(f'| {cond} | {mode} | {r["n"]} | {spread:.1f}% | {r["far"]} | {dil_far} | {cs} | {cf} |')


if __name__ == "__main__":
    main()
